/**
 * Conversation events (`ormuz.conversation.*.v1`): the wire contract of the `conversations` context, owned by
 * `model-loop`. One conversation is one aggregate; its subject is `aggregateSubject(ns, 'conversations', tenant, id)`
 * and the envelope's `subject` and `correlationid` are the conversation id.
 *
 * Each event's data schema (JSON Schema 2020-12, `additionalProperties: false`) is registered under the event type
 * when this module loads. Fields the brief marks optional (`tool_calls`, `tool_call_id`, `provenance`) are omitted
 * when they do not apply; every other field is required and a missing value is `null`.
 *
 * Lifecycle: started → (message_added | tool_activated)* → (paused → resumed)* → completed. A conversation is paused
 * only while it waits for an owner's decision on a staged tool call.
 */
import type { EventDraft } from '../envelope.js';
import { registerSchema } from '../schema-registry.js';
import {
  fragments,
  JsonObjectSchema,
  List,
  Nullable,
  OneOf,
  Struct,
  Type,
  type Merged,
  type Static,
  type TProperties,
  type TSchema,
} from '../wire.js';

/** Event types of a conversation. Past tense, versioned; a new data shape gets a new `.vN` type. */
export const ConversationEventType = {
  Started: 'ormuz.conversation.started.v1',
  MessageAdded: 'ormuz.conversation.message_added.v1',
  Paused: 'ormuz.conversation.paused.v1',
  Resumed: 'ormuz.conversation.resumed.v1',
  Completed: 'ormuz.conversation.completed.v1',
  ToolActivated: 'ormuz.conversation.tool_activated.v1',
} as const;

/** One of the {@link ConversationEventType} values. */
export type ConversationEventType = (typeof ConversationEventType)[keyof typeof ConversationEventType];

/** Every conversation event type. */
export const CONVERSATION_EVENT_TYPES: readonly ConversationEventType[] = Object.freeze(
  Object.values(ConversationEventType),
);

/** Longest message content, in characters. Tool results are bounded far below this by model-loop. */
export const MAX_MESSAGE_CHARS = 65_536;
/** Most tool requests one model reply may carry. */
export const MAX_TOOL_CALLS_PER_REPLY = 64;

// ---------------------------------------------------------------------------------------------------------------
// Fields
// ---------------------------------------------------------------------------------------------------------------

const id = fragments.identifier;
const text = fragments.nonEmptyText;
const count = (minimum: number) => Type.Integer({ minimum, maximum: Number.MAX_SAFE_INTEGER });
const content = Type.String({ maxLength: MAX_MESSAGE_CHARS });
const nonEmptyContent = Type.String({ minLength: 1, maxLength: MAX_MESSAGE_CHARS });

/** `<provider>:<model>`; the provider part is lowercase. */
export const MODEL_NAME_SCHEMA = Type.String({
  maxLength: 200,
  pattern: '^[a-z][a-z0-9-]*:[A-Za-z0-9][A-Za-z0-9._/:-]*$',
});

// A canonical tool name, `<extension>.<snake_case>` (the catalog owns the exact rules).
const TOOL_NAME_SCHEMA = Type.String({ maxLength: 128, pattern: '^[a-z][a-z0-9_-]*\\.[a-z][a-z0-9_]*$' });

/**
 * Where and how a conversation's model is reached, beside model-loop's own configuration (an agent's configuration,
 * `model-loop.agents.set`, or an operator's start). Never a key: the key is read at each call from the environment
 * variable or the file named here (a mounted secret), so it is neither stored nor on the log. Every field is optional;
 * an absent one keeps model-loop's configured value. model-loop checks the values and refuses bad ones with a sentence
 * (`invalid_model_settings`); the schema only bounds their size.
 */
export const ModelSettingsV1 = Struct({
  /** The API's base URL, http or https, without credentials, e.g. `http://127.0.0.1:8080/v1`. */
  base_url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  /** Name of the environment variable of model-loop holding the API key (`''`: send none). */
  api_key_env: Type.Optional(Type.String({ maxLength: 128 })),
  /** Absolute path of a file model-loop reads the API key from at each call (a mounted Kubernetes secret). */
  api_key_file: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
  /** Output token bound of one turn, 1 to 1,000,000. */
  max_output_tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  /** Stream replies over SSE, so their text is published as it arrives. */
  stream: Type.Optional(Type.Boolean()),
});
export type ModelSettingsV1 = Static<typeof ModelSettingsV1>;

/** Schema of a list of pinned tool names (start request and start event). */
export const PINNED_TOOLS_SCHEMA = List(TOOL_NAME_SCHEMA, { maxItems: 32, uniqueItems: true });

// ---------------------------------------------------------------------------------------------------------------
// Shared shapes
// ---------------------------------------------------------------------------------------------------------------

/**
 * The loop's bounds, fixed when the conversation starts so a restart with another configuration never changes a
 * running conversation. The loop stops (completed with the matching reason) when one is reached.
 */
export const ConversationLimitsV1 = Struct({
  /** Most model turns (model replies), at least 1. */
  max_steps: count(1),
  /** Most tool requests over the whole conversation, at least 0. */
  max_tool_calls: count(0),
  /** Most model tokens (input plus output, summed over turns), at least 1. */
  max_tokens: count(1),
  /** RFC 3339 instant after which no further model turn starts. */
  deadline: fragments.time,
  /** The wall time the deadline was set from, in ms. Absent in events written before it was recorded. */
  max_wall_time_ms: Type.Optional(count(1)),
  /**
   * Most spent on the model, in US dollars, priced with the start event's `price`. Absent: no cost bound. A
   * conversation is never started with a cost bound and no price (the bound could not be enforced).
   */
  max_cost_usd: Type.Optional(Type.Number({ minimum: 0, maximum: 1_000_000_000 })),
});
export type ConversationLimitsV1 = Static<typeof ConversationLimitsV1>;

/** One tool request inside a model reply, with the id the runtime issued for it (never chosen by the model). */
export const RequestedToolCallV1 = Struct({
  /** 0-based position within the reply; part of the call's origin. */
  index: Type.Integer({ minimum: 0, maximum: MAX_TOOL_CALLS_PER_REPLY - 1 }),
  /**
   * Tool name as the model sent it, except that a provider encoding of a dotted name (`device__tap`) is recorded as
   * the canonical name (`device.tap`). An unknown name is refused by policy, not here. 1 to 200 characters.
   */
  name: Type.String({ minLength: 1, maxLength: 200 }),
  /** Arguments exactly as the model sent them. */
  arguments: JsonObjectSchema,
  /** Derived from (tenant, conversation, turn, index); an identifier. */
  call_id: id,
});
export type RequestedToolCallV1 = Static<typeof RequestedToolCallV1>;

/** Every {@link ToolResultStatusV1}. */
export const TOOL_RESULT_STATUSES = Object.freeze([
  'pending_confirmation',
  'refused',
  'rejected',
  'succeeded',
  'failed',
  'outcome_unknown',
  'denied',
  'expired',
  'sealed',
] as const);

/**
 * What a tool result reports about its call. `pending_confirmation` is the only interim status: the call was staged
 * and a final result follows once the owner decides. `rejected` means policy could not accept the request at all
 * (malformed or conflicting arguments); `refused` means policy's gate said no.
 */
export const ToolResultStatusV1 = Type.Enum([...TOOL_RESULT_STATUSES]);
export type ToolResultStatusV1 = Static<typeof ToolResultStatusV1>;

/** Where a tool result came from. The content it labels is data, never instructions. */
export const ToolResultProvenanceV1 = Struct({
  /** `device:<device_id>` for an executor's output; `ormuz` for the runtime's own decisions. 1 to 200 characters. */
  source: Type.String({ minLength: 1, maxLength: 200 }),
  call_id: id,
  /** Tool name as requested. */
  tool: Type.String({ minLength: 1, maxLength: 200 }),
  status: ToolResultStatusV1,
  /** True when the executor's data was cut to the size bound; the content says where to continue. */
  truncated: Type.Boolean(),
  /** The approval request, for `pending_confirmation` only; otherwise `null`. */
  approval: Nullable(Struct({ approval_id: id, summary: text })),
});
export type ToolResultProvenanceV1 = Static<typeof ToolResultProvenanceV1>;

/**
 * A message schema, one closed shape per role (`oneOf`), each with the `extra` properties: see
 * {@link ConversationMessageV1}. Its static type is one object type for every role, whose role-specific fields are
 * optional, since code reads messages of any role.
 */
export function conversationMessageSchema<P extends TProperties>(extra: P) {
  const byRole = OneOf([
    Struct({ role: Type.Enum(['user', 'system']), content: nonEmptyContent, ...extra }),
    Struct({
      role: Type.Literal('assistant'),
      content,
      tool_calls: Type.Optional(List(RequestedToolCallV1, { minItems: 1, maxItems: MAX_TOOL_CALLS_PER_REPLY })),
      ...extra,
    }),
    Struct({
      role: Type.Literal('tool'),
      content: nonEmptyContent,
      tool_call_id: id,
      provenance: ToolResultProvenanceV1,
      ...extra,
    }),
  ]);
  return Type.Unsafe<Merged<Static<typeof byRole>>>(byRole);
}

/**
 * One message of the conversation as the model reads it, one shape per role. `tool_calls` appears only on assistant
 * messages that asked for tools; `tool_call_id` and `provenance` only on tool messages. A tool message may answer a
 * call of an earlier turn: the final outcome of a call that was pending confirmation. Content is at most
 * {@link MAX_MESSAGE_CHARS} characters; it may be empty only on an assistant message with tool calls.
 */
export const ConversationMessageV1 = conversationMessageSchema({});
export type ConversationMessageV1 = Static<typeof ConversationMessageV1>;

/** Schema of {@link ConversationMessageV1}: one shape per role. */
export const CONVERSATION_MESSAGE_SCHEMA = ConversationMessageV1;

/** Who wrote a message. */
export type MessageRoleV1 = ConversationMessageV1['role'];

/** Tokens one model turn used, as the provider reported (or estimated) them. */
export const TokenUsageV1 = Struct({ input_tokens: count(0), output_tokens: count(0) });
export type TokenUsageV1 = Static<typeof TokenUsageV1>;

/** Every {@link ModelStopReasonV1}. */
export const MODEL_STOP_REASONS = Object.freeze([
  'end_turn',
  'tool_use',
  'length',
  'content_filter',
  'refusal',
] as const);

/**
 * Why the model stopped writing a reply, as its provider reported it. `end_turn`: it finished; `tool_use`: it stopped
 * to have tools run; `length`: the output limit cut the reply (a tool request cut short is not run); `content_filter`:
 * the provider withheld some or all of the reply; `refusal`: the model declined the task.
 */
export const ModelStopReasonV1 = Type.Enum([...MODEL_STOP_REASONS]);
export type ModelStopReasonV1 = Static<typeof ModelStopReasonV1>;

/** A staged call the conversation waits on. */
export const PendingConfirmationV1 = Struct({
  call_id: id,
  approval_id: id,
  /** Owner-facing sentence from policy; 1 to 4096 characters. */
  summary: text,
});
export type PendingConfirmationV1 = Static<typeof PendingConfirmationV1>;

/** What one model costs, in US dollars per million tokens, as the price table held it when a conversation started. */
export const ModelPriceV1 = Struct({
  input_usd_per_mtok: Type.Number({ minimum: 0, maximum: 1_000_000 }),
  output_usd_per_mtok: Type.Number({ minimum: 0, maximum: 1_000_000 }),
});
export type ModelPriceV1 = Static<typeof ModelPriceV1>;

/** Every {@link BoundNameV1}. */
export const BOUND_NAMES = Object.freeze([
  'steps',
  'tool_calls',
  'tokens',
  'wall_time',
  'cost',
  'tenant_day_steps',
  'tenant_day_tool_calls',
  'tenant_day_tokens',
  'tenant_day_cost',
] as const);

/**
 * A bound of the loop: `steps` (model turns), `tool_calls`, `tokens` (input plus output), `wall_time` (ms since the
 * start), `cost` (US dollars, from the model's price); `tenant_day_*`, the same counted over every conversation of
 * the tenant in one UTC day (`used` is the tenant's day, not the conversation's).
 */
export const BoundNameV1 = Type.Enum([...BOUND_NAMES]);
export type BoundNameV1 = Static<typeof BoundNameV1>;

/**
 * The bound that stopped a conversation, with its figures: `limit` is the bound, `used` what the conversation had
 * used when the loop checked it (before the model turn it did not start), in the bound's unit (turns, calls, tokens,
 * ms, US dollars).
 */
export const BoundReachedV1 = Struct({
  bound: BoundNameV1,
  limit: Type.Number({ minimum: 0 }),
  used: Type.Number({ minimum: 0 }),
});
export type BoundReachedV1 = Static<typeof BoundReachedV1>;

/** Every {@link CompletionReasonV1}. */
export const COMPLETION_REASONS = Object.freeze([
  'answered',
  'step_limit',
  'tool_limit',
  'time_limit',
  'token_limit',
  'cost_limit',
  'failed',
  'tenant_day_steps',
  'tenant_day_tool_calls',
  'tenant_day_tokens',
  'tenant_day_cost',
] as const);

/**
 * Why the loop stopped. `answered`: the model gave a final reply; `failed`: the model did not answer; the others name
 * the bound that was reached (`tenant_day_*`: the tenant's daily limit, over all its conversations).
 */
export const CompletionReasonV1 = Type.Enum([...COMPLETION_REASONS]);
export type CompletionReasonV1 = Static<typeof CompletionReasonV1>;

// ---------------------------------------------------------------------------------------------------------------
// Event data
// ---------------------------------------------------------------------------------------------------------------

/** A conversation began; the task follows as the first user message. */
export const ConversationStartedV1 = Struct({
  conversation_id: id,
  /** The agent the conversation runs as; an identifier. */
  agent_id: id,
  /** `<provider>:<model>`, e.g. `scripted:demo`. */
  model: MODEL_NAME_SCHEMA,
  /** The user's task, 1 to 32,768 characters. */
  task: Type.String({ minLength: 1, maxLength: 32_768 }),
  /** The device tool calls act on, or `null` when none is attached. */
  device_id: Nullable(id),
  limits: ConversationLimitsV1,
  /**
   * Tools the owner pinned for this conversation: their full schemas are sent to the model on every turn, whatever
   * its tier. Pinning offers nothing the grant does not: a pinned tool the agent may not use is simply not sent.
   * Canonical names, at most 32. Absent in events written before pinning existed; read that as `[]`.
   */
  pinned_tools: Type.Optional(PINNED_TOOLS_SCHEMA),
  /**
   * Where the model is reached, when not only by model-loop's configuration (the agent's configuration, or the
   * operator's start). Absent when none; read that as `{}`.
   */
  model_settings: Type.Optional(ModelSettingsV1),
  /**
   * The model's price when the conversation started (the price table may change later; a running conversation keeps
   * this one). Absent when the table has no price for the model (its cost is then not known), and in events written
   * before prices were recorded.
   */
  price: Type.Optional(ModelPriceV1),
});
export type ConversationStartedV1 = Static<typeof ConversationStartedV1>;

/** A message joined the conversation. */
export const MessageAddedV1 = Struct({
  /** The 0-based model turn the message belongs to: the task is turn 0; a tool result has its call's turn. */
  turn: count(0),
  message: ConversationMessageV1,
  /** Tokens of the model turn that produced an assistant message; `null` for every other role. */
  usage: Nullable(TokenUsageV1),
  /**
   * Why the model stopped, on an assistant message whose provider said so. Absent on other roles, on replies of
   * providers that report nothing (scripted models), and in events written before stop reasons were recorded.
   */
  stop_reason: Type.Optional(ModelStopReasonV1),
});
export type MessageAddedV1 = Static<typeof MessageAddedV1>;

/** The loop waits for the owner's decision on staged calls; nothing runs until one of them is decided. */
export const ConversationPausedV1 = Struct({
  reason: Type.Literal('awaiting_approval'),
  /** At least one. */
  pending: List(PendingConfirmationV1, { minItems: 1, maxItems: 1000 }),
});
export type ConversationPausedV1 = Static<typeof ConversationPausedV1>;

/** The calls the conversation waited on were decided and their outcomes recorded; the loop continues. */
export const ConversationResumedV1 = Struct({
  /** Sentence saying why, 1 to 4096 characters. */
  reason: text,
});
export type ConversationResumedV1 = Static<typeof ConversationResumedV1>;

/** The loop stopped for good. */
export const ConversationCompletedV1 = Struct({
  /** The model's final answer, or a sentence saying which bound stopped the loop; at most 65,536 characters. */
  final_text: content,
  reason: CompletionReasonV1,
  /** The bound and its figures when a bound stopped the loop; absent otherwise (and in events written before). */
  bound: Type.Optional(BoundReachedV1),
});
export type ConversationCompletedV1 = Static<typeof ConversationCompletedV1>;

/**
 * The model activated a tool with `ormuz.activate_tool`: from the next model turn on, the tool's full schema is sent
 * with every request of this conversation, whatever the model's tier. Activation never grants anything: policy still
 * decides every call, and a tool the agent may no longer use is not sent.
 */
export const ToolActivatedV1 = Struct({
  /** The `ormuz.activate_tool` call that asked for it; an identifier. */
  call_id: id,
  /** Canonical tool name, at most 128 characters. */
  tool: TOOL_NAME_SCHEMA,
  /** The contract version the agent was offered when it was activated. */
  version: Type.Integer({ minimum: 1, maximum: 1_000_000_000 }),
});
export type ToolActivatedV1 = Static<typeof ToolActivatedV1>;

/** Any conversation event as a decider produces it: discriminated by `type`. */
export type ConversationEventDraft =
  | EventDraft<'ormuz.conversation.started.v1', ConversationStartedV1>
  | EventDraft<'ormuz.conversation.message_added.v1', MessageAddedV1>
  | EventDraft<'ormuz.conversation.paused.v1', ConversationPausedV1>
  | EventDraft<'ormuz.conversation.resumed.v1', ConversationResumedV1>
  | EventDraft<'ormuz.conversation.completed.v1', ConversationCompletedV1>
  | EventDraft<'ormuz.conversation.tool_activated.v1', ToolActivatedV1>;

const TYPE_SET: ReadonlySet<string> = new Set(CONVERSATION_EVENT_TYPES);

/** True when `draft`'s type is a conversation event type (the type only; validate `data` separately). */
export function isConversationEvent(draft: EventDraft): draft is ConversationEventDraft {
  return TYPE_SET.has(draft.type);
}

// ---------------------------------------------------------------------------------------------------------------
// Schemas
// ---------------------------------------------------------------------------------------------------------------

/** Data schema of every conversation event type, as registered. */
export const CONVERSATION_EVENT_SCHEMAS: Readonly<Record<ConversationEventType, TSchema>> = {
  [ConversationEventType.Started]: ConversationStartedV1,
  [ConversationEventType.MessageAdded]: MessageAddedV1,
  [ConversationEventType.Paused]: ConversationPausedV1,
  [ConversationEventType.Resumed]: ConversationResumedV1,
  [ConversationEventType.Completed]: ConversationCompletedV1,
  [ConversationEventType.ToolActivated]: ToolActivatedV1,
};

for (const type of CONVERSATION_EVENT_TYPES) {
  registerSchema(type, {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: type,
    ...CONVERSATION_EVENT_SCHEMAS[type],
  });
}
