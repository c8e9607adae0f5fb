/**
 * Wire contracts of model-loop's NATS commands (`<namespace>.cmd.model-loop.<name>`). Versioned by name; old versions
 * stay readable when a new one is added. Replies use the shared `{ ok, data } | { ok: false, error }` shape.
 */
import {
  MODEL_NAME_SCHEMA,
  PINNED_TOOLS_SCHEMA,
  type CompletionReasonV1,
  type ConversationMessageV1,
  type PendingConfirmationV1,
} from '../events/conversation.events.js';
import { fragments, registerSchema } from '../schema-registry.js';

/** Where a conversation stands. `paused`: waiting for an owner's decision on a staged call. */
export type ConversationStatusV1 = 'running' | 'paused' | 'completed';

/**
 * `model-loop.start`: begin a conversation and run it in the background. Tenant and agent come from the caller's
 * session. Starting again with the same `conversation_id` and the same task, agent, model and device is a no-op that
 * answers the conversation's current status; different values are refused as `conversation_conflict`.
 * An unknown model is refused as `unknown_model`, naming the models that exist.
 */
export interface StartConversationRequestV1 {
  readonly tenant: string;
  readonly agent_id: string;
  /** The user's task, 1 to 32,768 characters. */
  readonly task: string;
  /** The device the agent acts on, or null for none (device tools are then refused by policy). */
  readonly device_id: string | null;
  /** `<provider>:<model>`, e.g. `scripted:demo`; an unknown model is refused naming the ones that exist. */
  readonly model: string;
  /** The caller's own id for idempotent starts; generated (`conv_` + 32 hex) when absent. */
  readonly conversation_id?: string;
  /**
   * Tools whose full schemas the model gets on every turn, even a small model (canonical names, at most 32). Added to
   * any pinned in model-loop's configuration; never widens the grant. Part of the start's facts: a repeated start
   * with another list is a `conversation_conflict`.
   */
  readonly pinned_tools?: readonly string[];
}

/** The conversation's id and status right after the start was recorded. */
export interface StartConversationReplyV1 {
  readonly conversation_id: string;
  readonly status: ConversationStatusV1;
}

/** `model-loop.get`: read a conversation from the read model (eventually consistent; it never acts). */
export interface GetConversationRequestV1 {
  readonly tenant: string;
  readonly conversation_id: string;
}

/** One message as `model-loop.get` returns it, with the model turn it belongs to. */
export type ConversationMessageViewV1 = ConversationMessageV1 & { readonly turn: number };

/** A conversation as the read model holds it. Unknown ids are answered with `conversation_not_found`. */
export interface ConversationViewV1 {
  readonly conversation_id: string;
  readonly status: ConversationStatusV1;
  /** Every message in log order, the task first. */
  readonly messages: readonly ConversationMessageViewV1[];
  /** Staged calls still waiting for the owner (listed as soon as policy stages them). */
  readonly pending: readonly PendingConfirmationV1[];
  /** The final answer (or the sentence naming the bound that stopped the loop); null until completed. */
  readonly final_text: string | null;
  /** Why the loop stopped; null until completed. */
  readonly completion_reason: CompletionReasonV1 | null;
}

export const MODEL_LOOP_START_V1 = 'model-loop.start.v1';
export const MODEL_LOOP_GET_V1 = 'model-loop.get.v1';

registerSchema(MODEL_LOOP_START_V1, {
  type: 'object',
  additionalProperties: false,
  required: ['tenant', 'agent_id', 'task', 'device_id', 'model'],
  properties: {
    tenant: fragments.identifier,
    agent_id: fragments.identifier,
    task: { type: 'string', minLength: 1, maxLength: 32_768 },
    device_id: { anyOf: [fragments.identifier, { type: 'null' }] },
    model: MODEL_NAME_SCHEMA,
    conversation_id: fragments.identifier,
    pinned_tools: PINNED_TOOLS_SCHEMA,
  },
});
registerSchema(MODEL_LOOP_GET_V1, {
  type: 'object',
  additionalProperties: false,
  required: ['tenant', 'conversation_id'],
  properties: { tenant: fragments.identifier, conversation_id: fragments.identifier },
});
