import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { ConversationViewV1, GetConversationRequestV1 } from '@ormuz/contracts';
import { ConversationNotFoundError } from '../domain/errors.js';
import { ConversationViewRepository } from '../persistence/conversation-view.repository.js';

export class GetConversationQuery extends Query<ConversationViewV1> {
  constructor(readonly request: GetConversationRequestV1) {
    super();
  }
}

/** Answers from the read model; reading never acts. */
@QueryHandler(GetConversationQuery)
export class GetConversationHandler implements IQueryHandler<GetConversationQuery> {
  constructor(private readonly views: ConversationViewRepository) {}

  async execute({ request }: GetConversationQuery): Promise<ConversationViewV1> {
    const view = await this.views.find(request.tenant, request.conversation_id);
    if (!view) throw new ConversationNotFoundError(request.conversation_id);
    return view;
  }
}
