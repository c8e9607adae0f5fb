import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import type { ApprovalViewV1 } from '@ormuz/contracts';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';
import { APPROVALS_SCHEMA } from './migrations.js';

export interface InboxRow {
  tenant: string;
  approval_id: string;
  call_id: string;
  tool: string;
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
  requests: { tenant: string; call_id: string; tool: string };
  inbox: InboxRow;
}

export function toView(row: InboxRow): ApprovalViewV1 {
  return {
    approval_id: row.approval_id,
    call_id: row.call_id,
    tenant: row.tenant,
    tool: row.tool,
    summary: row.summary,
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
    return this.db.selectFrom('inbox').selectAll().where('tenant', '=', tenant).where('approval_id', '=', approvalId).executeTakeFirst();
  }

  list(tenant: string, status: 'pending' | 'all'): Promise<InboxRow[]> {
    let q = this.db.selectFrom('inbox').selectAll().where('tenant', '=', tenant);
    if (status === 'pending') q = q.where('status', '=', 'pending');
    return q.orderBy('staged_at').limit(500).execute();
  }

  /** Pending approvals whose expiry has passed, across tenants. */
  due(now: Date, limit = 100): Promise<InboxRow[]> {
    return this.db.selectFrom('inbox').selectAll().where('status', '=', 'pending').where('expires_at', '<=', now).limit(limit).execute();
  }
}
