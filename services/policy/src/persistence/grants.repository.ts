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

/** The only code that reads and writes grants. An agent without a row gets the configured default grant. */
@Injectable()
export class GrantsRepository {
  private readonly db: Kysely<GrantsDB>;
  constructor(
    @Inject(INFRA) infra: Infrastructure,
    @Inject(POLICY_CONFIG) private readonly config: PolicyConfig,
  ) {
    this.db = (infra.db as Kysely<GrantsDB>).withSchema(POLICY_SCHEMA);
  }

  async effective(tenant: string, agentId: string): Promise<Grant> {
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
  }
}
