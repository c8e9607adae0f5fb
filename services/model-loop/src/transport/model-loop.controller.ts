import { Controller } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import type { RpcRequestOf } from '@ormuz/contracts';
import { Rpc } from '@ormuz/service-kit';
import { StartConversationCommand } from '../commands/start-conversation.handler.js';
import { GetConversationQuery } from '../queries/get-conversation.handler.js';

/** NATS commands of model-loop: validated against the wire schema by @Rpc, dispatched. Errors map in NatsRpcServer. */
@Controller()
export class ModelLoopController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Rpc('model-loop.start')
  start(request: RpcRequestOf<'model-loop.start'>) {
    return this.commands.execute(new StartConversationCommand(request));
  }

  @Rpc('model-loop.get')
  get(request: RpcRequestOf<'model-loop.get'>) {
    return this.queries.execute(new GetConversationQuery(request));
  }
}
