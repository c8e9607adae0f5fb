import { Controller } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import type { Identity } from '@ormuz/auth';
import type { RpcRequestOf } from '@ormuz/contracts';
import { Rpc } from '@ormuz/service-kit';
import { RemoveWebhookCommand } from '../commands/remove-webhook.handler.js';
import { SetWebhookCommand } from '../commands/set-webhook.handler.js';
import { ListWebhookDeliveriesQuery } from '../queries/list-webhook-deliveries.handler.js';
import { ListWebhooksQuery } from '../queries/list-webhooks.handler.js';
import { ownerAgents } from './approvals.rpc.controller.js';

/**
 * NATS commands for a tenant's webhooks: `approvals.webhooks.set|list|remove` (operators) and
 * `approvals.webhooks.deliveries` (operators and owners), what the owners' console calls.
 */
@Controller()
export class WebhooksRpcController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Rpc('approvals.webhooks.set')
  set(request: RpcRequestOf<'approvals.webhooks.set'>) {
    return this.commands.execute(new SetWebhookCommand(request));
  }

  @Rpc('approvals.webhooks.list')
  list(request: RpcRequestOf<'approvals.webhooks.list'>) {
    return this.queries.execute(new ListWebhooksQuery(request));
  }

  @Rpc('approvals.webhooks.remove')
  remove(request: RpcRequestOf<'approvals.webhooks.remove'>) {
    return this.commands.execute(new RemoveWebhookCommand(request));
  }

  @Rpc('approvals.webhooks.deliveries')
  deliveries(request: RpcRequestOf<'approvals.webhooks.deliveries'>, caller: Identity) {
    return this.queries.execute(new ListWebhookDeliveriesQuery(request, ownerAgents(caller)));
  }
}
