/**
 * Wire contracts of the approvals service (`<namespace>.cmd.approvals.<name>`, and the same bodies over HTTP).
 */
import { registerSchema } from '../schema-registry.js';
import { fragments, JsonValueSchema, List, Nullable, Struct, Type, type Static } from '../wire.js';

/** One staged call as the owner sees it. */
export const ApprovalViewV1 = Struct({
  approval_id: Type.String(),
  call_id: Type.String(),
  tenant: Type.String(),
  tool: Type.String(),
  /** The agent that asked; null for an approval staged before agents were recorded in the inbox. */
  agent_id: Nullable(Type.String()),
  /** The device the call acts on, or null. */
  device_id: Nullable(Type.String()),
  summary: Type.String(),
  /** The exact arguments the owner approves (the canonical payload, parsed); null where not recorded. */
  arguments: Nullable(JsonValueSchema),
  /** Why the call was judged high risk. */
  risk_reasons: List(Type.String()),
  staged_at: Type.String(),
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

/**
 * `approvals.approve` / `approvals.deny`; the answer is the decided {@link ApprovalViewV1}. Who decided is the
 * verified caller, never a field of the request: a body naming `decided_by` is refused.
 */
export const DecideApprovalRequestV1 = Struct({
  tenant: fragments.identifier,
  approval_id: fragments.identifier,
  /** Deny only: why. */
  reason: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
});
export type DecideApprovalRequestV1 = Static<typeof DecideApprovalRequestV1>;

export const APPROVALS_LIST_V1 = 'approvals.list.v1';
export const APPROVALS_DECIDE_V1 = 'approvals.decide.v1';

registerSchema(APPROVALS_LIST_V1, ListApprovalsRequestV1);
registerSchema(APPROVALS_DECIDE_V1, DecideApprovalRequestV1);
