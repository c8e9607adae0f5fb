import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import type { TaintRuleV1 } from '@ormuz/contracts';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';
import { POLICY_SCHEMA } from './migrations.js';

interface TenantSettingsDB {
  tenant_settings: { tenant: string; taint_rule: string; updated_at: Date };
}

/** A tenant's policy settings; a tenant without a row has the defaults. */
export interface TenantSettings {
  readonly taint_rule: TaintRuleV1;
}

export const DEFAULT_TENANT_SETTINGS: TenantSettings = Object.freeze({ taint_rule: 'matching' });

/** How long settings read from Postgres are reused, in ms: other replicas' changes are seen within this time. */
const CACHE_MS = 5_000;
const MAX_CACHED_TENANTS = 10_000;

/** The only code that reads and writes tenants' policy settings. Read at every submit, so briefly cached. */
@Injectable()
export class TenantSettingsRepository {
  private readonly db: Kysely<TenantSettingsDB>;
  private readonly cache = new Map<string, { settings: TenantSettings; at: number }>();

  constructor(@Inject(INFRA) infra: Infrastructure) {
    this.db = (infra.db as Kysely<TenantSettingsDB>).withSchema(POLICY_SCHEMA);
  }

  /** The tenant's settings as stored, or the defaults; reused for up to 5 s. */
  async forTenant(tenant: string): Promise<TenantSettings> {
    const hit = this.cache.get(tenant);
    if (hit && Date.now() - hit.at < CACHE_MS) return hit.settings;
    const settings = await this.read(tenant);
    if (this.cache.size >= MAX_CACHED_TENANTS) this.cache.clear();
    this.cache.set(tenant, { settings, at: Date.now() });
    return settings;
  }

  /** The tenant's settings as stored now, or the defaults. */
  async read(tenant: string): Promise<TenantSettings> {
    const row = await this.db
      .selectFrom('tenant_settings')
      .select(['taint_rule'])
      .where('tenant', '=', tenant)
      .executeTakeFirst();
    return row ? { taint_rule: row.taint_rule as TaintRuleV1 } : DEFAULT_TENANT_SETTINGS;
  }

  /** Replaces the tenant's settings. */
  async save(tenant: string, settings: TenantSettings): Promise<TenantSettings> {
    const values = { tenant, taint_rule: settings.taint_rule, updated_at: new Date() };
    await this.db
      .insertInto('tenant_settings')
      .values(values)
      .onConflict((oc) => oc.column('tenant').doUpdateSet(values))
      .execute();
    this.cache.delete(tenant);
    return { taint_rule: settings.taint_rule };
  }
}
