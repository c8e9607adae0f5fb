import { Inject, Injectable, Module, type DynamicModule } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { ProjectionRunner, ReactionRunner } from '@ormuz/event-log';
import { INFRA, InfrastructureModule, ToolCalls, type Infrastructure } from '@ormuz/service-kit';
import { LeadingConsumers, LeadingConsumersHost } from '@ormuz/service-kit';
import { DecideApprovalHandler } from './commands/decide-approval.handler.js';
import { ExpireApprovalsSweeper } from './commands/expire-approvals.sweeper.js';
import { ApiModule } from './api/api.module.js';
import { RemoveWebhookHandler } from './commands/remove-webhook.handler.js';
import { SetWebhookHandler } from './commands/set-webhook.handler.js';
import { APPROVALS_CONFIG, type ApprovalsConfig } from './config.js';
import { ConsoleModule } from './console/console.module.js';
import { InboxNotices } from './console/inbox-notices.js';
import { WebhookAddressGuard } from './delivery/webhook-address-guard.js';
import { WebhookDeliverer } from './delivery/webhook-deliverer.js';
import { WebhookSender } from './delivery/webhook-sender.js';
import { InboxRepository } from './persistence/inbox.repository.js';
import { ApprovalsMetrics } from './metrics.js';
import { WebhookDeliveriesRepository } from './persistence/webhook-deliveries.repository.js';
import { WebhookEndpointsRepository } from './persistence/webhook-endpoints.repository.js';
import { WebhookSecretBox } from './persistence/webhook-secret-box.js';
import { inboxProjection } from './projections/inbox.projection.js';
import { ListApprovalsHandler } from './queries/list-approvals.handler.js';
import { ListWebhookDeliveriesHandler } from './queries/list-webhook-deliveries.handler.js';
import { ListWebhooksHandler } from './queries/list-webhooks.handler.js';
import { webhookDeliveriesReaction } from './reactors/webhook-deliveries.reaction.js';
import { ApprovalsRpcController } from './transport/approvals.rpc.controller.js';
import { WebhooksRpcController } from './transport/webhooks.rpc.controller.js';

/**
 * Runs the inbox read model and the webhook reaction (events to deliveries) in the replica that holds approvals'
 * lease (LeadingConsumers); every replica serves the commands, and the deliverer of each sends what is recorded.
 */
@Injectable()
export class ApprovalsConsumers extends LeadingConsumersHost {
  protected readonly leading: LeadingConsumers;
  constructor(
    @Inject(INFRA) infra: Infrastructure,
    calls: ToolCalls,
    endpoints: WebhookEndpointsRepository,
    deliveries: WebhookDeliveriesRepository,
    deliverer: WebhookDeliverer,
  ) {
    super();
    const ns = infra.config.namespace;
    const notices = new InboxNotices(infra.nc, ns);
    const inbox = inboxProjection(ns, (tenant, approvalId) => notices.publish(tenant, approvalId));
    const webhooks = webhookDeliveriesReaction(ns, {
      endpoints,
      deliveries,
      calls,
      onEnqueued: () => deliverer.wake(),
    });
    this.leading = new LeadingConsumers(infra, 'approvals', [
      new ProjectionRunner(infra.js, infra.jsm, infra.db, inbox, { logger: infra.logger }),
      new ReactionRunner(infra.js, infra.jsm, infra.db, webhooks, { logger: infra.logger }),
    ]);
  }
}

@Module({})
export class ApprovalsModule {
  static with(infra: Infrastructure, config: ApprovalsConfig): DynamicModule {
    return {
      module: ApprovalsModule,
      // The configuration is global: the console's and the API's modules read it too.
      global: true,
      exports: [APPROVALS_CONFIG],
      // The HTTP API (ApiModule) serves the inbox's routes too, through the same NATS commands as every caller.
      imports: [InfrastructureModule.forRoot(infra), CqrsModule.forRoot(), ApiModule, ConsoleModule],
      controllers: [ApprovalsRpcController, WebhooksRpcController],
      providers: [
        { provide: APPROVALS_CONFIG, useValue: config },
        { provide: ToolCalls, useFactory: () => new ToolCalls(infra.store, config.namespace, '/ormuz/approvals') },
        InboxRepository,
        {
          provide: ApprovalsMetrics,
          useFactory: (inbox: InboxRepository) =>
            new ApprovalsMetrics(infra.metrics, () => inbox.pendingSummary(), infra.logger),
          inject: [InboxRepository],
        },
        DecideApprovalHandler,
        ListApprovalsHandler,
        ExpireApprovalsSweeper,
        WebhookEndpointsRepository,
        WebhookDeliveriesRepository,
        SetWebhookHandler,
        RemoveWebhookHandler,
        ListWebhooksHandler,
        ListWebhookDeliveriesHandler,
        WebhookAddressGuard,
        WebhookSecretBox,
        WebhookSender,
        WebhookDeliverer,
        ApprovalsConsumers,
      ],
    };
  }
}
