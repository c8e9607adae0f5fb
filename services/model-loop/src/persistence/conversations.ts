/**
 * The conversation aggregate as the service reaches it: one subject per conversation in the `conversations` stream,
 * changed only through the pure decider with optimistic concurrency (see `runCommand`).
 */
import {
  aggregateSubject,
  ConversationEventType,
  type ConversationEventDraft,
  type ConversationMessageV1,
} from '@ormuz/contracts';
import { runCommand, streamName, type CommandResult, type Decider, type EventStore } from '@ormuz/event-log';
import { conversationDecider, type ConversationCommand, type ConversationState } from '../domain/conversation.js';

const decider: Decider<ConversationState, ConversationCommand, ConversationEventDraft> = conversationDecider;

/** Who caused a change: the conversation is the correlation; the request or event that led to it is the causation. */
export interface ConversationCause {
  readonly correlationid: string;
  readonly causationid: string;
}

/** A conversation read whole from the log: its state and every message in order. */
export interface ConversationRecord {
  readonly state: ConversationState;
  readonly version: number;
  readonly messages: readonly ConversationMessageV1[];
}

export class Conversations {
  readonly stream: string;

  constructor(
    private readonly store: EventStore,
    private readonly namespace: string,
    private readonly source = '/ormuz/model-loop',
  ) {
    this.stream = streamName(namespace, 'conversations');
  }

  /** The conversation's subject. Throws InvalidIdentifierError for an unsafe tenant or id. */
  subject(tenant: string, conversationId: string): string {
    return aggregateSubject(this.namespace, 'conversations', tenant, conversationId);
  }

  /** Runs a command (load, decide, append, retry on conflict). Domain errors propagate. */
  execute(
    tenant: string,
    conversationId: string,
    command: ConversationCommand,
    cause: ConversationCause,
  ): Promise<CommandResult<ConversationState>> {
    return runCommand(this.store, this.stream, this.subject(tenant, conversationId), decider, command, {
      source: this.source,
      tenant,
      aggregateId: conversationId,
      ...cause,
    });
  }

  /**
   * Reads every event of the conversation (direct gets, no consumer) and folds both its state and its transcript,
   * so the model is shown exactly the messages the decision is based on.
   */
  async read(tenant: string, conversationId: string): Promise<ConversationRecord> {
    let state = decider.initialState;
    let version = 0;
    const messages: ConversationMessageV1[] = [];
    for await (const { seq, event } of this.store.readSubject(this.stream, this.subject(tenant, conversationId))) {
      const draft = event as unknown as ConversationEventDraft;
      state = decider.evolve(state, draft);
      if (draft.type === ConversationEventType.MessageAdded) messages.push(draft.data.message);
      version = seq;
    }
    return { state, version, messages };
  }
}
