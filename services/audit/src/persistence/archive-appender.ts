import { sql, type Kysely, type Transaction } from 'kysely';
import type { OrmuzEvent } from '@ormuz/contracts';
import type { AppliedEvent } from '@ormuz/event-log';
import { linkEvents, type ChainHead, type UnlinkedEvent } from '../domain/archive-chain.js';
import { StreamSequenceReusedError } from '../domain/errors.js';
import { NO_PARTIES, partiesNamedBy, withParties, type EventParties } from '../domain/event-parties.js';
import type { AuditDB } from './audit.tables.js';
import { AUDIT_SCHEMA, AUDIT_WRITER_ROLE } from './migrations.js';

/**
 * Appends events to the archive, each linked onto its tenant's hash chain, inside the projection's transaction.
 *
 * The transaction takes the archive writer role first (INSERT and SELECT on the archive, never UPDATE or DELETE), then
 * one lock shared by every archive projection: the contexts' projections commit their batches one at a time, so each
 * reads the chain heads the previous one committed and a tenant's chain order is the order of commits. A transaction
 * that dies (kill -9) leaves neither rows nor moved heads: the batch is redelivered and linked again.
 *
 * Idempotent on (stream, seq, idx): a redelivered event is not appended again; a different event at an archived place
 * is a {@link StreamSequenceReusedError}.
 */
export async function appendToArchive(
  trx: Transaction<AuditDB>,
  stream: string,
  items: readonly AppliedEvent[],
): Promise<void> {
  await sql`set local role ${sql.id(AUDIT_WRITER_ROLE)}`.execute(trx);
  await sql`select pg_advisory_xact_lock(hashtext(${`${AUDIT_SCHEMA}.events chain`}))`.execute(trx);
  const t = trx.withSchema(AUDIT_SCHEMA);
  const seqs = [...new Set(items.map((i) => i.seq))];
  const archived = await t
    .selectFrom('events')
    .select(['seq', 'idx', 'id'])
    .where('stream', '=', stream)
    .where('seq', 'in', seqs)
    .execute();
  const at = new Map(archived.map((r) => [`${r.seq}/${r.idx}`, r.id]));
  const fresh = items.filter(({ event, seq, index }) => {
    const id = at.get(`${seq}/${index}`);
    if (id !== undefined && id !== event.id) throw new StreamSequenceReusedError(stream, seq, id, event.id);
    return id === undefined;
  });
  if (fresh.length === 0) return;
  const tenants = [...new Set(fresh.map((i) => i.event.tenant))];
  const heads = new Map<string, ChainHead>(
    (await t.selectFrom('chain_heads').selectAll().where('tenant', 'in', tenants).execute()).map((h) => [
      h.tenant,
      { position: h.position, hash: h.hash },
    ]),
  );
  const linked = linkEvents(
    heads,
    fresh.map(({ event, seq, index }) => unlinked(stream, seq, index, event as OrmuzEvent)),
  );
  const parties = await partiesOfRows(t, stream, fresh);
  await t
    .insertInto('events')
    .values(linked.map((l, i) => ({ ...l, data: JSON.stringify(l.data), ...parties[i] })))
    .execute();
  await t
    .insertInto('chain_heads')
    .values(tenants.map((tenant) => ({ tenant, ...heads.get(tenant)! })))
    .onConflict((oc) =>
      oc
        .column('tenant')
        .doUpdateSet((eb) => ({ position: eb.ref('excluded.position'), hash: eb.ref('excluded.hash') })),
    )
    .execute();
}

/**
 * Each fresh event's row parties: its aggregate's agent and device (domain/event-parties.ts), from the aggregate's
 * rows archived before (one query on events_by_aggregate) and the events before it in this batch.
 */
async function partiesOfRows(
  t: Kysely<AuditDB>,
  stream: string,
  fresh: readonly AppliedEvent[],
): Promise<EventParties[]> {
  const key = (tenant: string, subject: string) => `${tenant}\u0000${subject}`;
  const known = new Map<string, EventParties>();
  const rows = await t
    .selectFrom('events')
    .distinctOn(['tenant', 'subject'])
    .select(['tenant', 'subject', 'agent_id', 'device_id'])
    .where('tenant', 'in', [...new Set(fresh.map((i) => i.event.tenant))])
    .where('stream', '=', stream)
    .where('subject', 'in', [...new Set(fresh.map((i) => i.event.subject))])
    .where((eb) => eb.or([eb('agent_id', 'is not', null), eb('device_id', 'is not', null)]))
    .orderBy('tenant')
    .orderBy('subject')
    .orderBy('seq')
    .orderBy('idx')
    .execute();
  for (const r of rows) known.set(key(r.tenant, r.subject), { agent_id: r.agent_id, device_id: r.device_id });
  return fresh.map(({ event }) => {
    const k = key(event.tenant, event.subject);
    const parties = withParties(known.get(k) ?? NO_PARTIES, partiesNamedBy(event.data));
    known.set(k, parties);
    return parties;
  });
}

function unlinked(stream: string, seq: number, idx: number, event: OrmuzEvent): UnlinkedEvent {
  return {
    tenant: event.tenant,
    stream,
    seq,
    idx,
    id: event.id,
    type: event.type,
    subject: event.subject,
    // Stored as timestamptz and read back as a Date (milliseconds): the link hashes what a reader will see.
    time: new Date(event.time),
    source: event.source,
    correlation_id: event.correlationid,
    causation_id: event.causationid,
    schema_version: event.schemaversion,
    data: event.data,
  };
}
