import type { Kysely } from 'kysely';
import { linkEvents, type ChainHead } from '../domain/archive-chain.js';

const PAGE = 1000;

/**
 * Links the rows archived before the chain existed (migration 0005): per tenant in (stream, sequence, index) order,
 * a page at a time, then records each tenant's head.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a migration sees the schema as it is at that point
export async function chainExistingEvents(db: Kysely<any>): Promise<void> {
  const heads = new Map<string, ChainHead>();
  for (;;) {
    const rows = await db
      .selectFrom('events')
      .select(['tenant', 'stream', 'seq', 'idx', 'id', 'type', 'subject', 'time', 'source'])
      .select(['correlation_id', 'causation_id', 'schema_version', 'data'])
      .where('chain_pos', 'is', null)
      .orderBy('tenant')
      .orderBy('stream')
      .orderBy('seq')
      .orderBy('idx')
      .limit(PAGE)
      .execute();
    if (rows.length === 0) break;
    for (const l of linkEvents(heads, rows)) {
      await db
        .updateTable('events')
        .set({
          chain_pos: l.chain_pos,
          data_sha256: l.data_sha256,
          erasable_field: l.erasable_field,
          erasable_sha256: l.erasable_sha256,
          prev_hash: l.prev_hash,
          row_hash: l.row_hash,
        })
        .where('stream', '=', l.stream)
        .where('seq', '=', l.seq)
        .where('idx', '=', l.idx)
        .execute();
    }
  }
  for (const [tenant, head] of heads) {
    await db.insertInto('chain_heads').values({ tenant, position: head.position, hash: head.hash }).execute();
  }
}
