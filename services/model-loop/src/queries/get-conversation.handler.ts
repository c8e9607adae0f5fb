import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import {
  ConversationEventType,
  type ConversationMessageViewV1,
  type ConversationViewV1,
  type GetConversationRequestV1,
} from '@ormuz/contracts';
import { asOfPoint, type AsOf } from '@ormuz/event-log';
import { pendingConfirmations } from '../domain/conversation.js';
import { ConversationNotFoundError } from '../domain/errors.js';
import { ConversationViewRepository } from '../persistence/conversation-view.repository.js';
import { Conversations } from '../persistence/conversations.js';

export class GetConversationQuery extends Query<ConversationViewV1> {
  constructor(readonly request: GetConversationRequestV1) {
    super();
  }
}

/**
 * Answers from the read model; reading never acts. With `as_of`, the conversation as it stood then, folded from its
 * events on the log recorded by that time or sequence with the decider's own `evolve` (time travel).
 */
@QueryHandler(GetConversationQuery)
export class GetConversationHandler implements IQueryHandler<GetConversationQuery> {
  constructor(
    private readonly views: ConversationViewRepository,
    private readonly conversations: Conversations,
  ) {}

  async execute({ request }: GetConversationQuery): Promise<ConversationViewV1> {
    const view = request.as_of
      ? await this.asOf(request.tenant, request.conversation_id, asOfPoint(request.as_of, new Date()))
      : await this.views.find(request.tenant, request.conversation_id);
    if (!view) throw new ConversationNotFoundError(request.conversation_id);
    return view;
  }

  /** The view of the state folded from the events recorded by `asOf`; undefined when none was by then. */
  private async asOf(tenant: string, conversationId: string, asOf: AsOf): Promise<ConversationViewV1 | undefined> {
    const { state, events } = await this.conversations.read(tenant, conversationId, asOf);
    if (state.status === 'absent') return undefined;
    const messages = events.flatMap((e): ConversationMessageViewV1[] =>
      e.type === ConversationEventType.MessageAdded ? [{ turn: e.data.turn, ...e.data.message }] : [],
    );
    return {
      conversation_id: conversationId,
      status: state.status,
      model: state.facts.model,
      messages,
      pending: pendingConfirmations(state),
      final_text: state.completion?.final_text ?? null,
      completion_reason: state.completion?.reason ?? null,
      bound: state.completion?.bound ?? null,
      usage: {
        steps: state.turns,
        tool_calls: state.tool_calls_used,
        tokens: state.tokens_used,
        cost_usd: state.facts.price ? state.cost_usd : null,
      },
    };
  }
}
