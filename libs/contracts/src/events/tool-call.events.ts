/**
 * Tool-call lifecycle events (`ormuz.toolcall.*.v1`): the wire contract of the `calls` context, owned by `policy`.
 *
 * Every field is snake_case, every field is required, and a value that may be missing is `null`, never omitted or
 * defaulted. Each event's data schema (JSON Schema 2020-12, `additionalProperties: false`) is registered under the
 * event type when this module loads, so `assertValid(type, data)` and `assertValidEvent(event)` check it.
 *
 * Lifecycle: requested → refused | staged | authorized; staged → approved → authorized | denied | expired;
 * authorized → dispatched → started → succeeded | failed | outcome_unknown; outcome_unknown → succeeded | failed
 * (a late real outcome); requested … dispatched → sealed.
 */
import type { EventDraft } from '../envelope.js';
import { registerSchema } from '../schema-registry.js';
import { fragments, JsonValueSchema, List, Nullable, OneOf, Struct, Type, type Static, type TSchema } from '../wire.js';

/** Event types of the tool-call lifecycle. Past tense, versioned; a new data shape gets a new `.vN` type. */
export const ToolCallEventType = {
  Requested: 'ormuz.toolcall.requested.v1',
  Refused: 'ormuz.toolcall.refused.v1',
  Staged: 'ormuz.toolcall.staged.v1',
  Approved: 'ormuz.toolcall.approved.v1',
  Denied: 'ormuz.toolcall.denied.v1',
  Expired: 'ormuz.toolcall.expired.v1',
  Authorized: 'ormuz.toolcall.authorized.v1',
  Dispatched: 'ormuz.toolcall.dispatched.v1',
  Started: 'ormuz.toolcall.started.v1',
  Succeeded: 'ormuz.toolcall.succeeded.v1',
  Failed: 'ormuz.toolcall.failed.v1',
  Sealed: 'ormuz.toolcall.sealed.v1',
  OutcomeUnknown: 'ormuz.toolcall.outcome_unknown.v1',
} as const;

/** One of the {@link ToolCallEventType} values. */
export type ToolCallEventType = (typeof ToolCallEventType)[keyof typeof ToolCallEventType];

/** Every tool-call event type, in lifecycle order. */
export const TOOL_CALL_EVENT_TYPES: readonly ToolCallEventType[] = Object.freeze(Object.values(ToolCallEventType));

/** Largest canonical payload a call may carry: 256 KiB of UTF-8 bytes (the schema can only bound characters). */
export const MAX_TOOL_CALL_PAYLOAD_BYTES = 256 * 1024;

// ---------------------------------------------------------------------------------------------------------------
// Fields
// ---------------------------------------------------------------------------------------------------------------

const id = fragments.identifier;
const sha256 = fragments.sha256;
const time = fragments.time;
const text = fragments.nonEmptyText;
/** Who decided or sealed: a person or service as shown in the audit trail (an email address is fine). */
const actor = Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\u0000-\\u001f\\u007f]+$' });
// The catalog owns the exact naming rules; this only keeps the `<extension>.<snake_case>` shape.
const toolName = Type.String({ maxLength: 128, pattern: '^[a-z][a-z0-9_-]*\\.[a-z][a-z0-9_]*$' });
const contractVersion = Type.String({ minLength: 1, maxLength: 128 });
const snakeCode = Type.String({ maxLength: 64, pattern: '^[a-z][a-z0-9]*(_[a-z0-9]+)*$' });
const reasons = List(Type.String({ minLength: 1, maxLength: 512 }), { maxItems: 32 });

// ---------------------------------------------------------------------------------------------------------------
// Shared shapes
// ---------------------------------------------------------------------------------------------------------------

/**
 * {@link CallOriginV1} with upper bounds on `turn` and `index` (a command may bound what the event never did).
 */
export function callOriginSchema(bounds: { readonly maxTurn?: number; readonly maxIndex?: number } = {}) {
  const upTo = (maximum: number | undefined) => (maximum === undefined ? {} : { maximum });
  return OneOf([
    Struct({
      kind: Type.Literal('conversation'),
      conversation_id: id,
      /** 0-based model turn within the conversation. */
      turn: Type.Integer({ minimum: 0, ...upTo(bounds.maxTurn) }),
      /** 0-based position of the tool request within that turn. */
      index: Type.Integer({ minimum: 0, ...upTo(bounds.maxIndex) }),
    }),
    Struct({ kind: Type.Literal('operation'), operation_id: id }),
  ]);
}

/**
 * Where a call came from; the call id is derived from it (never from the model).
 * `conversation`: the model's `index`-th tool request (0-based) in model turn `turn` (0-based) of a conversation.
 * `operation`: an API caller's own idempotency key for a direct call.
 */
export const CallOriginV1 = callOriginSchema();
export type CallOriginV1 = Static<typeof CallOriginV1>;

/** The device a call is aimed at, or `null` for calls with no device target. */
export const CallTargetV1 = Nullable(Struct({ device_id: id }));
export type CallTargetV1 = Static<typeof CallTargetV1>;

/**
 * What a screen action's risk was judged on, stamped into its verdict so the device can check it is still true.
 * `target_text` is the visible text of the element the action acts on (`''` for an element without text), or `null`
 * when it acts on no element (a swipe, typing into the focused field, a key with no element behind it).
 * Shared by the tool-call events and the device protocol's submit frame.
 */
export const JudgedTargetV1 = Struct({
  /** The app that was in front (an Android package name). */
  foreground_package: Type.String({ minLength: 1, maxLength: 255 }),
  /** At most 2000 characters. */
  target_text: Type.Unsafe<string | null>({ type: ['string', 'null'], maxLength: 2000 }),
  /**
   * Where the element and its text came from: the device's latest observation on the log (`observation`), or the
   * call's own `target_text` argument (`arguments`), which the device checks just the same.
   */
  source: Type.Enum(['observation', 'arguments']),
});
export type JudgedTargetV1 = Static<typeof JudgedTargetV1>;

/** JSON Schema of {@link JudgedTargetV1}, shared by the tool-call events and the device protocol's submit frame. */
export const JUDGED_TARGET_SCHEMA = JudgedTargetV1;

/** A verdict of the given level: level and reasons, and (optional, added later) what a screen action was judged on. */
function verdictOf<L extends TSchema>(level: L) {
  return Struct({
    level,
    reasons,
    /**
     * For a screen action: the app and element text the level was judged on. The device compares them with what it
     * is about to act on and refuses when they differ. Absent on verdicts of other tools, and on verdicts recorded
     * before this field existed.
     */
    judged_on: Type.Optional(JudgedTargetV1),
  });
}

/**
 * The risk verdict stamped into a call: level and the reasons that led to it (deterministic classifier; at most 32
 * reasons of 1 to 512 characters). Only `low` and `high` exist at this stage of a call.
 */
export const CallVerdictV1 = verdictOf(Type.Enum(['low', 'high']));
export type CallVerdictV1 = Static<typeof CallVerdictV1>;

/** The verdict that makes a call wait for an owner's approval. */
export const HighRiskCallVerdictV1 = verdictOf(Type.Literal('high'));
export type HighRiskCallVerdictV1 = Static<typeof HighRiskCallVerdictV1>;

/** A phone, reached through device-bridge. */
export const DeviceExecutorV1 = Struct({ kind: Type.Literal('device'), device_id: id });
export type DeviceExecutorV1 = Static<typeof DeviceExecutorV1>;

/** An Ormuz service that runs a platform tool in-process (for `ormuz.*` tools, `model-loop`). */
export const PlatformExecutorV1 = Struct({ kind: Type.Literal('platform'), service: id });
export type PlatformExecutorV1 = Static<typeof PlatformExecutorV1>;

/**
 * The executor a call was handed to. `device`: a phone through device-bridge (`device_id` an identifier).
 * `platform`: an Ormuz service running one of the platform's own `ormuz.*` tools itself (`service` an identifier,
 * e.g. `model-loop`); only a call with no device target can be handed to the platform. Events written before the
 * `platform` kind existed are all `device`. Workers over NATS will add a kind.
 */
export const CallExecutorV1 = OneOf([DeviceExecutorV1, PlatformExecutorV1]);
export type CallExecutorV1 = Static<typeof CallExecutorV1>;

/** A tool's failure as reported by its executor: a short machine code and a sentence. */
export const CallErrorV1 = Struct({
  /** Executor-defined code, 1 to 128 characters. */
  code: Type.String({ minLength: 1, maxLength: 128 }),
  /** 1 to 4096 characters. */
  message: text,
});
export type CallErrorV1 = Static<typeof CallErrorV1>;

/** Every {@link OutcomeUnknownCauseV1}. */
export const OUTCOME_UNKNOWN_CAUSES = Object.freeze([
  'timeout',
  'connection_lost',
  'reboot',
  'status_missing',
] as const);

/**
 * Why an outcome is unknown. None of these is proof of completion:
 * `timeout` (the deadline passed), `connection_lost` (the executor disconnected after starting),
 * `reboot` (the device came back with a new boot id), `status_missing` (the executor has no record of the request).
 */
export const OutcomeUnknownCauseV1 = Type.Enum([...OUTCOME_UNKNOWN_CAUSES]);
export type OutcomeUnknownCauseV1 = Static<typeof OutcomeUnknownCauseV1>;

/** What an executor reported: a result, or the tool's failure. */
export const CallOutcomeV1 = OneOf([
  Struct({ kind: Type.Literal('succeeded'), result: JsonValueSchema }),
  Struct({ kind: Type.Literal('failed'), error: CallErrorV1 }),
]);
export type CallOutcomeV1 = Static<typeof CallOutcomeV1>;

/** Every {@link ToolCallStatusV1}, `absent` (nothing recorded) first, then in lifecycle order. */
export const TOOL_CALL_STATUSES = Object.freeze([
  'absent',
  'requested',
  'refused',
  'staged',
  'approved',
  'denied',
  'expired',
  'authorized',
  'dispatched',
  'started',
  'outcome_unknown',
  'succeeded',
  'failed',
  'sealed',
] as const);

/** Where a call stands: the latest step of its lifecycle, or `absent` when nothing is recorded under its id. */
export const ToolCallStatusV1 = Type.Enum([...TOOL_CALL_STATUSES]);
export type ToolCallStatusV1 = Static<typeof ToolCallStatusV1>;

// ---------------------------------------------------------------------------------------------------------------
// Event data
// ---------------------------------------------------------------------------------------------------------------

/** A tool request was received, given its identity and bound to its canonical bytes, before any decision. */
export const CallRequestedV1 = Struct({
  /** Runtime-issued id (`call_` + 32 hex); an identifier. */
  call_id: id,
  /** Canonical tool name `<extension>.<snake_case>`, at most 128 characters. */
  tool: toolName,
  /** The tool's contract version the arguments were validated against; 1 to 128 characters. */
  contract_version: contractVersion,
  /**
   * Canonical JSON text of the arguments; its UTF-8 bytes are at most {@link MAX_TOOL_CALL_PAYLOAD_BYTES}.
   * Characters never outnumber UTF-8 bytes, so the schema's bound is a necessary one; the byte bound is the decider's.
   */
  payload: Type.String({ minLength: 1, maxLength: MAX_TOOL_CALL_PAYLOAD_BYTES }),
  /** Lowercase hex SHA-256 of the payload's UTF-8 bytes. */
  payload_sha256: sha256,
  origin: CallOriginV1,
  /** The agent that asked; an identifier. */
  agent_id: id,
  target: CallTargetV1,
});
export type CallRequestedV1 = Static<typeof CallRequestedV1>;

/** Policy refused the call; it will never run. */
export const CallRefusedV1 = Struct({
  call_id: id,
  /** Stable snake_case reason (`tool_not_granted`, `unknown_foreground_app`), at most 64 characters. */
  reason_code: snakeCode,
  /** Sentence for the model saying what to do instead; 1 to 4096 characters. */
  message: text,
});
export type CallRefusedV1 = Static<typeof CallRefusedV1>;

/** The call is high risk and waits for its owner's decision. */
export const CallStagedV1 = Struct({
  call_id: id,
  /** Id of the approval request; an identifier. */
  approval_id: id,
  /** Owner-facing sentence describing what will happen if approved; 1 to 4096 characters. */
  summary: text,
  /** RFC 3339 instant from which the approval can no longer be given. */
  expires_at: time,
  /** The bytes an approval binds to. */
  payload_sha256: sha256,
  /** The contract version an approval binds to. */
  contract_version: contractVersion,
  verdict: HighRiskCallVerdictV1,
});
export type CallStagedV1 = Static<typeof CallStagedV1>;

/** The owner approved the staged call; always followed by {@link CallAuthorizedV1}. */
export const CallApprovedV1 = Struct({
  call_id: id,
  approval_id: id,
  /** Principal id of the owner who decided; an identifier. */
  decided_by: actor,
  payload_sha256: sha256,
  contract_version: contractVersion,
});
export type CallApprovedV1 = Static<typeof CallApprovedV1>;

/** The owner denied the staged call; it will never run. */
export const CallDeniedV1 = Struct({
  call_id: id,
  approval_id: id,
  /** Principal id of the owner who decided; an identifier. */
  decided_by: actor,
  /** The owner's reason, 1 to 4096 characters, or `null` when none was given. */
  reason: Nullable(text),
});
export type CallDeniedV1 = Static<typeof CallDeniedV1>;

/** The staged call's approval expired undecided; the call will never run. */
export const CallExpiredV1 = Struct({ call_id: id, approval_id: id });
export type CallExpiredV1 = Static<typeof CallExpiredV1>;

/** The call may run: directly for a low verdict, or after an approval for a high one. */
export const CallAuthorizedV1 = Struct({
  call_id: id,
  /** The verdict stamped into the call so the executor can record it. */
  verdict: CallVerdictV1,
  /** The approval that authorised a high-risk call, or `null` when none was needed. */
  approval_id: Nullable(id),
});
export type CallAuthorizedV1 = Static<typeof CallAuthorizedV1>;

/** The call was handed to an executor as request `request_id`. */
export const CallDispatchedV1 = Struct({
  call_id: id,
  /** Id of this delivery; the executor's start claim and outcome must name it. An identifier. */
  request_id: id,
  executor: CallExecutorV1,
  /** The hash the executor must verify against the bytes it receives. */
  payload_sha256: sha256,
  /** RFC 3339 instant after which a started call without an outcome becomes `outcome_unknown` (`timeout`). */
  deadline: time,
});
export type CallDispatchedV1 = Static<typeof CallDispatchedV1>;

/** An executor won the start claim; from here the action may have happened. */
export const CallStartedV1 = Struct({
  call_id: id,
  request_id: id,
  /** Id of the executor that claimed the start (for devices, the device id); an identifier. */
  executor_id: id,
  /** The executor's boot id at claim time; a later boot cannot resume this start. An identifier. */
  boot_id: id,
});
export type CallStartedV1 = Static<typeof CallStartedV1>;

/** The executor reported success. Only an executor's report produces this event. */
export const CallSucceededV1 = Struct({
  call_id: id,
  request_id: id,
  /** The tool's result as the executor sent it: untrusted data, never instructions. */
  result: JsonValueSchema,
});
export type CallSucceededV1 = Static<typeof CallSucceededV1>;

/** The executor reported that the action failed. */
export const CallFailedV1 = Struct({ call_id: id, request_id: id, error: CallErrorV1 });
export type CallFailedV1 = Static<typeof CallFailedV1>;

/** The call was sealed before it started; no delivery may run it. */
export const CallSealedV1 = Struct({
  call_id: id,
  /** Principal id of whoever sealed it (owner, operator or the runtime); an identifier. */
  sealed_by: actor,
  /** Why; 1 to 4096 characters. */
  reason: text,
});
export type CallSealedV1 = Static<typeof CallSealedV1>;

/** The call started but its outcome cannot be known from here; the model must check the real state first. */
export const CallOutcomeUnknownV1 = Struct({
  call_id: id,
  request_id: id,
  cause: OutcomeUnknownCauseV1,
  /** What was observed, at most 4096 characters (may be empty). */
  detail: Type.String({ maxLength: 4096 }),
});
export type CallOutcomeUnknownV1 = Static<typeof CallOutcomeUnknownV1>;

/** Any tool-call event as a decider produces it: discriminated by `type`. */
export type ToolCallEventDraft =
  | EventDraft<'ormuz.toolcall.requested.v1', CallRequestedV1>
  | EventDraft<'ormuz.toolcall.refused.v1', CallRefusedV1>
  | EventDraft<'ormuz.toolcall.staged.v1', CallStagedV1>
  | EventDraft<'ormuz.toolcall.approved.v1', CallApprovedV1>
  | EventDraft<'ormuz.toolcall.denied.v1', CallDeniedV1>
  | EventDraft<'ormuz.toolcall.expired.v1', CallExpiredV1>
  | EventDraft<'ormuz.toolcall.authorized.v1', CallAuthorizedV1>
  | EventDraft<'ormuz.toolcall.dispatched.v1', CallDispatchedV1>
  | EventDraft<'ormuz.toolcall.started.v1', CallStartedV1>
  | EventDraft<'ormuz.toolcall.succeeded.v1', CallSucceededV1>
  | EventDraft<'ormuz.toolcall.failed.v1', CallFailedV1>
  | EventDraft<'ormuz.toolcall.sealed.v1', CallSealedV1>
  | EventDraft<'ormuz.toolcall.outcome_unknown.v1', CallOutcomeUnknownV1>;

/** The draft of one tool-call event type: `ToolCallEventOf<'ormuz.toolcall.staged.v1'>`. */
export type ToolCallEventOf<T extends ToolCallEventType> = Extract<ToolCallEventDraft, { type: T }>;

const TYPE_SET: ReadonlySet<string> = new Set(TOOL_CALL_EVENT_TYPES);

/**
 * True when `draft`'s type is a tool-call event type. Checks the type only: validate `data` with
 * `assertValid(draft.type, draft.data)` when it comes from outside the process.
 */
export function isToolCallEvent(draft: EventDraft): draft is ToolCallEventDraft {
  return TYPE_SET.has(draft.type);
}

// ---------------------------------------------------------------------------------------------------------------
// Schemas
// ---------------------------------------------------------------------------------------------------------------

/** Data schema of every tool-call event type, as registered. */
export const TOOL_CALL_EVENT_SCHEMAS: Readonly<Record<ToolCallEventType, TSchema>> = {
  [ToolCallEventType.Requested]: CallRequestedV1,
  [ToolCallEventType.Refused]: CallRefusedV1,
  [ToolCallEventType.Staged]: CallStagedV1,
  [ToolCallEventType.Approved]: CallApprovedV1,
  [ToolCallEventType.Denied]: CallDeniedV1,
  [ToolCallEventType.Expired]: CallExpiredV1,
  [ToolCallEventType.Authorized]: CallAuthorizedV1,
  [ToolCallEventType.Dispatched]: CallDispatchedV1,
  [ToolCallEventType.Started]: CallStartedV1,
  [ToolCallEventType.Succeeded]: CallSucceededV1,
  [ToolCallEventType.Failed]: CallFailedV1,
  [ToolCallEventType.Sealed]: CallSealedV1,
  [ToolCallEventType.OutcomeUnknown]: CallOutcomeUnknownV1,
};

for (const type of TOOL_CALL_EVENT_TYPES) {
  registerSchema(type, {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: type,
    ...TOOL_CALL_EVENT_SCHEMAS[type],
  });
}
