/**
 * The conversation aggregate as the service reaches it: one subject per conversation in the `conversations` stream,
 * changed only through the pure decider with optimistic concurrency (see `AggregateRepository`).
 */
import { ConversationEventType, type ConversationEventDraft, type ConversationMessageV1 } from '@ormuz/contracts';
import {
  AggregateRepository,
  type AggregateRecord,
  type AsOf,
  type Causation,
  type EventStore,
} from '@ormuz/event-log';
import { conversationDecider, type ConversationCommand, type ConversationState } from '../domain/conversation.js';

/** Who caused a change: the conversation is the correlation; the request or event that led to it is the causation. */
export type ConversationCause = Causation;

/** A conversation read whole from the log: its state, its events and every message in order. */
export interface ConversationRecord extends AggregateRecord<ConversationState, ConversationEventDraft> {
  readonly messages: readonly ConversationMessageV1[];
}

export class Conversations extends AggregateRepository<ConversationState, ConversationCommand, ConversationEventDraft> {
  constructor(store: EventStore, namespace: string, source = '/ormuz/model-loop') {
    super(store, namespace, source, { context: 'conversations', decider: conversationDecider });
  }

  /**
   * Reads every event of the conversation (direct gets, no consumer) and folds both its state and its transcript,
   * so the model is shown exactly the messages the decision is based on.
   */
  override async read(tenant: string, conversationId: string, asOf?: AsOf): Promise<ConversationRecord> {
    const record = await super.read(tenant, conversationId, asOf);
    const messages = record.events.flatMap((e) =>
      e.type === ConversationEventType.MessageAdded ? [e.data.message] : [],
    );
    return { ...record, messages };
  }
}
