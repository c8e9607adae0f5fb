import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { AgentModelV1, SetAgentModelRequestV1 } from '@ormuz/contracts';
import { UnknownModelError } from '../domain/errors.js';
import { ModelProviders } from '../domain/model-provider.js';
import { checkedModelSettings } from '../domain/model-settings.js';
import { AgentModelsRepository } from '../persistence/agent-models.repository.js';

export class SetAgentModelCommand extends Command<AgentModelV1> {
  constructor(
    readonly request: SetAgentModelRequestV1,
    /** The subject of the caller's credential, recorded as who set it. */
    readonly by: string,
  ) {
    super();
  }
}

/** Replaces an agent's model configuration, once the settings are sound and a provider serves the model with them. */
@CommandHandler(SetAgentModelCommand)
export class SetAgentModelHandler implements ICommandHandler<SetAgentModelCommand> {
  constructor(
    private readonly agentModels: AgentModelsRepository,
    private readonly models: ModelProviders,
  ) {}

  async execute({ request: r, by }: SetAgentModelCommand): Promise<AgentModelV1> {
    const settings = checkedModelSettings(r.settings);
    if (!this.models.for(r.model, settings)) throw new UnknownModelError(r.model, this.models.examples());
    return this.agentModels.save({ tenant: r.tenant, agent_id: r.agent_id, model: r.model, settings, updated_by: by });
  }
}
