import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import type { AgentModelV1, ModelSettingsV1 } from '@ormuz/contracts';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';
import { MODEL_LOOP_SCHEMA } from './migrations.js';

interface AgentModelsDB {
  agent_models: {
    tenant: string;
    agent_id: string;
    model: string;
    settings: string;
    updated_by: string;
    updated_at: Date;
  };
}

type Row = Omit<AgentModelsDB['agent_models'], 'settings'> & { settings: unknown };

/** The only code that reads and writes agents' model configuration. Rows hold where a key is, never a key. */
@Injectable()
export class AgentModelsRepository {
  private readonly db: Kysely<AgentModelsDB>;

  constructor(@Inject(INFRA) infra: Infrastructure) {
    this.db = (infra.db as Kysely<AgentModelsDB>).withSchema(MODEL_LOOP_SCHEMA);
  }

  async find(tenant: string, agentId: string): Promise<AgentModelV1 | undefined> {
    const row = await this.db
      .selectFrom('agent_models')
      .selectAll()
      .where('tenant', '=', tenant)
      .where('agent_id', '=', agentId)
      .executeTakeFirst();
    return row && view(row);
  }

  async list(tenant: string): Promise<AgentModelV1[]> {
    const rows = await this.db
      .selectFrom('agent_models')
      .selectAll()
      .where('tenant', '=', tenant)
      .orderBy('agent_id')
      .execute();
    return rows.map(view);
  }

  /** Replaces the agent's configuration; answers it as stored. */
  async save(config: Omit<AgentModelV1, 'updated_at'>): Promise<AgentModelV1> {
    const values = {
      tenant: config.tenant,
      agent_id: config.agent_id,
      model: config.model,
      settings: JSON.stringify(config.settings),
      updated_by: config.updated_by,
      updated_at: new Date(),
    };
    const row = await this.db
      .insertInto('agent_models')
      .values(values)
      .onConflict((oc) => oc.columns(['tenant', 'agent_id']).doUpdateSet(values))
      .returningAll()
      .executeTakeFirstOrThrow();
    return view(row);
  }
}

function view(row: Row): AgentModelV1 {
  return {
    tenant: row.tenant,
    agent_id: row.agent_id,
    model: row.model,
    settings: row.settings as ModelSettingsV1,
    updated_by: row.updated_by,
    updated_at: row.updated_at.toISOString(),
  };
}
