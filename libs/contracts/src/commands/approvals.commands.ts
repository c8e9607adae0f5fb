/**
 * Wire contracts of the approvals service (`<namespace>.cmd.approvals.<name>`, and the same bodies over HTTP).
 */
import { fragments, registerSchema } from '../schema-registry.js';

/** One staged call as the owner sees it. */
export interface ApprovalViewV1 {
  readonly approval_id: string;
  readonly call_id: string;
  readonly tenant: string;
  readonly tool: string;
  readonly summary: string;
  readonly payload_sha256: string;
  readonly contract_version: string;
  /** pending, approved, denied or expired. */
  readonly status: string;
  readonly expires_at: string;
  /** Null until decided. */
  readonly decided_by: string | null;
  readonly decided_at: string | null;
}

/** `approvals.list` */
export interface ListApprovalsRequestV1 {
  readonly tenant: string;
  /** Default `pending`. */
  readonly status?: 'pending' | 'all';
}

/** `approvals.approve` / `approvals.deny` */
export interface DecideApprovalRequestV1 {
  readonly tenant: string;
  readonly approval_id: string;
  /** Who decided, as shown in the audit trail. */
  readonly decided_by: string;
  /** Deny only: why. */
  readonly reason?: string;
}

export const APPROVALS_LIST_V1 = 'approvals.list.v1';
export const APPROVALS_DECIDE_V1 = 'approvals.decide.v1';

registerSchema(APPROVALS_LIST_V1, {
  type: 'object',
  additionalProperties: false,
  required: ['tenant'],
  properties: { tenant: fragments.identifier, status: { enum: ['pending', 'all'] } },
});
registerSchema(APPROVALS_DECIDE_V1, {
  type: 'object',
  additionalProperties: false,
  required: ['tenant', 'approval_id', 'decided_by'],
  properties: {
    tenant: fragments.identifier,
    approval_id: fragments.identifier,
    decided_by: { type: 'string', minLength: 1, maxLength: 200 },
    reason: { type: 'string', minLength: 1, maxLength: 1000 },
  },
});
