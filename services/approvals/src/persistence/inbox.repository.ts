import { Inject, Injectable } from '@nestjs/common';
import { sql, type ColumnType, type Kysely } from 'kysely';
import type { ApprovalViewV1 } from '@ormuz/contracts';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';
import { APPROVALS_SCHEMA } from './migrations.js';

export interface InboxRow {
  tenant: string;
  approval_id: string;
  call_id: string;
  tool: string;
  agent_id: string | null;
  device_id: string | null;
  /** Canonical JSON of the arguments. */
  payload: string | null;
  risk_reasons: string[];
  summary: string;
  payload_sha256: string;
  contract_version: string;
  status: string;
  expires_at: Date;
  staged_at: Date;
  decided_by: string | null;
  decided_at: Date | null;
}

export interface ApprovalsDB {
  requests: {
    tenant: string;
    call_id: string;
    tool: string;
    agent_id: string | null;
    device_id: string | null;
    payload: string | null;
  };
  /** `risk_reasons` is jsonb: written as JSON text, read as an array. */
  inbox: Omit<InboxRow, 'risk_reasons'> & { risk_reasons: ColumnType<string[], string, string> };
}

export function toView(row: InboxRow): ApprovalViewV1 {
  return {
    approval_id: row.approval_id,
    call_id: row.call_id,
    tenant: row.tenant,
    tool: row.tool,
    agent_id: row.agent_id,
    device_id: row.device_id,
    summary: row.summary,
    arguments: row.payload === null ? null : (JSON.parse(row.payload) as ApprovalViewV1['arguments']),
    risk_reasons: row.risk_reasons,
    staged_at: row.staged_at.toISOString(),
    payload_sha256: row.payload_sha256,
    contract_version: row.contract_version,
    status: row.status,
    expires_at: row.expires_at.toISOString(),
    decided_by: row.decided_by,
    decided_at: row.decided_at?.toISOString() ?? null,
  };
}

/** The only code that reads the inbox table. Every query is scoped to one tenant. */
@Injectable()
export class InboxRepository {
  private readonly db: Kysely<ApprovalsDB>;
  constructor(@Inject(INFRA) infra: Infrastructure) {
    this.db = (infra.db as Kysely<ApprovalsDB>).withSchema(APPROVALS_SCHEMA);
  }

  find(tenant: string, approvalId: string): Promise<InboxRow | undefined> {
    return this.db
      .selectFrom('inbox')
      .selectAll()
      .where('tenant', '=', tenant)
      .where('approval_id', '=', approvalId)
      .executeTakeFirst();
  }

  /** A tenant's approvals; only those of `agents` when given (an owner who decides for named agents). */
  list(tenant: string, status: 'pending' | 'all', agents?: readonly string[]): Promise<InboxRow[]> {
    let q = this.db.selectFrom('inbox').selectAll().where('tenant', '=', tenant);
    if (status === 'pending') q = q.where('status', '=', 'pending');
    if (agents) q = agents.length === 0 ? q.where(sql<boolean>`false`) : q.where('agent_id', 'in', agents);
    return q.orderBy('staged_at').limit(500).execute();
  }

  /** A tenant's closed approvals (decided, expired, sealed), the most recently closed first: the console's history. */
  recent(tenant: string, agents: readonly string[] | undefined, limit: number): Promise<InboxRow[]> {
    let q = this.db.selectFrom('inbox').selectAll().where('tenant', '=', tenant).where('status', '<>', 'pending');
    if (agents) q = agents.length === 0 ? q.where(sql<boolean>`false`) : q.where('agent_id', 'in', agents);
    return q.orderBy('decided_at', 'desc').orderBy('staged_at', 'desc').limit(limit).execute();
  }

  /** How many approvals wait for their owner, across tenants, and since when the oldest has (null when none). */
  async pendingSummary(): Promise<{ count: number; oldestStagedAt: Date | null }> {
    const row = await this.db
      .selectFrom('inbox')
      .select((eb) => [eb.fn.countAll<string>().as('count'), eb.fn.min('staged_at').as('oldest')])
      .where('status', '=', 'pending')
      .executeTakeFirstOrThrow();
    return { count: Number(row.count), oldestStagedAt: row.oldest ? new Date(row.oldest) : null };
  }

  /** Pending approvals whose expiry has passed, across tenants. */
  due(now: Date, limit = 100): Promise<InboxRow[]> {
    return this.db
      .selectFrom('inbox')
      .selectAll()
      .where('status', '=', 'pending')
      .where('expires_at', '<=', now)
      .limit(limit)
      .execute();
  }
}
