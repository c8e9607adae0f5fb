import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { ListWebhooksRequestV1, WebhookListV1 } from '@ormuz/contracts';
import { toWebhookView, WebhookEndpointsRepository } from '../persistence/webhook-endpoints.repository.js';

export class ListWebhooksQuery extends Query<WebhookListV1> {
  constructor(readonly request: ListWebhooksRequestV1) {
    super();
  }
}

/** A tenant's endpoints, without their secrets. */
@QueryHandler(ListWebhooksQuery)
export class ListWebhooksHandler implements IQueryHandler<ListWebhooksQuery> {
  constructor(private readonly endpoints: WebhookEndpointsRepository) {}
  async execute({ request }: ListWebhooksQuery): Promise<WebhookListV1> {
    return { webhooks: (await this.endpoints.list(request.tenant)).map(toWebhookView) };
  }
}
