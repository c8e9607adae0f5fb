import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { RemovedWebhookV1, RemoveWebhookRequestV1 } from '@ormuz/contracts';
import { WebhookNotFoundError } from '../domain/errors.js';
import { WebhookEndpointsRepository } from '../persistence/webhook-endpoints.repository.js';

export class RemoveWebhookCommand extends Command<RemovedWebhookV1> {
  constructor(readonly request: RemoveWebhookRequestV1) {
    super();
  }
}

/**
 * Removes an endpoint: it is sent nothing more (its pending deliveries fail as not sent), and its deliveries stay in
 * the log, which is why the row is marked rather than deleted.
 */
@CommandHandler(RemoveWebhookCommand)
export class RemoveWebhookHandler implements ICommandHandler<RemoveWebhookCommand> {
  constructor(private readonly endpoints: WebhookEndpointsRepository) {}

  async execute({ request }: RemoveWebhookCommand): Promise<RemovedWebhookV1> {
    const row = await this.endpoints.remove(request.tenant, request.webhook_id, new Date());
    if (!row) throw new WebhookNotFoundError(request.tenant, request.webhook_id);
    return { webhook_id: row.webhook_id, removed_at: row.removed_at!.toISOString() };
  }
}
