import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { ListWebhookDeliveriesRequestV1, WebhookDeliveryListV1 } from '@ormuz/contracts';
import { WebhookDeliveriesRepository } from '../persistence/webhook-deliveries.repository.js';

export class ListWebhookDeliveriesQuery extends Query<WebhookDeliveryListV1> {
  constructor(
    readonly request: ListWebhookDeliveriesRequestV1,
    /** An owner who decides for named agents sees only the deliveries about their calls. */
    readonly agents?: readonly string[],
  ) {
    super();
  }
}

/** The delivery log: what was sent to which endpoint, every attempt and what came back, and what is due next. */
@QueryHandler(ListWebhookDeliveriesQuery)
export class ListWebhookDeliveriesHandler implements IQueryHandler<ListWebhookDeliveriesQuery> {
  constructor(private readonly deliveries: WebhookDeliveriesRepository) {}
  async execute({ request, agents }: ListWebhookDeliveriesQuery): Promise<WebhookDeliveryListV1> {
    const deliveries = await this.deliveries.list(request.tenant, {
      ...(request.webhook_id ? { webhookId: request.webhook_id } : {}),
      ...(request.status ? { status: request.status } : {}),
      ...(request.approval_id ? { approvalId: request.approval_id } : {}),
      ...(agents ? { agents } : {}),
      limit: request.limit ?? 100,
    });
    return { deliveries };
  }
}
