/**
 * Errors of the conversation domain. Each has a stable `code`; the NATS transport maps codes in one place.
 */
import { OrmuzError } from '@ormuz/contracts';

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
