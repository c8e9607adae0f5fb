import { Inject, Injectable } from '@nestjs/common';
import type { Kysely, Selectable } from 'kysely';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';
import type { AuditDB, RetentionRulesTable } from './audit.tables.js';
import { AUDIT_SCHEMA } from './migrations.js';

export type RetentionRule = Selectable<RetentionRulesTable>;

/** Per-tenant retention rules. */
@Injectable()
export class RetentionRepository {
  private readonly db: Kysely<AuditDB>;

  constructor(@Inject(INFRA) infra: Infrastructure) {
    this.db = (infra.db as Kysely<AuditDB>).withSchema(AUDIT_SCHEMA);
  }

  find(tenant: string): Promise<RetentionRule | undefined> {
    return this.db.selectFrom('retention_rules').selectAll().where('tenant', '=', tenant).executeTakeFirst();
  }

  /** Sets the given kinds (a kind left undefined keeps its setting); returns the rule as it now is. */
  upsert(
    tenant: string,
    change: { payloads_days?: number | null; results_days?: number | null },
  ): Promise<RetentionRule> {
    const now = new Date();
    return this.db
      .insertInto('retention_rules')
      .values({
        tenant,
        payloads_days: change.payloads_days ?? null,
        results_days: change.results_days ?? null,
        updated_at: now,
      })
      .onConflict((oc) => oc.column('tenant').doUpdateSet({ ...change, updated_at: now }))
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /** Every rule that keeps some kind for a bounded time. */
  bounded(): Promise<RetentionRule[]> {
    return this.db
      .selectFrom('retention_rules')
      .selectAll()
      .where((eb) => eb.or([eb('payloads_days', 'is not', null), eb('results_days', 'is not', null)]))
      .execute();
  }
}
