import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import { canonicalPackage, TenantAppLists, type TenantAppListsV1 } from '@ormuz/risk';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';
import { POLICY_SCHEMA } from './migrations.js';

interface RiskAppsDB {
  risk_apps: { tenant: string; finance: string; not_finance: string; updated_at: Date };
}

/** How long a tenant's lists read from Postgres are reused, in ms: other replicas' changes are seen within this time. */
const CACHE_MS = 5_000;
const MAX_CACHED_TENANTS = 10_000;

/**
 * The only code that reads and writes tenants' finance app lists. A tenant without a row has none. Compiled lists are
 * cached briefly and reused while the stored lists are unchanged, so a lookup per screen action costs no compile.
 */
@Injectable()
export class RiskAppsRepository {
  private readonly db: Kysely<RiskAppsDB>;
  private readonly cache = new Map<string, { lists: TenantAppLists | undefined; key: string; at: number }>();

  constructor(@Inject(INFRA) infra: Infrastructure) {
    this.db = (infra.db as Kysely<RiskAppsDB>).withSchema(POLICY_SCHEMA);
  }

  /** The tenant's compiled lists, or `undefined` when it set none (or set both empty). */
  async forTenant(tenant: string): Promise<TenantAppLists | undefined> {
    const hit = this.cache.get(tenant);
    if (hit && Date.now() - hit.at < CACHE_MS) return hit.lists;
    const stored = await this.read(tenant);
    const key = JSON.stringify(stored);
    const lists =
      hit?.key === key
        ? hit.lists
        : stored.finance.length + stored.not_finance.length > 0
          ? new TenantAppLists(stored)
          : undefined;
    if (this.cache.size >= MAX_CACHED_TENANTS) this.cache.clear();
    this.cache.set(tenant, { lists, key, at: Date.now() });
    return lists;
  }

  /** The tenant's lists as stored (both empty when it set none). */
  async read(tenant: string): Promise<TenantAppListsV1> {
    const row = await this.db
      .selectFrom('risk_apps')
      .select(['finance', 'not_finance'])
      .where('tenant', '=', tenant)
      .executeTakeFirst();
    if (!row) return { finance: [], not_finance: [] };
    return { finance: row.finance as unknown as string[], not_finance: row.not_finance as unknown as string[] };
  }

  /** Replaces the tenant's lists with `lists` in canonical form (lower case, no `.*`, sorted, no repeats). */
  async save(tenant: string, lists: TenantAppListsV1): Promise<TenantAppListsV1> {
    const canonical = (l: readonly string[]) => [...new Set(l.map(canonicalPackage))].sort();
    const stored = { finance: canonical(lists.finance), not_finance: canonical(lists.not_finance) };
    const values = {
      tenant,
      finance: JSON.stringify(stored.finance),
      not_finance: JSON.stringify(stored.not_finance),
      updated_at: new Date(),
    };
    await this.db
      .insertInto('risk_apps')
      .values(values)
      .onConflict((oc) => oc.column('tenant').doUpdateSet(values))
      .execute();
    this.cache.delete(tenant);
    return stored;
  }
}
