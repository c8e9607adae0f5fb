import type { CommandBus } from '@nestjs/cqrs';
import { contextFilter, type OrmuzEvent } from '@ormuz/contracts';
import { streamName } from '@ormuz/event-log';
import { AdvanceConversationCommand } from '../commands/advance-conversation.handler.js';
import type { Delivery, Reaction } from './durable-reactor.js';

/** Every conversation event runs the next step of that conversation's loop. */
export function conversationDriverReaction(namespace: string, commands: CommandBus): Reaction {
  return {
    name: 'model_loop_driver',
    stream: streamName(namespace, 'conversations'),
    filterSubject: contextFilter(namespace, 'conversations'),
    async handle(event: OrmuzEvent, delivery: Delivery) {
      await commands.execute(new AdvanceConversationCommand(event.tenant, event.subject, event.id, delivery.attempt));
    },
  };
}
