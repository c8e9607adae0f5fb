import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import type { TenantDayLimitsV1, TenantLimitsV1 } from '@ormuz/contracts';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';
import { MODEL_LOOP_CONFIG, type ModelLoopConfig } from '../config.js';
import { MODEL_LOOP_SCHEMA } from './migrations.js';

const LIMITS = ['day_steps', 'day_tool_calls', 'day_tokens', 'day_cost_usd'] as const;
type LimitName = (typeof LIMITS)[number];

interface TenantLimitsDB {
  tenant_limits: {
    tenant: string;
    day_steps: string | number | null;
    day_tool_calls: string | number | null;
    day_tokens: string | number | null;
    day_cost_usd: number | null;
    updated_by: string;
    updated_at: Date;
  };
}

/** A change of a tenant's own limits: a number sets one, `null` removes it (the default applies), absent leaves it. */
export type TenantLimitsChange = Partial<Record<LimitName, number | null>>;

/**
 * The only code that reads and writes tenants' daily limits. Read at every claim, uncached, so a change reaches the
 * next model turn of every conversation on every replica.
 */
@Injectable()
export class TenantLimitsRepository {
  private readonly db: Kysely<TenantLimitsDB>;

  constructor(
    @Inject(INFRA) infra: Infrastructure,
    @Inject(MODEL_LOOP_CONFIG) private readonly config: ModelLoopConfig,
  ) {
    this.db = (infra.db as Kysely<TenantLimitsDB>).withSchema(MODEL_LOOP_SCHEMA);
  }

  /** The limits in force for the tenant: its own over the configured defaults. */
  async inForce(tenant: string): Promise<TenantDayLimitsV1> {
    return (await this.read(tenant)).limits;
  }

  /** The tenant's limits: in force, its own, the defaults, and who set its own. */
  async read(tenant: string): Promise<TenantLimitsV1> {
    const row = await this.db.selectFrom('tenant_limits').selectAll().where('tenant', '=', tenant).executeTakeFirst();
    const own = row ? limitsOf(row) : {};
    const defaults = this.config.tenantDayLimits;
    return {
      tenant,
      limits: { ...defaults, ...own },
      own,
      defaults,
      updated_by: row?.updated_by ?? null,
      updated_at: row?.updated_at.toISOString() ?? null,
    };
  }

  /** Applies `change` to the tenant's own limits; answers the limits as they now are. */
  async change(tenant: string, change: TenantLimitsChange, by: string): Promise<TenantLimitsV1> {
    const { own } = await this.read(tenant);
    const next: Record<LimitName, number | null> = {
      day_steps: null,
      day_tool_calls: null,
      day_tokens: null,
      day_cost_usd: null,
    };
    for (const name of LIMITS) {
      next[name] = change[name] !== undefined ? change[name] : (own[name] ?? null);
    }
    const values = { tenant, ...next, updated_by: by, updated_at: new Date() };
    await this.db
      .insertInto('tenant_limits')
      .values(values)
      .onConflict((oc) => oc.column('tenant').doUpdateSet(values))
      .execute();
    return this.read(tenant);
  }
}

function limitsOf(row: TenantLimitsDB['tenant_limits']): TenantDayLimitsV1 {
  const out: Record<string, number> = {};
  for (const name of LIMITS) {
    const v = row[name];
    if (v !== null) out[name] = Number(v);
  }
  return out as TenantDayLimitsV1;
}
