import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';
import { erasableFields, type ErasableKind } from '../domain/archive-chain.js';
import type { AuditDB } from './audit.tables.js';
import { AUDIT_SCHEMA, AUDIT_WRITER_ROLE, ERASE_FUNCTION } from './migrations.js';

/** What one erasure removed. */
export interface Erased {
  readonly events: number;
  readonly calls: number;
}

/**
 * Removes erasable data of one tenant recorded before a moment: the erasable field of archived events (through the
 * schema owner's erase function, the only change the archive writer role may make to archived rows) and the payload,
 * result and error of call records. The chain keeps each erased field's hash, so it still verifies.
 */
@Injectable()
export class ArchiveEraser {
  private readonly db: Kysely<AuditDB>;

  constructor(@Inject(INFRA) infra: Infrastructure) {
    this.db = infra.db as Kysely<AuditDB>;
  }

  erase(tenant: string, before: Date, kinds: readonly ErasableKind[]): Promise<Erased> {
    return this.db.transaction().execute(async (trx) => {
      await sql`set local role ${sql.id(AUDIT_WRITER_ROLE)}`.execute(trx);
      const fields = erasableFields(kinds);
      const { rows } = await sql<{
        n: string;
      }>`select ${sql.id(AUDIT_SCHEMA, ERASE_FUNCTION)}(${tenant}, ${before}, ${sql.val(fields)}::text[]) as n`.execute(
        trx,
      );
      const t = trx.withSchema(AUDIT_SCHEMA);
      const now = new Date();
      let calls = 0;
      if (kinds.includes('payloads')) {
        const r = await t
          .updateTable('call_records')
          .set({ payload: null, payload_erased_at: now })
          .where('tenant', '=', tenant)
          .where('requested_at', '<', before)
          .where('payload_erased_at', 'is', null)
          .executeTakeFirst();
        calls += Number(r.numUpdatedRows);
      }
      if (kinds.includes('results')) {
        const r = await t
          .updateTable('call_records')
          .set({ result: null, error: null, result_erased_at: now })
          .where('tenant', '=', tenant)
          .where('finished_at', '<', before)
          .where('result_erased_at', 'is', null)
          .executeTakeFirst();
        calls += Number(r.numUpdatedRows);
      }
      return { events: Number(rows[0]?.n ?? 0), calls };
    });
  }
}
