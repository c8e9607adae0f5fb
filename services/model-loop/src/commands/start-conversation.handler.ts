import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { randomUUID } from 'node:crypto';
import type { Identity } from '@ormuz/auth';
import type { StartConversationReplyV1, StartConversationRequestV1 } from '@ormuz/contracts';
import { MODEL_LOOP_CONFIG, type ModelLoopConfig } from '../config.js';
import { ModelSettingsForbiddenError, NoModelError, UnknownModelError } from '../domain/errors.js';
import { ModelProviders } from '../domain/model-provider.js';
import { checkedModelSettings, mergeModelSettings } from '../domain/model-settings.js';
import { AgentModelsRepository } from '../persistence/agent-models.repository.js';
import { Conversations } from '../persistence/conversations.js';
import { priceOf } from '../providers/common/prices.js';
import { TenantDayBudget } from './tenant-day-budget.js';

export class StartConversationCommand extends Command<StartConversationReplyV1> {
  constructor(
    readonly request: StartConversationRequestV1,
    readonly caller: Identity,
  ) {
    super();
  }
}

/**
 * Records the start and the task. The loop itself runs in the background, driven by the conversation's events; a
 * repeated start with the same id and facts answers the current status and changes nothing. The model is the start's,
 * else the agent's configured one; the settings recorded are the agent's (when its model is the one used) with the
 * start's over them, so the conversation keeps them whatever is configured later.
 */
@CommandHandler(StartConversationCommand)
export class StartConversationHandler implements ICommandHandler<StartConversationCommand> {
  constructor(
    private readonly conversations: Conversations,
    private readonly models: ModelProviders,
    private readonly agentModels: AgentModelsRepository,
    @Inject(MODEL_LOOP_CONFIG) private readonly config: ModelLoopConfig,
    private readonly budget: TenantDayBudget,
  ) {}

  /**
   * A cost bound with no price for the model is refused by the decider (`model_unpriced`), and a start while the
   * tenant's day has no room for a model turn as `tenant_day_spent`, before anything is recorded.
   */
  async execute({ request: r, caller }: StartConversationCommand): Promise<StartConversationReplyV1> {
    if (r.model_settings && caller.kind !== 'person') throw new ModelSettingsForbiddenError(r.agent_id);
    const own = checkedModelSettings(r.model_settings);
    const agent = await this.agentModels.find(r.tenant, r.agent_id);
    const model = r.model ?? agent?.model;
    if (!model) throw new NoModelError(r.agent_id);
    const settings = mergeModelSettings(agent?.model === model ? agent.settings : {}, own);
    if (!this.models.for(model, settings)) throw new UnknownModelError(model, this.models.examples());
    await this.budget.assertOpen(r.tenant, new Date());
    const id = r.conversation_id ?? `conv_${randomUUID().replaceAll('-', '')}`;
    const { state } = await this.conversations.execute(
      r.tenant,
      id,
      {
        type: 'StartConversation',
        data: {
          conversation_id: id,
          agent_id: r.agent_id,
          model,
          task: r.task,
          device_id: r.device_id,
          pinned_tools: r.pinned_tools ?? [],
          model_settings: settings,
          limits: this.config.limits,
          price: priceOf(this.config.prices, model),
        },
      },
      { correlationid: id, causationid: randomUUID() },
    );
    if (state.status === 'absent') throw new Error(`conversation ${id} is absent right after its start was recorded`);
    return { conversation_id: id, status: state.status };
  }
}
