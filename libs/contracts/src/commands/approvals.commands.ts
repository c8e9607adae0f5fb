/**
 * Wire contracts of the approvals service (`<namespace>.cmd.approvals.<name>`, and the same bodies over HTTP).
 */
import { registerSchema } from '../schema-registry.js';
import { fragments, List, Nullable, Struct, Type, type Static } from '../wire.js';

/** One staged call as the owner sees it. */
export const ApprovalViewV1 = Struct({
  approval_id: Type.String(),
  call_id: Type.String(),
  tenant: Type.String(),
  tool: Type.String(),
  summary: Type.String(),
  payload_sha256: Type.String(),
  contract_version: Type.String(),
  /** pending, approved, denied or expired. */
  status: Type.String(),
  expires_at: Type.String(),
  /** Null until decided. */
  decided_by: Nullable(Type.String()),
  decided_at: Nullable(Type.String()),
});
export type ApprovalViewV1 = Static<typeof ApprovalViewV1>;

/** `approvals.list`'s answer. */
export const ApprovalListV1 = Struct({ approvals: List(ApprovalViewV1) });
export type ApprovalListV1 = Static<typeof ApprovalListV1>;

/** `approvals.list` */
export const ListApprovalsRequestV1 = Struct({
  tenant: fragments.identifier,
  /** Default `pending`. */
  status: Type.Optional(Type.Enum(['pending', 'all'])),
});
export type ListApprovalsRequestV1 = Static<typeof ListApprovalsRequestV1>;

/** `approvals.approve` / `approvals.deny`; the answer is the decided {@link ApprovalViewV1}. */
export const DecideApprovalRequestV1 = Struct({
  tenant: fragments.identifier,
  approval_id: fragments.identifier,
  /** Who decided, as shown in the audit trail. */
  decided_by: Type.String({ minLength: 1, maxLength: 200 }),
  /** Deny only: why. */
  reason: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
});
export type DecideApprovalRequestV1 = Static<typeof DecideApprovalRequestV1>;

export const APPROVALS_LIST_V1 = 'approvals.list.v1';
export const APPROVALS_DECIDE_V1 = 'approvals.decide.v1';

registerSchema(APPROVALS_LIST_V1, ListApprovalsRequestV1);
registerSchema(APPROVALS_DECIDE_V1, DecideApprovalRequestV1);
