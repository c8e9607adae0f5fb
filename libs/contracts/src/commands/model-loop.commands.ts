/**
 * Wire contracts of model-loop's NATS commands (`<namespace>.cmd.model-loop.<name>`). Versioned by name; old versions
 * stay readable when a new one is added. Replies use the shared `{ ok, data } | { ok: false, error }` shape.
 */
import {
  BoundReachedV1,
  CompletionReasonV1,
  conversationMessageSchema,
  MODEL_NAME_SCHEMA,
  ModelSettingsV1,
  PendingConfirmationV1,
  PINNED_TOOLS_SCHEMA,
} from '../events/conversation.events.js';
import { TenantDayLimitsV1, UTC_DAY_SCHEMA } from '../events/tenant-day.events.js';
import { AsOfV1 } from './as-of.js';
import { registerSchema } from '../schema-registry.js';
import { fragments, List, Nullable, Struct, Type, type Static } from '../wire.js';

/** Where a conversation stands. `paused`: waiting for an owner's decision on a staged call. */
export const ConversationStatusV1 = Type.Enum(['running', 'paused', 'completed']);
export type ConversationStatusV1 = Static<typeof ConversationStatusV1>;

/**
 * `model-loop.start`: begin a conversation and run it in the background. Tenant and agent come from the caller's
 * session. Starting again with the same `conversation_id` and the same task, agent, model and device is a no-op that
 * answers the conversation's current status; different values are refused as `conversation_conflict`.
 * An unknown model is refused as `unknown_model`, naming the models that exist.
 */
export const StartConversationRequestV1 = Struct({
  tenant: fragments.identifier,
  agent_id: fragments.identifier,
  /** The user's task, 1 to 32,768 characters. */
  task: Type.String({ minLength: 1, maxLength: 32_768 }),
  /** The device the agent acts on, or null for none (device tools are then refused by policy). */
  device_id: Nullable(fragments.identifier),
  /**
   * `<provider>:<model>`, e.g. `scripted:demo`; an unknown model is refused naming the ones that exist. Absent: the
   * agent's configured model (`model-loop.agents.set`), with its settings; refused as `no_model` when it has none.
   */
  model: Type.Optional(MODEL_NAME_SCHEMA),
  /**
   * Where this conversation's model is reached (base URL, key source, output bound, streaming), over the agent's
   * configuration when `model` is the agent's model, else over model-loop's. People only (operator or admin): an
   * agent's API key cannot point model-loop, and the key it sends, at another server.
   */
  model_settings: Type.Optional(ModelSettingsV1),
  /** The caller's own id for idempotent starts; generated (`conv_` + 32 hex) when absent. */
  conversation_id: Type.Optional(fragments.identifier),
  /**
   * Tools whose full schemas the model gets on every turn, even a small model (canonical names, at most 32). Added to
   * any pinned in model-loop's configuration; never widens the grant. Part of the start's facts: a repeated start
   * with another list is a `conversation_conflict`.
   */
  pinned_tools: Type.Optional(PINNED_TOOLS_SCHEMA),
});
export type StartConversationRequestV1 = Static<typeof StartConversationRequestV1>;

/** The conversation's id and status right after the start was recorded. */
export const StartConversationReplyV1 = Struct({ conversation_id: Type.String(), status: ConversationStatusV1 });
export type StartConversationReplyV1 = Static<typeof StartConversationReplyV1>;

/** `model-loop.get`: read a conversation from the read model (eventually consistent; it never acts). */
export const GetConversationRequestV1 = Struct({
  tenant: fragments.identifier,
  conversation_id: fragments.identifier,
  /**
   * The conversation as it stood then, folded from its events on the log (not the read model) recorded by that time
   * or sequence. Default: now, from the read model.
   */
  as_of: Type.Optional(AsOfV1),
});
export type GetConversationRequestV1 = Static<typeof GetConversationRequestV1>;

/** One message as `model-loop.get` returns it, with the model turn it belongs to. */
export const ConversationMessageViewV1 = conversationMessageSchema({ turn: Type.Integer({ minimum: 0 }) });
export type ConversationMessageViewV1 = Static<typeof ConversationMessageViewV1>;

/** A conversation as the read model holds it. Unknown ids are answered with `conversation_not_found`. */
export const ConversationViewV1 = Struct({
  conversation_id: Type.String(),
  status: ConversationStatusV1,
  /** `<provider>:<model>` the conversation runs on. */
  model: Type.String(),
  /** Every message in log order, the task first. */
  messages: List(ConversationMessageViewV1),
  /** Staged calls still waiting for the owner (listed as soon as policy stages them). */
  pending: List(PendingConfirmationV1),
  /** The final answer (or the sentence naming the bound that stopped the loop); null until completed. */
  final_text: Nullable(Type.String()),
  /** Why the loop stopped; null until completed. */
  completion_reason: Nullable(CompletionReasonV1),
  /** The bound that stopped the loop, with its figures; null while running and when no bound stopped it. */
  bound: Nullable(BoundReachedV1),
  /** What the conversation used so far: model turns, tool calls requested, tokens, and cost (null when unpriced). */
  usage: Struct({
    steps: Type.Integer({ minimum: 0 }),
    tool_calls: Type.Integer({ minimum: 0 }),
    tokens: Type.Integer({ minimum: 0 }),
    cost_usd: Nullable(Type.Number({ minimum: 0 })),
  }),
});
export type ConversationViewV1 = Static<typeof ConversationViewV1>;

/**
 * `model-loop.agents.set`: choose an agent's model and where it is reached; conversations started for the agent
 * without a model use it. Replaces the agent's whole configuration. The model must be one model-loop serves with
 * these settings (`unknown_model` otherwise); bad settings are refused as `invalid_model_settings`. Never a key: the
 * settings name the variable or file holding it.
 */
export const SetAgentModelRequestV1 = Struct({
  tenant: fragments.identifier,
  agent_id: fragments.identifier,
  model: MODEL_NAME_SCHEMA,
  settings: Type.Optional(ModelSettingsV1),
});
export type SetAgentModelRequestV1 = Static<typeof SetAgentModelRequestV1>;

/** `model-loop.agents.get`: one agent's model configuration; `agent_model_not_found` when none was set. */
export const GetAgentModelRequestV1 = Struct({ tenant: fragments.identifier, agent_id: fragments.identifier });
export type GetAgentModelRequestV1 = Static<typeof GetAgentModelRequestV1>;

/** `model-loop.agents.list`: every configured agent of the tenant, by agent id. */
export const ListAgentModelsRequestV1 = Struct({ tenant: fragments.identifier });
export type ListAgentModelsRequestV1 = Static<typeof ListAgentModelsRequestV1>;

/** An agent's model configuration as stored. */
export const AgentModelV1 = Struct({
  tenant: Type.String(),
  agent_id: Type.String(),
  model: Type.String(),
  settings: ModelSettingsV1,
  /** Who set it: the subject of the credential. */
  updated_by: Type.String(),
  /** ISO 8601. */
  updated_at: Type.String(),
});
export type AgentModelV1 = Static<typeof AgentModelV1>;

export const AgentModelListV1 = Struct({ agents: List(AgentModelV1) });
export type AgentModelListV1 = Static<typeof AgentModelListV1>;

const dayLimit = Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })));

/**
 * `model-loop.tenant.limits.set`: the tenant's own daily limits. A field given sets that limit; `null` removes the
 * tenant's own, so the default of model-loop's configuration applies again; an absent field is left as it is. Takes
 * effect at the next claim of every conversation of the tenant (docs/decisions/0036).
 */
export const SetTenantLimitsRequestV1 = Struct({
  tenant: fragments.identifier,
  day_steps: dayLimit,
  day_tool_calls: dayLimit,
  day_tokens: dayLimit,
  day_cost_usd: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1_000_000_000 }))),
});
export type SetTenantLimitsRequestV1 = Static<typeof SetTenantLimitsRequestV1>;

/** `model-loop.tenant.limits.get`: the tenant's daily limits. */
export const GetTenantLimitsRequestV1 = Struct({ tenant: fragments.identifier });
export type GetTenantLimitsRequestV1 = Static<typeof GetTenantLimitsRequestV1>;

/** A tenant's daily limits: those in force, the tenant's own and the configured defaults (absent: no limit). */
export const TenantLimitsV1 = Struct({
  tenant: Type.String(),
  limits: TenantDayLimitsV1,
  own: TenantDayLimitsV1,
  defaults: TenantDayLimitsV1,
  /** Who last set the tenant's own, and when (ISO 8601); null when never. */
  updated_by: Nullable(Type.String()),
  updated_at: Nullable(Type.String()),
});
export type TenantLimitsV1 = Static<typeof TenantLimitsV1>;

/** `model-loop.tenant.usage`: what the tenant used in one UTC day (default today), read from the log. */
export const GetTenantUsageRequestV1 = Struct({ tenant: fragments.identifier, day: Type.Optional(UTC_DAY_SCHEMA) });
export type GetTenantUsageRequestV1 = Static<typeof GetTenantUsageRequestV1>;

/** A tenant's usage of one UTC day, against the limits in force now. */
export const TenantUsageV1 = Struct({
  tenant: Type.String(),
  day: Type.String(),
  usage: Struct({
    steps: Type.Integer({ minimum: 0 }),
    tool_calls: Type.Integer({ minimum: 0 }),
    tokens: Type.Integer({ minimum: 0 }),
    cost_usd: Type.Number({ minimum: 0 }),
  }),
  limits: TenantDayLimitsV1,
  /** The first limit the day has reached (no further model turn starts), or null. */
  spent: Nullable(BoundReachedV1),
});
export type TenantUsageV1 = Static<typeof TenantUsageV1>;

export const MODEL_LOOP_START_V1 = 'model-loop.start.v1';
export const MODEL_LOOP_GET_V1 = 'model-loop.get.v1';
export const MODEL_LOOP_AGENTS_SET_V1 = 'model-loop.agents.set.v1';
export const MODEL_LOOP_AGENTS_GET_V1 = 'model-loop.agents.get.v1';
export const MODEL_LOOP_AGENTS_LIST_V1 = 'model-loop.agents.list.v1';
export const MODEL_LOOP_TENANT_LIMITS_SET_V1 = 'model-loop.tenant.limits.set.v1';
export const MODEL_LOOP_TENANT_LIMITS_GET_V1 = 'model-loop.tenant.limits.get.v1';
export const MODEL_LOOP_TENANT_USAGE_V1 = 'model-loop.tenant.usage.v1';

registerSchema(MODEL_LOOP_START_V1, StartConversationRequestV1);
registerSchema(MODEL_LOOP_GET_V1, GetConversationRequestV1);
registerSchema(MODEL_LOOP_AGENTS_SET_V1, SetAgentModelRequestV1);
registerSchema(MODEL_LOOP_AGENTS_GET_V1, GetAgentModelRequestV1);
registerSchema(MODEL_LOOP_AGENTS_LIST_V1, ListAgentModelsRequestV1);
registerSchema(MODEL_LOOP_TENANT_LIMITS_SET_V1, SetTenantLimitsRequestV1);
registerSchema(MODEL_LOOP_TENANT_LIMITS_GET_V1, GetTenantLimitsRequestV1);
registerSchema(MODEL_LOOP_TENANT_USAGE_V1, GetTenantUsageRequestV1);

/** Schema name of a live text delta's body ({@link LiveTextDeltaV1}). */
export const MODEL_LOOP_TEXT_DELTA_V1 = 'model-loop.text_delta.v1';
/** The longest text one delta frame carries; a longer piece of a reply goes out as several frames. */
export const MAX_TEXT_DELTA_CHARS = 4096;

/**
 * One piece of a model reply's text as a streaming provider received it, published on core NATS
 * (`liveConversationSubject`) while the reply arrives, for a live view such as `ormuz agent run`. It is not an event:
 * nothing stores it, a listener may miss or reorder some, and the reply recorded on the log (`AddModelReply`) is the
 * one truth a view settles on. Within a turn, the text of one take (`attempt`, `try`) is its frames' `text` in `seq`
 * order; a later take starts the turn's text again from its start (the loop asked the model again, or the transport
 * retried a broken stream).
 */
export const LiveTextDeltaV1 = Struct({
  /** The model turn the reply answers (0-based, the `turn` of the assistant message it becomes). */
  turn: Type.Integer({ minimum: 0 }),
  /** The loop's attempt at the turn, from 1: the model is asked again after a failed attempt. */
  attempt: Type.Integer({ minimum: 1 }),
  /** The provider's HTTP try within the attempt, from 1: a stream cut off is requested again. */
  try: Type.Integer({ minimum: 1 }),
  /** The frame's place in its take, from 0, without gaps. */
  seq: Type.Integer({ minimum: 0 }),
  text: Type.String({ minLength: 1, maxLength: MAX_TEXT_DELTA_CHARS }),
});
export type LiveTextDeltaV1 = Static<typeof LiveTextDeltaV1>;
registerSchema(MODEL_LOOP_TEXT_DELTA_V1, LiveTextDeltaV1);
