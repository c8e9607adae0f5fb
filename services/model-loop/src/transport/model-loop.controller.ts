import { Controller } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import type { Identity } from '@ormuz/auth';
import type { RpcRequestOf } from '@ormuz/contracts';
import { Rpc } from '@ormuz/service-kit';
import { SetAgentModelCommand } from '../commands/set-agent-model.handler.js';
import { StartConversationCommand } from '../commands/start-conversation.handler.js';
import { GetAgentModelQuery, ListAgentModelsQuery } from '../queries/get-agent-model.handler.js';
import { GetConversationQuery } from '../queries/get-conversation.handler.js';
import { SetTenantLimitsCommand } from '../commands/set-tenant-limits.handler.js';
import { GetTenantLimitsQuery, GetTenantUsageQuery } from '../queries/tenant-day.handler.js';

/** NATS commands of model-loop: validated against the wire schema by @Rpc, dispatched. Errors map in NatsRpcServer. */
@Controller()
export class ModelLoopController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Rpc('model-loop.start')
  start(request: RpcRequestOf<'model-loop.start'>, caller: Identity) {
    return this.commands.execute(new StartConversationCommand(request, caller));
  }

  @Rpc('model-loop.get')
  get(request: RpcRequestOf<'model-loop.get'>) {
    return this.queries.execute(new GetConversationQuery(request));
  }

  @Rpc('model-loop.agents.set')
  setAgentModel(request: RpcRequestOf<'model-loop.agents.set'>, caller: Identity) {
    return this.commands.execute(new SetAgentModelCommand(request, caller.subject));
  }

  @Rpc('model-loop.agents.get')
  getAgentModel(request: RpcRequestOf<'model-loop.agents.get'>) {
    return this.queries.execute(new GetAgentModelQuery(request));
  }

  @Rpc('model-loop.agents.list')
  listAgentModels(request: RpcRequestOf<'model-loop.agents.list'>) {
    return this.queries.execute(new ListAgentModelsQuery(request));
  }

  @Rpc('model-loop.tenant.limits.set')
  setTenantLimits(request: RpcRequestOf<'model-loop.tenant.limits.set'>, caller: Identity) {
    return this.commands.execute(new SetTenantLimitsCommand(request, caller.subject));
  }

  @Rpc('model-loop.tenant.limits.get')
  getTenantLimits(request: RpcRequestOf<'model-loop.tenant.limits.get'>) {
    return this.queries.execute(new GetTenantLimitsQuery(request));
  }

  @Rpc('model-loop.tenant.usage')
  getTenantUsage(request: RpcRequestOf<'model-loop.tenant.usage'>) {
    return this.queries.execute(new GetTenantUsageQuery(request));
  }
}
