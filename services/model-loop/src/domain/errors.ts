/**
 * Errors of the conversation domain. Each has a stable `code`; the NATS transport maps codes in one place.
 */
import { OrmuzError, type BoundNameV1, type BoundReachedV1 } from '@ormuz/contracts';

/** No conversation with this id exists (or the read model has not caught up with its start yet). */
export class ConversationNotFoundError extends OrmuzError {
  readonly code = 'conversation_not_found';
  constructor(readonly conversationId: string) {
    super(
      `No conversation ${conversationId} exists for this tenant. Check the id (it comes from model-loop.start); a ` +
        'conversation started a moment ago may take a few milliseconds to become readable.',
    );
  }
}

/** A start reused a conversation id with a different task, agent, model or device. */
export class ConversationConflictError extends OrmuzError {
  readonly code = 'conversation_conflict';
  constructor(
    readonly conversationId: string,
    readonly differences: readonly string[],
  ) {
    super(
      `Conversation ${conversationId} already exists with a different ${differences.join(', ')}. Start a new ` +
        'conversation with another id (or none, to have one generated).',
    );
  }
}

/** A tool result names a call that no model reply of this conversation requested. */
export class UnknownToolCallError extends OrmuzError {
  readonly code = 'unknown_tool_call';
  constructor(
    readonly conversationId: string,
    readonly callId: string,
  ) {
    super(`Conversation ${conversationId} never requested call ${callId}; its result was not added.`);
  }
}

/** The command does not fit where the conversation stands; reload it and act on what it shows now. */
export class ConversationStateError extends OrmuzError {
  readonly code = 'invalid_conversation_transition';
  constructor(
    readonly conversationId: string,
    readonly status: string,
    readonly command: string,
    reason: string,
  ) {
    super(`${command} cannot be applied to conversation ${conversationId} (${status}): ${reason}.`);
  }
}

/** A command carried values that can never be valid (a bug in the caller, not a race). */
export class InvalidConversationCommandError extends OrmuzError {
  readonly code = 'invalid_conversation_command';
  constructor(
    readonly command: string,
    reason: string,
  ) {
    super(`${command} is invalid: ${reason}.`);
  }
}

/** The model named at start is not served by any configured provider. */
export class UnknownModelError extends OrmuzError {
  readonly code = 'unknown_model';
  constructor(
    readonly model: string,
    readonly available: readonly string[],
  ) {
    super(`There is no model "${model}". Use one of: ${available.join(', ')}.`);
  }
}

/** Model settings that can never work (a base URL that is not http(s), a key file path that is not absolute). */
export class InvalidModelSettingsError extends OrmuzError {
  readonly code = 'invalid_model_settings';
  constructor(readonly problems: readonly string[]) {
    super(`The model settings cannot be used: ${problems.join('; ')}.`);
  }
}

/** A start named no model and its agent has none configured. */
export class NoModelError extends OrmuzError {
  readonly code = 'no_model';
  constructor(readonly agentId: string) {
    super(
      `Agent ${agentId} has no model configured and the start named none. Name one (model, e.g. scripted:demo), or ` +
        `configure the agent's: ormuz agents set --agent ${agentId} --model <provider>:<model>.`,
    );
  }
}

/** No model configuration was set for this agent. */
export class AgentModelNotFoundError extends OrmuzError {
  readonly code = 'agent_model_not_found';
  constructor(readonly agentId: string) {
    super(
      `Agent ${agentId} has no model configured in this tenant; ormuz agents set --agent ${agentId} --model ` +
        '<provider>:<model> configures one.',
    );
  }
}

/** Per-conversation model settings came with an agent's API key; only people (operators, admins) may send them. */
export class ModelSettingsForbiddenError extends OrmuzError {
  readonly code = 'forbidden';
  constructor(readonly agentId: string) {
    super(
      `An agent's API key cannot choose where its model is reached (model_settings): that decides which server the ` +
        `conversation and the platform's key go to. An operator sets it for the agent: ormuz agents set --agent ${agentId} ...`,
    );
  }
}

/** A cost bound is configured but the price table has no price for the model: the bound could not be enforced. */
export class UnpricedModelError extends OrmuzError {
  readonly code = 'model_unpriced';
  constructor(
    readonly model: string,
    readonly maxCostUsd: number,
  ) {
    super(
      `Conversations are bounded to $${maxCostUsd} each, but the price table has no price for "${model}", so its ` +
        'cost could not be counted. Add the model to MODEL_LOOP_MODEL_PRICES (US dollars per million input and ' +
        'output tokens), or use a priced model.',
    );
  }
}

/** The provider could not produce a reply (network, rate limit, malformed answer). Retried, then the loop fails. */
export class ModelUnavailableError extends OrmuzError {
  readonly code = 'model_unavailable';
  constructor(
    readonly model: string,
    reason: string,
  ) {
    super(`The model ${model} did not answer: ${reason}.`);
  }
}

export const isConversationNotFoundError = (e: unknown): e is ConversationNotFoundError =>
  e instanceof ConversationNotFoundError;
export const isUnknownToolCallError = (e: unknown): e is UnknownToolCallError => e instanceof UnknownToolCallError;
export const isConversationStateError = (e: unknown): e is ConversationStateError =>
  e instanceof ConversationStateError;
export const isModelUnavailableError = (e: unknown): e is ModelUnavailableError => e instanceof ModelUnavailableError;

/**
 * The tenant's daily limit is reached: no model turn (or, for `tenant_day_tool_calls`, no more tool calls) of any of
 * its conversations starts before the next UTC day, unless the limit is raised.
 */
export class TenantDaySpentError extends OrmuzError {
  readonly code = 'tenant_day_spent';
  constructor(
    readonly tenant: string,
    readonly day: string,
    readonly bound: TenantDayBoundReached,
  ) {
    super(
      `Tenant ${tenant} has reached its daily limit on ${day} (UTC): ${describeDayBound(bound)}. Its conversations ` +
        `start again after 00:00 UTC, or when the limit is raised: ormuz tenant limits set --tenant ${tenant} ` +
        `${DAY_LIMIT_OPTIONS[bound.bound]} <more>.`,
    );
  }
}

/** A daily bound of the tenant: also the completion reason of a conversation it stops. */
export type TenantDayBoundName = Extract<BoundNameV1, `tenant_day_${string}`>;
export type TenantDayBoundReached = BoundReachedV1 & { readonly bound: TenantDayBoundName };

const DAY_LIMIT_OPTIONS: Readonly<Record<TenantDayBoundName, string>> = {
  tenant_day_steps: '--day-steps',
  tenant_day_tool_calls: '--day-calls',
  tenant_day_tokens: '--day-tokens',
  tenant_day_cost: '--day-cost',
};

/** A tenant-day bound in words: `1,200 of 1,000 tokens used`. */
export function describeDayBound(b: TenantDayBoundReached): string {
  switch (b.bound) {
    case 'tenant_day_steps':
      return `${b.used} of ${b.limit} model turns used`;
    case 'tenant_day_tool_calls':
      return `${b.used} of ${b.limit} tool calls used`;
    case 'tenant_day_tokens':
      return `${b.used.toLocaleString('en')} of ${b.limit.toLocaleString('en')} tokens used`;
    case 'tenant_day_cost':
      return `$${b.used.toFixed(4)} of $${b.limit.toFixed(4)} spent`;
  }
}

export const isTenantDaySpentError = (e: unknown): e is TenantDaySpentError => e instanceof TenantDaySpentError;
