import { Inject, Injectable, Module, type DynamicModule } from '@nestjs/common';
import { CommandBus, CqrsModule } from '@nestjs/cqrs';
import { ProjectionRunner, ReactionRunner } from '@ormuz/event-log';
import { INFRA, InfrastructureModule, ToolCalls, type Infrastructure } from '@ormuz/service-kit';
import { LeadingConsumers, LeadingConsumersHost } from '@ormuz/service-kit';
import { AdvanceConversationHandler } from './commands/advance-conversation.handler.js';
import { RecordCallOutcomeHandler } from './commands/record-call-outcome.handler.js';
import { RunCoreToolHandler } from './commands/run-core-tool.handler.js';
import { StartConversationHandler } from './commands/start-conversation.handler.js';
import { MODEL_LOOP_CONFIG, type ModelLoopConfig } from './config.js';
import { ModelProviders, type ModelProvider } from './domain/model-provider.js';
import { CORE_CATALOG, CoreToolsExecutor, loadCoreCatalog } from './executors/core-tools.executor.js';
import { ConversationViewRepository } from './persistence/conversation-view.repository.js';
import { Conversations } from './persistence/conversations.js';
import { conversationViewProjection } from './projections/conversation-view.projection.js';
import { httpModelProviders } from './providers/http-providers.js';
import { SetAgentModelHandler } from './commands/set-agent-model.handler.js';
import { AgentModelsRepository } from './persistence/agent-models.repository.js';
import { GetAgentModelHandler, ListAgentModelsHandler } from './queries/get-agent-model.handler.js';
import { ScriptedProvider } from './providers/scripted.provider.js';
import { GetConversationHandler } from './queries/get-conversation.handler.js';
import { callOutcomesReaction } from './reactors/call-outcomes.reaction.js';
import { coreToolsReaction } from './reactors/core-tools.reaction.js';
import { conversationDriverReaction } from './reactors/conversation-driver.reaction.js';
import { PolicyClient } from './transport/policy.client.js';
import { LiveTextPublisher } from './transport/live-text.publisher.js';
import { ModelLoopController } from './transport/model-loop.controller.js';
import { ModelLoopMetrics } from './metrics.js';
import { TenantDayBudget } from './commands/tenant-day-budget.js';
import { SetTenantLimitsHandler } from './commands/set-tenant-limits.handler.js';
import { TenantDays } from './persistence/tenant-days.js';
import { TenantLimitsRepository } from './persistence/tenant-limits.repository.js';
import { GetTenantLimitsHandler, GetTenantUsageHandler } from './queries/tenant-day.handler.js';

/**
 * Runs the read model and the loop's three reactors in the replica that holds model-loop's lease (LeadingConsumers),
 * and stops them (reactors first) with it; every replica serves the commands.
 */
@Injectable()
class ModelLoopWorkers extends LeadingConsumersHost {
  protected readonly leading: LeadingConsumers;

  constructor(@Inject(INFRA) infra: Infrastructure, commands: CommandBus) {
    super();
    const ns = infra.config.namespace;
    const opts = { logger: infra.logger };
    this.leading = new LeadingConsumers(infra, 'model-loop', [
      new ProjectionRunner(infra.js, infra.jsm, infra.db, conversationViewProjection(ns), opts),
      new ReactionRunner(infra.js, infra.jsm, infra.db, callOutcomesReaction(ns, commands), opts),
      new ReactionRunner(infra.js, infra.jsm, infra.db, conversationDriverReaction(ns, commands), opts),
      new ReactionRunner(infra.js, infra.jsm, infra.db, coreToolsReaction(ns, commands), opts),
    ]);
  }
}

export interface ModelLoopModuleOptions {
  /**
   * Model providers to serve; default: the scripted provider with its scripts (`scripted:demo`, `scripted:directory`,
   * `scripted:adversary`, `scripted:observer`) and the HTTP providers of `config.models` (keys read from the process environment).
   */
  readonly modelProviders?: readonly ModelProvider[];
  /** Where the HTTP providers read API keys at each call; default the process environment. */
  readonly environment?: Readonly<Record<string, string | undefined>>;
}

@Module({})
export class ModelLoopModule {
  static with(infra: Infrastructure, config: ModelLoopConfig, options: ModelLoopModuleOptions = {}): DynamicModule {
    return {
      module: ModelLoopModule,
      imports: [InfrastructureModule.forRoot(infra), CqrsModule.forRoot()],
      controllers: [ModelLoopController],
      providers: [
        { provide: MODEL_LOOP_CONFIG, useValue: config },
        { provide: Conversations, useFactory: () => new Conversations(infra.store, config.namespace) },
        { provide: TenantDays, useFactory: () => new TenantDays(infra.store, config.namespace) },
        TenantLimitsRepository,
        TenantDayBudget,
        SetTenantLimitsHandler,
        GetTenantLimitsHandler,
        GetTenantUsageHandler,
        // Model-loop loads calls to route their outcomes, and appends to a call only as the executor of core tools.
        { provide: ToolCalls, useFactory: () => new ToolCalls(infra.store, config.namespace, '/ormuz/model-loop') },
        { provide: CORE_CATALOG, useFactory: loadCoreCatalog },
        {
          provide: ModelProviders,
          useFactory: () =>
            new ModelProviders(
              options.modelProviders ?? [
                new ScriptedProvider(),
                ...httpModelProviders(config.models, options.environment ?? process.env, (entry) =>
                  infra.logger.warn(entry, 'model request retried'),
                ),
              ],
            ),
        },
        { provide: ModelLoopMetrics, useFactory: () => new ModelLoopMetrics(infra.metrics) },
        PolicyClient,
        LiveTextPublisher,
        ConversationViewRepository,
        StartConversationHandler,
        AgentModelsRepository,
        SetAgentModelHandler,
        GetAgentModelHandler,
        ListAgentModelsHandler,
        AdvanceConversationHandler,
        RecordCallOutcomeHandler,
        RunCoreToolHandler,
        CoreToolsExecutor,
        GetConversationHandler,
        ModelLoopWorkers,
      ],
    };
  }
}
