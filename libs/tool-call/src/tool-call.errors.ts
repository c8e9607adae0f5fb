/**
 * Errors the tool-call decider raises when it refuses a command. Each has a stable `code` (see
 * {@link ToolCallErrorCode}) for transports to map in one place, and a message that tells the caller what to do next.
 * None carries an HTTP or transport status.
 */
import { OrmuzError } from '@ormuz/contracts';

/** Stable codes of the tool-call errors. */
export const ToolCallErrorCode = {
  CallNotFound: 'call_not_found',
  InvalidTransition: 'invalid_transition',
  InvalidCommand: 'invalid_command',
  InvalidCallOrigin: 'invalid_call_origin',
  PayloadConflict: 'payload_conflict',
  PayloadTooLarge: 'payload_too_large',
  ApprovalRequired: 'approval_required',
  ApprovalMismatch: 'approval_mismatch',
  ApprovalAlreadyDecided: 'approval_already_decided',
  ApprovalExpired: 'approval_expired',
  ApprovalNotYetExpired: 'approval_not_yet_expired',
  CallAlreadyStarted: 'call_already_started',
  CallSealed: 'call_sealed',
  RequestMismatch: 'request_mismatch',
  OutcomeConflict: 'outcome_conflict',
  UnexpectedEvent: 'unexpected_event',
} as const;

/** One of the {@link ToolCallErrorCode} values. */
export type ToolCallErrorCode = (typeof ToolCallErrorCode)[keyof typeof ToolCallErrorCode];

/** Base of every tool-call error; `callId` names the call concerned (`null` only when there is none yet). */
export abstract class ToolCallError extends OrmuzError {
  abstract override readonly code: ToolCallErrorCode;
  constructor(
    readonly callId: string | null,
    message: string,
  ) {
    super(message);
  }
}

/** A command named a call that has no events. */
export class CallNotFoundError extends ToolCallError {
  readonly code = ToolCallErrorCode.CallNotFound;
  constructor(callId: string) {
    super(callId, `No call ${callId} exists. Submit the call first, or check the call id.`);
  }
}

/** The command is well formed but not possible in the call's current status. */
export class InvalidTransitionError extends ToolCallError {
  readonly code = ToolCallErrorCode.InvalidTransition;
  constructor(
    callId: string,
    readonly status: string,
    readonly command: string,
    nextStep: string,
  ) {
    super(callId, `Call ${callId} is ${status.replaceAll('_', ' ')}, so ${command} is not possible now. ${nextStep}`);
  }
}

/** The command contradicts itself or the call (wrong call id, hash not matching the payload, unreadable time). */
export class InvalidCommandError extends ToolCallError {
  readonly code = ToolCallErrorCode.InvalidCommand;
  constructor(
    callId: string | null,
    readonly command: string,
    readonly problem: string,
  ) {
    super(
      callId,
      `${command}${callId ? ` for call ${callId}` : ''} was refused: ${problem}. Fix the command and send it again.`,
    );
  }
}

/** A call origin cannot yield a call id (bad conversation id, negative turn, unknown kind). */
export class InvalidCallOriginError extends ToolCallError {
  readonly code = ToolCallErrorCode.InvalidCallOrigin;
  constructor(readonly problem: string) {
    super(
      null,
      `A call id cannot be derived: ${problem}. Pass the conversation id, a turn and an index that are whole numbers from 0, or the operation id.`,
    );
  }
}

/**
 * What one call id identifies: one request of one agent on one target. A submit that differs from the recorded one
 * in any of these is another request, not a duplicate.
 */
export type SubmitIdentityField = 'agent' | 'device' | 'tool' | 'contract_version' | 'arguments' | 'origin';

/** One way a submit differs from the request recorded under its call id, with both values as shown to people. */
export interface SubmitDifference {
  readonly field: SubmitIdentityField;
  readonly recorded: string;
  readonly submitted: string;
}

const FIELD_WORDS: Record<SubmitIdentityField, string> = {
  agent: 'agent',
  device: 'device',
  tool: 'tool',
  contract_version: 'contract version',
  arguments: 'arguments hash (sha256)',
  origin: 'origin',
};

/**
 * The call id was already used for another request: another agent, device (or none), tool, contract version,
 * arguments or origin. Names the id and every difference (`differences`, never empty).
 */
export class PayloadConflictError extends ToolCallError {
  readonly code = ToolCallErrorCode.PayloadConflict;
  constructor(
    callId: string,
    readonly differences: readonly SubmitDifference[],
  ) {
    const listed = differences
      .map((d) => `the ${FIELD_WORDS[d.field]} was ${d.recorded}, now ${d.submitted}`)
      .join('; ');
    super(
      callId,
      `Call ${callId} was already submitted as another request (${listed}); one call id identifies one request of ` +
        `one agent on one target. Check call ${callId}'s status instead of resubmitting, and send a changed action ` +
        `as a new call (a new operation id).`,
    );
  }
}

/** The canonical arguments exceed the size a call may carry. */
export class PayloadTooLargeError extends ToolCallError {
  readonly code = ToolCallErrorCode.PayloadTooLarge;
  constructor(
    callId: string,
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(
      callId,
      `The arguments of call ${callId} are ${bytes} bytes; at most ${limit} are accepted. Send less data, for ` +
        `example a reference to the content instead of the content itself.`,
    );
  }
}

/** A high-risk verdict was offered for direct authorisation; it must be staged for the owner instead. */
export class ApprovalRequiredError extends ToolCallError {
  readonly code = ToolCallErrorCode.ApprovalRequired;
  constructor(callId: string) {
    super(callId, `Call ${callId} is high risk and cannot be authorised directly. Stage it for the owner's approval.`);
  }
}

/** An approval decision names another approval, other bytes or another contract version than the staged call. */
export class ApprovalMismatchError extends ToolCallError {
  readonly code = ToolCallErrorCode.ApprovalMismatch;
  constructor(
    callId: string,
    readonly approvalId: string,
    readonly mismatches: readonly string[],
  ) {
    super(
      callId,
      `Approval ${approvalId} does not match call ${callId}: ${mismatches.join('; ')}. An approval binds one approval ` +
        `id, one payload and one contract version; reload the call as it is now and decide on what it shows.`,
    );
  }
}

/**
 * The approval was already approved or denied by someone else (an approval is single use). Names who decided and,
 * once known, when (`decidedAt`, RFC 3339): the decider has no clock of record, so the handler that read the log adds
 * the time with {@link ApprovalAlreadyDecidedError.at}.
 */
export class ApprovalAlreadyDecidedError extends ToolCallError {
  readonly code = ToolCallErrorCode.ApprovalAlreadyDecided;
  constructor(
    callId: string,
    readonly approvalId: string,
    readonly decision: 'approved' | 'denied',
    readonly decidedBy: string,
    readonly decidedAt: string | null = null,
  ) {
    super(
      callId,
      `Approval ${approvalId} of call ${callId} was already ${decision} by ${decidedBy}` +
        `${decidedAt ? ` at ${decidedAt}` : ''}; an approval is used once, so your decision changed nothing. ` +
        `Check the call's status; if a different decision is wanted, the agent must submit a new call.`,
    );
  }

  /** The same refusal, saying when the decision was recorded. */
  at(decidedAt: string | null): ApprovalAlreadyDecidedError {
    return new ApprovalAlreadyDecidedError(this.callId!, this.approvalId, this.decision, this.decidedBy, decidedAt);
  }
}

/** The approval expired; it can no longer be decided. */
export class ApprovalExpiredError extends ToolCallError {
  readonly code = ToolCallErrorCode.ApprovalExpired;
  constructor(
    callId: string,
    readonly approvalId: string,
    readonly expiresAt: string,
  ) {
    super(
      callId,
      `Approval ${approvalId} of call ${callId} expired at ${expiresAt} and can no longer be approved. The call will ` +
        `not run; the agent must submit it again if the action is still wanted.`,
    );
  }
}

/** An expiry was requested before the approval's expiry time. */
export class ApprovalNotYetExpiredError extends ToolCallError {
  readonly code = ToolCallErrorCode.ApprovalNotYetExpired;
  constructor(
    callId: string,
    readonly approvalId: string,
    readonly expiresAt: string,
  ) {
    super(
      callId,
      `Approval ${approvalId} of call ${callId} is open until ${expiresAt}; expire it at or after that time.`,
    );
  }
}

/** The call has already started (or finished), so it can no longer be sealed, dispatched or claimed again. */
export class CallAlreadyStartedError extends ToolCallError {
  readonly code = ToolCallErrorCode.CallAlreadyStarted;
  constructor(
    callId: string,
    readonly attempted: 'seal' | 'dispatch' | 'claim_start',
    readonly executorId: string,
    readonly bootId: string,
  ) {
    const next =
      attempted === 'seal'
        ? `It can no longer be sealed; check its status, and if its effect must be undone, do that with a new call.`
        : `Do not run it: only the executor that won the start claim may, and a call runs at most once.`;
    super(callId, `Call ${callId} has already started on executor ${executorId} (boot ${bootId}). ${next}`);
  }
}

/** The call was sealed before it started; nothing may run it. */
export class SealedCallError extends ToolCallError {
  readonly code = ToolCallErrorCode.CallSealed;
  constructor(
    callId: string,
    readonly sealedBy: string,
    readonly reason: string,
  ) {
    super(
      callId,
      `Call ${callId} was sealed by ${sealedBy} (${reason}) and will not run. Submit a new call if the action is ` +
        `still wanted.`,
    );
  }
}

/** A start claim, outcome or unknown mark names a request that is not the call's current delivery. */
export class RequestMismatchError extends ToolCallError {
  readonly code = ToolCallErrorCode.RequestMismatch;
  constructor(
    callId: string,
    readonly requestId: string,
    readonly currentRequestId: string,
  ) {
    super(
      callId,
      `Request ${requestId} is not the current delivery of call ${callId} (that is ${currentRequestId}). Do not run ` +
        `it; drop the request.`,
    );
  }
}

/** A final outcome is already recorded and a different one was reported. */
export class OutcomeConflictError extends ToolCallError {
  readonly code = ToolCallErrorCode.OutcomeConflict;
  constructor(
    callId: string,
    readonly recorded: 'succeeded' | 'failed',
  ) {
    super(
      callId,
      `Call ${callId} already has a recorded outcome (${recorded}) and a different one cannot replace it. Do not ` +
        `retry; report the discrepancy to an operator.`,
    );
  }
}

/** An event cannot follow the state it was applied to: the call's log is inconsistent. Never a user error. */
export class UnexpectedEventError extends ToolCallError {
  readonly code = ToolCallErrorCode.UnexpectedEvent;
  constructor(
    callId: string | null,
    readonly status: string,
    readonly eventType: string,
  ) {
    super(
      callId,
      `Event ${eventType} cannot follow status ${status}${callId ? ` in call ${callId}` : ''}; the call's log is ` +
        `inconsistent. Stop processing this call and report it to an operator.`,
    );
  }
}

/** True when `err` is any {@link ToolCallError}. */
export const isToolCallError = (err: unknown): err is ToolCallError => err instanceof ToolCallError;
/** True when `err` is a {@link CallNotFoundError}. */
export const isCallNotFoundError = (err: unknown): err is CallNotFoundError => err instanceof CallNotFoundError;
/** True when `err` is an {@link InvalidTransitionError}. */
export const isInvalidTransitionError = (err: unknown): err is InvalidTransitionError =>
  err instanceof InvalidTransitionError;
/** True when `err` is an {@link InvalidCommandError}. */
export const isInvalidCommandError = (err: unknown): err is InvalidCommandError => err instanceof InvalidCommandError;
/** True when `err` is an {@link InvalidCallOriginError}. */
export const isInvalidCallOriginError = (err: unknown): err is InvalidCallOriginError =>
  err instanceof InvalidCallOriginError;
/** True when `err` is a {@link PayloadConflictError}. */
export const isPayloadConflictError = (err: unknown): err is PayloadConflictError =>
  err instanceof PayloadConflictError;
/** True when `err` is a {@link PayloadTooLargeError}. */
export const isPayloadTooLargeError = (err: unknown): err is PayloadTooLargeError =>
  err instanceof PayloadTooLargeError;
/** True when `err` is an {@link ApprovalRequiredError}. */
export const isApprovalRequiredError = (err: unknown): err is ApprovalRequiredError =>
  err instanceof ApprovalRequiredError;
/** True when `err` is an {@link ApprovalMismatchError}. */
export const isApprovalMismatchError = (err: unknown): err is ApprovalMismatchError =>
  err instanceof ApprovalMismatchError;
/** True when `err` is an {@link ApprovalAlreadyDecidedError}. */
export const isApprovalAlreadyDecidedError = (err: unknown): err is ApprovalAlreadyDecidedError =>
  err instanceof ApprovalAlreadyDecidedError;
/** True when `err` is an {@link ApprovalExpiredError}. */
export const isApprovalExpiredError = (err: unknown): err is ApprovalExpiredError =>
  err instanceof ApprovalExpiredError;
/** True when `err` is an {@link ApprovalNotYetExpiredError}. */
export const isApprovalNotYetExpiredError = (err: unknown): err is ApprovalNotYetExpiredError =>
  err instanceof ApprovalNotYetExpiredError;
/** True when `err` is a {@link CallAlreadyStartedError}. */
export const isCallAlreadyStartedError = (err: unknown): err is CallAlreadyStartedError =>
  err instanceof CallAlreadyStartedError;
/** True when `err` is a {@link SealedCallError}. */
export const isSealedCallError = (err: unknown): err is SealedCallError => err instanceof SealedCallError;
/** True when `err` is a {@link RequestMismatchError}. */
export const isRequestMismatchError = (err: unknown): err is RequestMismatchError =>
  err instanceof RequestMismatchError;
/** True when `err` is an {@link OutcomeConflictError}. */
export const isOutcomeConflictError = (err: unknown): err is OutcomeConflictError =>
  err instanceof OutcomeConflictError;
/** True when `err` is an {@link UnexpectedEventError}. */
export const isUnexpectedEventError = (err: unknown): err is UnexpectedEventError =>
  err instanceof UnexpectedEventError;
