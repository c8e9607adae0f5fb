/**
 * The state of one tool call, folded from its events. Plain JSON (times are RFC 3339 strings) because it is stored
 * as a snapshot beside the log; a change of shape bumps {@link TOOL_CALL_STATE_VERSION}.
 */
import type {
  CallExecutorV1,
  CallOriginV1,
  CallTargetV1,
  HighRiskCallVerdictV1,
  OutcomeUnknownCauseV1,
  CallVerdictV1,
} from '@ormuz/contracts';
import type { CallOutcome } from './tool-call.commands.js';

/** Version of the state's shape; snapshots of another version are ignored and the state is rebuilt from events. */
export const TOOL_CALL_STATE_VERSION = 1;

/** What was requested, fixed at submit. The payload itself stays in the requested event; its hash is enough here. */
export interface CallFacts {
  readonly call_id: string;
  readonly tool: string;
  readonly contract_version: string;
  readonly payload_sha256: string;
  readonly agent_id: string;
  readonly origin: CallOriginV1;
  readonly target: CallTargetV1;
}

/** A staged call's approval request and, once made, who decided it. */
export interface ApprovalRecord {
  readonly approval_id: string;
  readonly summary: string;
  /** RFC 3339; an approval at or after this instant is refused. */
  readonly expires_at: string;
  readonly verdict: HighRiskCallVerdictV1;
  /** Who approved or denied; `null` while pending or after it expired. */
  readonly decided_by: string | null;
}

/** The delivery of an authorised call to an executor. */
export interface DispatchRecord {
  readonly request_id: string;
  readonly executor: CallExecutorV1;
  /** RFC 3339. */
  readonly deadline: string;
}

/** The executor that won the start claim. */
export interface StartRecord {
  readonly executor_id: string;
  readonly boot_id: string;
}

/** Why the outcome became unknown. */
export interface UnknownRecord {
  readonly cause: OutcomeUnknownCauseV1;
  readonly detail: string;
}

/** Who sealed the call and why. */
export interface SealRecord {
  readonly sealed_by: string;
  readonly reason: string;
}

/** Statuses a call can be sealed from: every status before `started` that can still lead to a run. */
export type SealableStatus = 'requested' | 'staged' | 'approved' | 'authorized' | 'dispatched';

/** No event yet. */
export interface AbsentCall {
  readonly status: 'absent';
}
/** Recorded, awaiting the policy decision. */
export interface RequestedCall {
  readonly status: 'requested';
  readonly call: CallFacts;
}
/** Refused by policy; final. */
export interface RefusedCall {
  readonly status: 'refused';
  readonly call: CallFacts;
  readonly refusal: { readonly reason_code: string; readonly message: string };
}
/** Waiting for its owner. */
export interface StagedCall {
  readonly status: 'staged';
  readonly call: CallFacts;
  readonly approval: ApprovalRecord;
}
/** Approved; authorisation follows in the same append. */
export interface ApprovedCall {
  readonly status: 'approved';
  readonly call: CallFacts;
  readonly approval: ApprovalRecord;
}
/** Denied by its owner; final. */
export interface DeniedCall {
  readonly status: 'denied';
  readonly call: CallFacts;
  readonly approval: ApprovalRecord;
  readonly denial_reason: string | null;
}
/** Approval expired undecided; final. */
export interface ExpiredCall {
  readonly status: 'expired';
  readonly call: CallFacts;
  readonly approval: ApprovalRecord;
}
/** Allowed to run; `approval` is `null` for a low-risk call. */
export interface AuthorizedCall {
  readonly status: 'authorized';
  readonly call: CallFacts;
  readonly verdict: CallVerdictV1;
  readonly approval: ApprovalRecord | null;
}
/** Handed to an executor, not started. */
export interface DispatchedCall extends Omit<AuthorizedCall, 'status'> {
  readonly status: 'dispatched';
  readonly dispatch: DispatchRecord;
}
/** Claimed by an executor; the action may have happened from here on. */
export interface StartedCall extends Omit<DispatchedCall, 'status'> {
  readonly status: 'started';
  readonly start: StartRecord;
}
/** Started, outcome unknown; a late real outcome may still arrive. */
export interface OutcomeUnknownCall extends Omit<StartedCall, 'status'> {
  readonly status: 'outcome_unknown';
  readonly unknown: UnknownRecord;
}
/** Finished well; `unknown` keeps the earlier unknown mark when the outcome arrived late. */
export interface SucceededCall extends Omit<StartedCall, 'status'> {
  readonly status: 'succeeded';
  readonly outcome: Extract<CallOutcome, { kind: 'succeeded' }>;
  readonly unknown: UnknownRecord | null;
}
/** Finished with a failure reported by the executor. */
export interface FailedCall extends Omit<StartedCall, 'status'> {
  readonly status: 'failed';
  readonly outcome: Extract<CallOutcome, { kind: 'failed' }>;
  readonly unknown: UnknownRecord | null;
}
/** Sealed before it started; final. Keeps the approval and delivery it had, so late commands can be answered. */
export interface SealedCall {
  readonly status: 'sealed';
  readonly call: CallFacts;
  readonly sealed_from: SealableStatus;
  readonly approval: ApprovalRecord | null;
  readonly dispatch: DispatchRecord | null;
  readonly seal: SealRecord;
}

/** The state of one tool call, discriminated by `status`. */
export type ToolCallState =
  | AbsentCall
  | RequestedCall
  | RefusedCall
  | StagedCall
  | ApprovedCall
  | DeniedCall
  | ExpiredCall
  | AuthorizedCall
  | DispatchedCall
  | StartedCall
  | OutcomeUnknownCall
  | SucceededCall
  | FailedCall
  | SealedCall;

/** One of the call statuses. */
export type ToolCallStatus = ToolCallState['status'];

/** The state of `status`. */
export type ToolCallStateOf<S extends ToolCallStatus> = Extract<ToolCallState, { status: S }>;
