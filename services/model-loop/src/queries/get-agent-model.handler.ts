import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type {
  AgentModelListV1,
  AgentModelV1,
  GetAgentModelRequestV1,
  ListAgentModelsRequestV1,
} from '@ormuz/contracts';
import { AgentModelNotFoundError } from '../domain/errors.js';
import { AgentModelsRepository } from '../persistence/agent-models.repository.js';

export class GetAgentModelQuery extends Query<AgentModelV1> {
  constructor(readonly request: GetAgentModelRequestV1) {
    super();
  }
}

/** One agent's model configuration. */
@QueryHandler(GetAgentModelQuery)
export class GetAgentModelHandler implements IQueryHandler<GetAgentModelQuery> {
  constructor(private readonly agentModels: AgentModelsRepository) {}

  async execute({ request }: GetAgentModelQuery): Promise<AgentModelV1> {
    const found = await this.agentModels.find(request.tenant, request.agent_id);
    if (!found) throw new AgentModelNotFoundError(request.agent_id);
    return found;
  }
}

export class ListAgentModelsQuery extends Query<AgentModelListV1> {
  constructor(readonly request: ListAgentModelsRequestV1) {
    super();
  }
}

/** Every configured agent of a tenant. */
@QueryHandler(ListAgentModelsQuery)
export class ListAgentModelsHandler implements IQueryHandler<ListAgentModelsQuery> {
  constructor(private readonly agentModels: AgentModelsRepository) {}

  async execute({ request }: ListAgentModelsQuery): Promise<AgentModelListV1> {
    return { agents: await this.agentModels.list(request.tenant) };
  }
}
