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
import type { JsonValue } from '../canonical.js';
import type { EventDraft } from '../envelope.js';
import { fragments, registerSchema, type JsonSchema } from '../schema-registry.js';

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
// Shared shapes
// ---------------------------------------------------------------------------------------------------------------

/**
 * Where a call came from; the call id is derived from it (never from the model).
 * `conversation`: the model's `index`-th tool request (0-based) in model turn `turn` (0-based) of a conversation.
 * `operation`: an API caller's own idempotency key for a direct call.
 */
export type CallOriginV1 =
  | {
      readonly kind: 'conversation';
      readonly conversation_id: string;
      /** 0-based model turn within the conversation. */
      readonly turn: number;
      /** 0-based position of the tool request within that turn. */
      readonly index: number;
    }
  | { readonly kind: 'operation'; readonly operation_id: string };

/** The device a call is aimed at, or `null` for calls with no device target. */
export type CallTargetV1 = { readonly device_id: string } | null;

/**
 * The risk verdict stamped into a call: level and the reasons that led to it (deterministic classifier; at most 32
 * reasons of 1 to 512 characters). Only `low` and `high` exist at this stage of a call.
 */
export interface CallVerdictV1 {
  readonly level: 'low' | 'high';
  readonly reasons: readonly string[];
  /**
   * For a screen action: the app and element text the level was judged on. The device compares them with what it is
   * about to act on and refuses when they differ. Absent on verdicts of other tools, and on verdicts recorded before
   * this field existed.
   */
  readonly judged_on?: JudgedTargetV1;
}

/**
 * What a screen action's risk was judged on, stamped into its verdict so the device can check it is still true.
 * `target_text` is the visible text of the element the action acts on (`''` for an element without text), or `null`
 * when it acts on no element (a swipe, typing into the focused field, a key with no element behind it).
 */
export interface JudgedTargetV1 {
  /** The app that was in front (an Android package name). */
  readonly foreground_package: string;
  /** At most 2000 characters. */
  readonly target_text: string | null;
  /**
   * Where the element and its text came from: the device's latest observation on the log (`observation`), or the
   * call's own `target_text` argument (`arguments`), which the device checks just the same.
   */
  readonly source: 'observation' | 'arguments';
}

/** JSON Schema of {@link JudgedTargetV1}, shared by the tool-call events and the device protocol's submit frame. */
export const JUDGED_TARGET_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['foreground_package', 'target_text', 'source'],
  properties: {
    foreground_package: { type: 'string', minLength: 1, maxLength: 255 },
    target_text: { type: ['string', 'null'], maxLength: 2000 },
    source: { enum: ['observation', 'arguments'] },
  },
};

/** The verdict that makes a call wait for an owner's approval. */
export interface HighRiskCallVerdictV1 extends CallVerdictV1 {
  readonly level: 'high';
}

/**
 * The executor a call was handed to. `device`: a phone through device-bridge (`device_id` an identifier).
 * `platform`: an Ormuz service running one of the platform's own `ormuz.*` tools itself (`service` an identifier,
 * e.g. `model-loop`); only a call with no device target can be handed to the platform. Events written before the
 * `platform` kind existed are all `device`. Workers over NATS will add a kind.
 */
export type CallExecutorV1 = DeviceExecutorV1 | PlatformExecutorV1;

/** A phone, reached through device-bridge. */
export interface DeviceExecutorV1 {
  readonly kind: 'device';
  readonly device_id: string;
}

/** An Ormuz service that runs a platform tool in-process (for `ormuz.*` tools, `model-loop`). */
export interface PlatformExecutorV1 {
  readonly kind: 'platform';
  readonly service: string;
}

/** A tool's failure as reported by its executor: a short machine code and a sentence. */
export interface CallErrorV1 {
  /** Executor-defined code, 1 to 128 characters. */
  readonly code: string;
  /** 1 to 4096 characters. */
  readonly message: string;
}

/**
 * Why an outcome is unknown. None of these is proof of completion:
 * `timeout` (the deadline passed), `connection_lost` (the executor disconnected after starting),
 * `reboot` (the device came back with a new boot id), `status_missing` (the executor has no record of the request).
 */
export type OutcomeUnknownCauseV1 = 'timeout' | 'connection_lost' | 'reboot' | 'status_missing';

/** Every {@link OutcomeUnknownCauseV1}. */
export const OUTCOME_UNKNOWN_CAUSES: readonly OutcomeUnknownCauseV1[] = Object.freeze([
  'timeout',
  'connection_lost',
  'reboot',
  'status_missing',
]);

// ---------------------------------------------------------------------------------------------------------------
// Event data
// ---------------------------------------------------------------------------------------------------------------

/** A tool request was received, given its identity and bound to its canonical bytes, before any decision. */
export interface CallRequestedV1 {
  /** Runtime-issued id (`call_` + 32 hex); an identifier. */
  readonly call_id: string;
  /** Canonical tool name `<extension>.<snake_case>`, at most 128 characters. */
  readonly tool: string;
  /** The tool's contract version the arguments were validated against; 1 to 128 characters. */
  readonly contract_version: string;
  /** Canonical JSON text of the arguments; its UTF-8 bytes are at most {@link MAX_TOOL_CALL_PAYLOAD_BYTES}. */
  readonly payload: string;
  /** Lowercase hex SHA-256 of the payload's UTF-8 bytes. */
  readonly payload_sha256: string;
  readonly origin: CallOriginV1;
  /** The agent that asked; an identifier. */
  readonly agent_id: string;
  readonly target: CallTargetV1;
}

/** Policy refused the call; it will never run. */
export interface CallRefusedV1 {
  readonly call_id: string;
  /** Stable snake_case reason (`tool_not_granted`, `unknown_foreground_app`), at most 64 characters. */
  readonly reason_code: string;
  /** Sentence for the model saying what to do instead; 1 to 4096 characters. */
  readonly message: string;
}

/** The call is high risk and waits for its owner's decision. */
export interface CallStagedV1 {
  readonly call_id: string;
  /** Id of the approval request; an identifier. */
  readonly approval_id: string;
  /** Owner-facing sentence describing what will happen if approved; 1 to 4096 characters. */
  readonly summary: string;
  /** RFC 3339 instant from which the approval can no longer be given. */
  readonly expires_at: string;
  /** The bytes an approval binds to. */
  readonly payload_sha256: string;
  /** The contract version an approval binds to. */
  readonly contract_version: string;
  readonly verdict: HighRiskCallVerdictV1;
}

/** The owner approved the staged call; always followed by {@link CallAuthorizedV1}. */
export interface CallApprovedV1 {
  readonly call_id: string;
  readonly approval_id: string;
  /** Principal id of the owner who decided; an identifier. */
  readonly decided_by: string;
  readonly payload_sha256: string;
  readonly contract_version: string;
}

/** The owner denied the staged call; it will never run. */
export interface CallDeniedV1 {
  readonly call_id: string;
  readonly approval_id: string;
  /** Principal id of the owner who decided; an identifier. */
  readonly decided_by: string;
  /** The owner's reason, 1 to 4096 characters, or `null` when none was given. */
  readonly reason: string | null;
}

/** The staged call's approval expired undecided; the call will never run. */
export interface CallExpiredV1 {
  readonly call_id: string;
  readonly approval_id: string;
}

/** The call may run: directly for a low verdict, or after an approval for a high one. */
export interface CallAuthorizedV1 {
  readonly call_id: string;
  /** The verdict stamped into the call so the executor can record it. */
  readonly verdict: CallVerdictV1;
  /** The approval that authorised a high-risk call, or `null` when none was needed. */
  readonly approval_id: string | null;
}

/** The call was handed to an executor as request `request_id`. */
export interface CallDispatchedV1 {
  readonly call_id: string;
  /** Id of this delivery; the executor's start claim and outcome must name it. An identifier. */
  readonly request_id: string;
  readonly executor: CallExecutorV1;
  /** The hash the executor must verify against the bytes it receives. */
  readonly payload_sha256: string;
  /** RFC 3339 instant after which a started call without an outcome becomes `outcome_unknown` (`timeout`). */
  readonly deadline: string;
}

/** An executor won the start claim; from here the action may have happened. */
export interface CallStartedV1 {
  readonly call_id: string;
  readonly request_id: string;
  /** Id of the executor that claimed the start (for devices, the device id); an identifier. */
  readonly executor_id: string;
  /** The executor's boot id at claim time; a later boot cannot resume this start. An identifier. */
  readonly boot_id: string;
}

/** The executor reported success. Only an executor's report produces this event. */
export interface CallSucceededV1 {
  readonly call_id: string;
  readonly request_id: string;
  /** The tool's result as the executor sent it: untrusted data, never instructions. */
  readonly result: JsonValue;
}

/** The executor reported that the action failed. */
export interface CallFailedV1 {
  readonly call_id: string;
  readonly request_id: string;
  readonly error: CallErrorV1;
}

/** The call was sealed before it started; no delivery may run it. */
export interface CallSealedV1 {
  readonly call_id: string;
  /** Principal id of whoever sealed it (owner, operator or the runtime); an identifier. */
  readonly sealed_by: string;
  /** Why; 1 to 4096 characters. */
  readonly reason: string;
}

/** The call started but its outcome cannot be known from here; the model must check the real state first. */
export interface CallOutcomeUnknownV1 {
  readonly call_id: string;
  readonly request_id: string;
  readonly cause: OutcomeUnknownCauseV1;
  /** What was observed, at most 4096 characters (may be empty). */
  readonly detail: string;
}

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

function object(properties: Record<string, JsonSchema>): JsonSchema {
  return { type: 'object', additionalProperties: false, required: Object.keys(properties), properties };
}

function nullable(schema: JsonSchema): JsonSchema {
  return { anyOf: [schema, { type: 'null' }] };
}

const id = fragments.identifier;
const sha256 = fragments.sha256;
const time = fragments.time;
const text = fragments.nonEmptyText;
/** Who decided or sealed: a person or service as shown in the audit trail (an email address is fine). */
const actor = { type: 'string', minLength: 1, maxLength: 200, pattern: '^[^\\u0000-\\u001f\\u007f]+$' } as const;
// The catalog owns the exact naming rules; this only keeps the `<extension>.<snake_case>` shape.
const toolName = { type: 'string', maxLength: 128, pattern: '^[a-z][a-z0-9_-]*\\.[a-z][a-z0-9_]*$' };
const contractVersion = { type: 'string', minLength: 1, maxLength: 128 };
const snakeCode = { type: 'string', maxLength: 64, pattern: '^[a-z][a-z0-9]*(_[a-z0-9]+)*$' };
const reasons = { type: 'array', maxItems: 32, items: { type: 'string', minLength: 1, maxLength: 512 } };
/** A verdict: level and reasons, and (optional, added later) what a screen action was judged on. */
function verdictOf(level: JsonSchema): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['level', 'reasons'],
    properties: { level, reasons, judged_on: JUDGED_TARGET_SCHEMA },
  };
}
const verdict = verdictOf({ enum: ['low', 'high'] });
const highVerdict = verdictOf({ const: 'high' });
const origin = {
  oneOf: [
    object({
      kind: { const: 'conversation' },
      conversation_id: id,
      turn: { type: 'integer', minimum: 0 },
      index: { type: 'integer', minimum: 0 },
    }),
    object({ kind: { const: 'operation' }, operation_id: id }),
  ],
};

/** Data schema of every tool-call event type, as registered. */
export const TOOL_CALL_EVENT_SCHEMAS: Readonly<Record<ToolCallEventType, JsonSchema>> = {
  [ToolCallEventType.Requested]: object({
    call_id: id,
    tool: toolName,
    contract_version: contractVersion,
    // Characters never outnumber UTF-8 bytes, so this is a necessary bound; the byte bound is the decider's.
    payload: { type: 'string', minLength: 1, maxLength: MAX_TOOL_CALL_PAYLOAD_BYTES },
    payload_sha256: sha256,
    origin,
    agent_id: id,
    target: nullable(object({ device_id: id })),
  }),
  [ToolCallEventType.Refused]: object({ call_id: id, reason_code: snakeCode, message: text }),
  [ToolCallEventType.Staged]: object({
    call_id: id,
    approval_id: id,
    summary: text,
    expires_at: time,
    payload_sha256: sha256,
    contract_version: contractVersion,
    verdict: highVerdict,
  }),
  [ToolCallEventType.Approved]: object({
    call_id: id,
    approval_id: id,
    decided_by: actor,
    payload_sha256: sha256,
    contract_version: contractVersion,
  }),
  [ToolCallEventType.Denied]: object({ call_id: id, approval_id: id, decided_by: actor, reason: nullable(text) }),
  [ToolCallEventType.Expired]: object({ call_id: id, approval_id: id }),
  [ToolCallEventType.Authorized]: object({ call_id: id, verdict, approval_id: nullable(id) }),
  [ToolCallEventType.Dispatched]: object({
    call_id: id,
    request_id: id,
    executor: {
      oneOf: [
        object({ kind: { const: 'device' }, device_id: id }),
        object({ kind: { const: 'platform' }, service: id }),
      ],
    },
    payload_sha256: sha256,
    deadline: time,
  }),
  [ToolCallEventType.Started]: object({ call_id: id, request_id: id, executor_id: id, boot_id: id }),
  [ToolCallEventType.Succeeded]: object({ call_id: id, request_id: id, result: {} }),
  [ToolCallEventType.Failed]: object({
    call_id: id,
    request_id: id,
    error: object({ code: { type: 'string', minLength: 1, maxLength: 128 }, message: text }),
  }),
  [ToolCallEventType.Sealed]: object({ call_id: id, sealed_by: actor, reason: text }),
  [ToolCallEventType.OutcomeUnknown]: object({
    call_id: id,
    request_id: id,
    cause: { enum: [...OUTCOME_UNKNOWN_CAUSES] },
    detail: { type: 'string', maxLength: 4096 },
  }),
};

for (const type of TOOL_CALL_EVENT_TYPES) {
  registerSchema(type, {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: type,
    ...TOOL_CALL_EVENT_SCHEMAS[type],
  });
}
