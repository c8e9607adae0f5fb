import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import type { Grant } from '@ormuz/catalog';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';
import { POLICY_CONFIG, type PolicyConfig } from '../config.js';
import { POLICY_SCHEMA } from './migrations.js';

interface GrantsDB {
  grants: {
    tenant: string;
    agent_id: string;
    allow: string;
    deny: string;
    pins: string;
    updated_at: Date;
  };
}

/** How long a grant read from Postgres is reused, in ms: other replicas' changes are seen within this time. */
const GRANT_CACHE_MS = 5_000;

/**
 * The only code that reads and writes grants. An agent without a row gets the configured default grant. Grants are
 * cached briefly and returned as the same object, so the catalog's per-grant indexes are built once, not per call.
 */
@Injectable()
export class GrantsRepository {
  private readonly db: Kysely<GrantsDB>;
  private readonly cache = new Map<string, { grant: Grant; at: number }>();
  constructor(
    @Inject(INFRA) infra: Infrastructure,
    @Inject(POLICY_CONFIG) private readonly config: PolicyConfig,
  ) {
    this.db = (infra.db as Kysely<GrantsDB>).withSchema(POLICY_SCHEMA);
  }

  async effective(tenant: string, agentId: string): Promise<Grant> {
    const key = `${tenant}/${agentId}`;
    const hit = this.cache.get(key);
    if (hit && Date.now() - hit.at < GRANT_CACHE_MS) return hit.grant;
    const grant = await this.read(tenant, agentId);
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(key, { grant, at: Date.now() });
    return grant;
  }

  private async read(tenant: string, agentId: string): Promise<Grant> {
    const row = await this.db
      .selectFrom('grants')
      .select(['allow', 'deny', 'pins'])
      .where('tenant', '=', tenant)
      .where('agent_id', '=', agentId)
      .executeTakeFirst();
    if (!row) return { tenant, agent_id: agentId, allow: this.config.defaultGrant, deny: [] };
    return {
      tenant,
      agent_id: agentId,
      allow: row.allow as unknown as string[],
      deny: row.deny as unknown as string[],
      pins: row.pins as unknown as Record<string, number>,
    };
  }

  async save(grant: Grant): Promise<void> {
    const values = {
      tenant: grant.tenant,
      agent_id: grant.agent_id,
      allow: JSON.stringify(grant.allow),
      deny: JSON.stringify(grant.deny ?? []),
      pins: JSON.stringify(grant.pins ?? {}),
      updated_at: new Date(),
    };
    await this.db
      .insertInto('grants')
      .values(values)
      .onConflict((oc) => oc.columns(['tenant', 'agent_id']).doUpdateSet(values))
      .execute();
    this.cache.delete(`${grant.tenant}/${grant.agent_id}`);
  }
}
