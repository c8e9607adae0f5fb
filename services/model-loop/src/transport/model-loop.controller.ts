import { Controller } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  assertValid,
  MODEL_LOOP_GET_V1,
  MODEL_LOOP_START_V1,
  type GetConversationRequestV1,
  type StartConversationRequestV1,
} from '@ormuz/contracts';
import { StartConversationCommand } from '../commands/start-conversation.handler.js';
import { GetConversationQuery } from '../queries/get-conversation.handler.js';

/** NATS commands of model-loop: validate against the wire schema, dispatch. Errors map in NatsRpcServer. */
@Controller()
export class ModelLoopController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @MessagePattern('start')
  start(@Payload() body: unknown) {
    return this.commands.execute(
      new StartConversationCommand(assertValid<StartConversationRequestV1>(MODEL_LOOP_START_V1, body)),
    );
  }

  @MessagePattern('get')
  get(@Payload() body: unknown) {
    return this.queries.execute(
      new GetConversationQuery(assertValid<GetConversationRequestV1>(MODEL_LOOP_GET_V1, body)),
    );
  }
}
