/**
 * Commands to the tool-call decider: imperative, discriminated by `type`, carrying only plain JSON (times are
 * RFC 3339 strings, as in the events they produce). Every command names its call so a handler that loaded the wrong
 * aggregate is caught.
 */
import type {
  CallOutcomeV1,
  CallExecutorV1,
  CallRequestedV1,
  HighRiskCallVerdictV1,
  OutcomeUnknownCauseV1,
  CallVerdictV1,
} from '@ormuz/contracts';

/** A command of type `T` with data `D`. */
export interface ToolCallCommandOf<T extends string, D> {
  readonly type: T;
  readonly data: D;
}

/**
 * Record a tool request with its identity and canonical bytes. `payload_sha256` must be the SHA-256 of `payload`'s
 * UTF-8 bytes, which must not exceed `MAX_TOOL_CALL_PAYLOAD_BYTES`.
 *
 * With `decision` (the gate's, already known when the request arrives) the request and the decision are decided
 * together: `requested` and then `refused`, `staged` or `authorized`, appended as one message, so no call is ever left
 * recorded but undecided. Without it the call stays `requested` until a {@link RefuseCall}, {@link StageCall} or
 * {@link AuthorizeCall}.
 */
export type SubmitCall = ToolCallCommandOf<'SubmitCall', CallRequestedV1 & { readonly decision?: SubmitDecision }>;

/** The gate's decision on a submitted call, as {@link SubmitCall} carries it: the data of the command it stands for. */
export type SubmitDecision =
  | ({ readonly kind: 'refuse' } & Omit<RefuseCall['data'], 'call_id'>)
  | ({ readonly kind: 'stage' } & Omit<StageCall['data'], 'call_id'>)
  | ({ readonly kind: 'authorize' } & Omit<AuthorizeCall['data'], 'call_id'>);

/** Policy refuses the call; `message` is the sentence the model gets. */
export type RefuseCall = ToolCallCommandOf<
  'RefuseCall',
  { readonly call_id: string; readonly reason_code: string; readonly message: string }
>;

/**
 * Policy stages a high-risk call for its owner. The approval binds the payload hash and contract version recorded at
 * submit; `expires_at` (RFC 3339) must lie after the decision time.
 */
export type StageCall = ToolCallCommandOf<
  'StageCall',
  {
    readonly call_id: string;
    readonly approval_id: string;
    readonly summary: string;
    readonly expires_at: string;
    readonly verdict: HighRiskCallVerdictV1;
  }
>;

/** The owner approves; the hash and contract version are those the owner was shown. */
export type ApproveCall = ToolCallCommandOf<
  'ApproveCall',
  {
    readonly call_id: string;
    readonly approval_id: string;
    readonly decided_by: string;
    readonly payload_sha256: string;
    readonly contract_version: string;
  }
>;

/** The owner denies; `reason` is `null` when none was given. */
export type DenyCall = ToolCallCommandOf<
  'DenyCall',
  {
    readonly call_id: string;
    readonly approval_id: string;
    readonly decided_by: string;
    readonly reason: string | null;
  }
>;

/** The approval's timer fired. */
export type ExpireApproval = ToolCallCommandOf<
  'ExpireApproval',
  { readonly call_id: string; readonly approval_id: string }
>;

/** A low-risk verdict, the only kind that authorises without an owner. */
export interface LowRiskVerdict extends CallVerdictV1 {
  readonly level: 'low';
}

/** Policy lets a low-risk call run without approval. */
export type AuthorizeCall = ToolCallCommandOf<
  'AuthorizeCall',
  { readonly call_id: string; readonly verdict: LowRiskVerdict }
>;

/**
 * Hand an authorised call to an executor as request `request_id`, due by `deadline` (RFC 3339). Every executor names
 * the request by the call id (`request_id = call_id`): a call is dispatched at most once, to one executor, so its one
 * request needs no id of its own (decision 0013). The decider takes whatever id was recorded, as older events have it.
 */
export type DispatchCall = ToolCallCommandOf<
  'DispatchCall',
  {
    readonly call_id: string;
    readonly request_id: string;
    readonly executor: CallExecutorV1;
    readonly deadline: string;
  }
>;

/** Seal a call that has not started so that no delivery runs it. */
export type SealCall = ToolCallCommandOf<
  'SealCall',
  { readonly call_id: string; readonly sealed_by: string; readonly reason: string }
>;

/** An executor claims the start of request `request_id`. It may run the action only once this claim is appended. */
export type ClaimStart = ToolCallCommandOf<
  'ClaimStart',
  { readonly call_id: string; readonly request_id: string; readonly executor_id: string; readonly boot_id: string }
>;

/** What an executor reported. */
export type CallOutcome = CallOutcomeV1;

/** An executor reports the real outcome of request `request_id`. */
export type RecordOutcome = ToolCallCommandOf<
  'RecordOutcome',
  { readonly call_id: string; readonly request_id: string; readonly outcome: CallOutcome }
>;

/** The runtime lost sight of a started request: a timeout, a lost connection, a reboot or a missing status. */
export type MarkOutcomeUnknown = ToolCallCommandOf<
  'MarkOutcomeUnknown',
  {
    readonly call_id: string;
    readonly request_id: string;
    readonly cause: OutcomeUnknownCauseV1;
    /** What was observed; at most 4096 characters. */
    readonly detail: string;
  }
>;

/** Every command the tool-call decider accepts. */
export type ToolCallCommand =
  | SubmitCall
  | RefuseCall
  | StageCall
  | ApproveCall
  | DenyCall
  | ExpireApproval
  | AuthorizeCall
  | DispatchCall
  | SealCall
  | ClaimStart
  | RecordOutcome
  | MarkOutcomeUnknown;

/**
 * The command a submit's decision stands for: how a call already `requested` is decided (the decider decides a submit
 * that carries it the same way, and a call an older version recorded alone is decided with it).
 */
export function decisionCommand(callId: string, decision: SubmitDecision): RefuseCall | StageCall | AuthorizeCall {
  switch (decision.kind) {
    case 'refuse':
      return {
        type: 'RefuseCall',
        data: { call_id: callId, reason_code: decision.reason_code, message: decision.message },
      };
    case 'stage':
      return {
        type: 'StageCall',
        data: {
          call_id: callId,
          approval_id: decision.approval_id,
          summary: decision.summary,
          expires_at: decision.expires_at,
          verdict: decision.verdict,
        },
      };
    case 'authorize':
      return { type: 'AuthorizeCall', data: { call_id: callId, verdict: decision.verdict } };
  }
}
