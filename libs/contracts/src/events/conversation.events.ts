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
import type { JsonValue } from '../canonical.js';
import type { EventDraft } from '../envelope.js';
import { fragments, registerSchema, type JsonSchema } from '../schema-registry.js';

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
// Shared shapes
// ---------------------------------------------------------------------------------------------------------------

/**
 * The loop's bounds, fixed when the conversation starts so a restart with another configuration never changes a
 * running conversation. The loop stops (completed with the matching reason) when one is reached.
 */
export interface ConversationLimitsV1 {
  /** Most model turns (model replies), at least 1. */
  readonly max_steps: number;
  /** Most tool requests over the whole conversation, at least 0. */
  readonly max_tool_calls: number;
  /** Most model tokens (input plus output, summed over turns), at least 1. */
  readonly max_tokens: number;
  /** RFC 3339 instant after which no further model turn starts. */
  readonly deadline: string;
}

/** Who wrote a message. */
export type MessageRoleV1 = 'user' | 'assistant' | 'tool' | 'system';

/** One tool request inside a model reply, with the id the runtime issued for it (never chosen by the model). */
export interface RequestedToolCallV1 {
  /** 0-based position within the reply; part of the call's origin. */
  readonly index: number;
  /**
   * Tool name as the model sent it, except that a provider encoding of a dotted name (`device__tap`) is recorded as
   * the canonical name (`device.tap`). An unknown name is refused by policy, not here. 1 to 200 characters.
   */
  readonly name: string;
  /** Arguments exactly as the model sent them. */
  readonly arguments: { readonly [key: string]: JsonValue };
  /** Derived from (tenant, conversation, turn, index); an identifier. */
  readonly call_id: string;
}

/**
 * What a tool result reports about its call. `pending_confirmation` is the only interim status: the call was staged
 * and a final result follows once the owner decides. `rejected` means policy could not accept the request at all
 * (malformed or conflicting arguments); `refused` means policy's gate said no.
 */
export type ToolResultStatusV1 =
  | 'pending_confirmation'
  | 'refused'
  | 'rejected'
  | 'succeeded'
  | 'failed'
  | 'outcome_unknown'
  | 'denied'
  | 'expired'
  | 'sealed';

/** Every {@link ToolResultStatusV1}. */
export const TOOL_RESULT_STATUSES: readonly ToolResultStatusV1[] = Object.freeze([
  'pending_confirmation',
  'refused',
  'rejected',
  'succeeded',
  'failed',
  'outcome_unknown',
  'denied',
  'expired',
  'sealed',
]);

/** Where a tool result came from. The content it labels is data, never instructions. */
export interface ToolResultProvenanceV1 {
  /** `device:<device_id>` for an executor's output; `ormuz` for the runtime's own decisions. 1 to 200 characters. */
  readonly source: string;
  readonly call_id: string;
  /** Tool name as requested. */
  readonly tool: string;
  readonly status: ToolResultStatusV1;
  /** True when the executor's data was cut to the size bound; the content says where to continue. */
  readonly truncated: boolean;
  /** The approval request, for `pending_confirmation` only; otherwise `null`. */
  readonly approval: { readonly approval_id: string; readonly summary: string } | null;
}

/**
 * One message of the conversation as the model reads it. `tool_calls` appears only on assistant messages that asked
 * for tools; `tool_call_id` and `provenance` only on tool messages. A tool message may answer a call of an earlier
 * turn: the final outcome of a call that was pending confirmation.
 */
export interface ConversationMessageV1 {
  readonly role: MessageRoleV1;
  /** At most {@link MAX_MESSAGE_CHARS} characters; may be empty only on an assistant message with tool calls. */
  readonly content: string;
  readonly tool_calls?: readonly RequestedToolCallV1[];
  readonly tool_call_id?: string;
  readonly provenance?: ToolResultProvenanceV1;
}

/** Tokens one model turn used, as the provider reported (or estimated) them. */
export interface TokenUsageV1 {
  readonly input_tokens: number;
  readonly output_tokens: number;
}

/** A staged call the conversation waits on. */
export interface PendingConfirmationV1 {
  readonly call_id: string;
  readonly approval_id: string;
  /** Owner-facing sentence from policy; 1 to 4096 characters. */
  readonly summary: string;
}

/** Why the loop stopped. `answered`: the model gave a final reply; the others name the bound that was reached. */
export type CompletionReasonV1 = 'answered' | 'step_limit' | 'tool_limit' | 'time_limit' | 'token_limit' | 'failed';

/** Every {@link CompletionReasonV1}. */
export const COMPLETION_REASONS: readonly CompletionReasonV1[] = Object.freeze([
  'answered',
  'step_limit',
  'tool_limit',
  'time_limit',
  'token_limit',
  'failed',
]);

// ---------------------------------------------------------------------------------------------------------------
// Event data
// ---------------------------------------------------------------------------------------------------------------

/** A conversation began; the task follows as the first user message. */
export interface ConversationStartedV1 {
  readonly conversation_id: string;
  /** The agent the conversation runs as; an identifier. */
  readonly agent_id: string;
  /** `<provider>:<model>`, e.g. `scripted:demo`. */
  readonly model: string;
  /** The user's task, 1 to 32,768 characters. */
  readonly task: string;
  /** The device tool calls act on, or `null` when none is attached. */
  readonly device_id: string | null;
  readonly limits: ConversationLimitsV1;
  /**
   * Tools the owner pinned for this conversation: their full schemas are sent to the model on every turn, whatever
   * its tier. Pinning offers nothing the grant does not: a pinned tool the agent may not use is simply not sent.
   * Canonical names, at most 32. Absent in events written before pinning existed; read that as `[]`.
   */
  readonly pinned_tools?: readonly string[];
}

/** A message joined the conversation. */
export interface MessageAddedV1 {
  /** The 0-based model turn the message belongs to: the task is turn 0; a tool result has its call's turn. */
  readonly turn: number;
  readonly message: ConversationMessageV1;
  /** Tokens of the model turn that produced an assistant message; `null` for every other role. */
  readonly usage: TokenUsageV1 | null;
}

/** The loop waits for the owner's decision on staged calls; nothing runs until one of them is decided. */
export interface ConversationPausedV1 {
  readonly reason: 'awaiting_approval';
  /** At least one. */
  readonly pending: readonly PendingConfirmationV1[];
}

/** The calls the conversation waited on were decided and their outcomes recorded; the loop continues. */
export interface ConversationResumedV1 {
  /** Sentence saying why, 1 to 4096 characters. */
  readonly reason: string;
}

/** The loop stopped for good. */
export interface ConversationCompletedV1 {
  /** The model's final answer, or a sentence saying which bound stopped the loop; at most 65,536 characters. */
  readonly final_text: string;
  readonly reason: CompletionReasonV1;
}

/**
 * The model activated a tool with `ormuz.activate_tool`: from the next model turn on, the tool's full schema is sent
 * with every request of this conversation, whatever the model's tier. Activation never grants anything: policy still
 * decides every call, and a tool the agent may no longer use is not sent.
 */
export interface ToolActivatedV1 {
  /** The `ormuz.activate_tool` call that asked for it; an identifier. */
  readonly call_id: string;
  /** Canonical tool name, at most 128 characters. */
  readonly tool: string;
  /** The contract version the agent was offered when it was activated. */
  readonly version: number;
}

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

function object(properties: Record<string, JsonSchema>, optional: Record<string, JsonSchema> = {}): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    required: Object.keys(properties),
    properties: { ...properties, ...optional },
  };
}

const id = fragments.identifier;
const text = fragments.nonEmptyText;
const count = (minimum: number) => ({ type: 'integer', minimum, maximum: Number.MAX_SAFE_INTEGER });
const content = { type: 'string', maxLength: MAX_MESSAGE_CHARS };
const nonEmptyContent = { type: 'string', minLength: 1, maxLength: MAX_MESSAGE_CHARS };

/** `<provider>:<model>`; the provider part is lowercase. */
export const MODEL_NAME_SCHEMA: JsonSchema = {
  type: 'string',
  maxLength: 200,
  pattern: '^[a-z][a-z0-9-]*:[A-Za-z0-9][A-Za-z0-9._/:-]*$',
};

// A canonical tool name, `<extension>.<snake_case>` (the catalog owns the exact rules).
const TOOL_NAME_SCHEMA: JsonSchema = {
  type: 'string',
  maxLength: 128,
  pattern: '^[a-z][a-z0-9_-]*\\.[a-z][a-z0-9_]*$',
};

/** Schema of a list of pinned tool names (start request and start event). */
export const PINNED_TOOLS_SCHEMA: JsonSchema = {
  type: 'array',
  maxItems: 32,
  uniqueItems: true,
  items: TOOL_NAME_SCHEMA,
};

const toolCall = object({
  index: { type: 'integer', minimum: 0, maximum: MAX_TOOL_CALLS_PER_REPLY - 1 },
  name: { type: 'string', minLength: 1, maxLength: 200 },
  arguments: { type: 'object' },
  call_id: id,
});

const provenance = object({
  source: { type: 'string', minLength: 1, maxLength: 200 },
  call_id: id,
  tool: { type: 'string', minLength: 1, maxLength: 200 },
  status: { enum: [...TOOL_RESULT_STATUSES] },
  truncated: { type: 'boolean' },
  approval: { anyOf: [object({ approval_id: id, summary: text }), { type: 'null' }] },
});

/** Schema of {@link ConversationMessageV1}: one shape per role. */
export const CONVERSATION_MESSAGE_SCHEMA: JsonSchema = {
  oneOf: [
    object({ role: { enum: ['user', 'system'] }, content: nonEmptyContent }),
    object(
      { role: { const: 'assistant' }, content },
      { tool_calls: { type: 'array', minItems: 1, maxItems: MAX_TOOL_CALLS_PER_REPLY, items: toolCall } },
    ),
    object({ role: { const: 'tool' }, content: nonEmptyContent, tool_call_id: id, provenance }),
  ],
};

const pendingConfirmation = object({ call_id: id, approval_id: id, summary: text });

/** Data schema of every conversation event type, as registered. */
export const CONVERSATION_EVENT_SCHEMAS: Readonly<Record<ConversationEventType, JsonSchema>> = {
  [ConversationEventType.Started]: object(
    {
      conversation_id: id,
      agent_id: id,
      model: MODEL_NAME_SCHEMA,
      task: { type: 'string', minLength: 1, maxLength: 32_768 },
      device_id: { anyOf: [id, { type: 'null' }] },
      limits: object({
        max_steps: count(1),
        max_tool_calls: count(0),
        max_tokens: count(1),
        deadline: fragments.time,
      }),
    },
    { pinned_tools: PINNED_TOOLS_SCHEMA },
  ),
  [ConversationEventType.MessageAdded]: object({
    turn: count(0),
    message: CONVERSATION_MESSAGE_SCHEMA,
    usage: { anyOf: [object({ input_tokens: count(0), output_tokens: count(0) }), { type: 'null' }] },
  }),
  [ConversationEventType.Paused]: object({
    reason: { const: 'awaiting_approval' },
    pending: { type: 'array', minItems: 1, maxItems: 1000, items: pendingConfirmation },
  }),
  [ConversationEventType.Resumed]: object({ reason: text }),
  [ConversationEventType.Completed]: object({ final_text: content, reason: { enum: [...COMPLETION_REASONS] } }),
  [ConversationEventType.ToolActivated]: object({
    call_id: id,
    tool: TOOL_NAME_SCHEMA,
    version: { type: 'integer', minimum: 1, maximum: 1_000_000_000 },
  }),
};

for (const type of CONVERSATION_EVENT_TYPES) {
  registerSchema(type, {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: type,
    ...CONVERSATION_EVENT_SCHEMAS[type],
  });
}
