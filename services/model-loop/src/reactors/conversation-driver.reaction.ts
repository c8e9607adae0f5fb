import type { CommandBus } from '@nestjs/cqrs';
import { contextFilter, type OrmuzEvent } from '@ormuz/contracts';
import { MODEL_LOOP_SCHEMA } from '../persistence/migrations.js';
import { streamName, type Delivery, type Reaction } from '@ormuz/event-log';
import { AdvanceConversationCommand } from '../commands/advance-conversation.handler.js';

/** Every conversation event runs the next step of that conversation's loop. */
export function conversationDriverReaction(namespace: string, commands: CommandBus): Reaction {
  return {
    name: 'model_loop_driver',
    schema: MODEL_LOOP_SCHEMA,
    stream: streamName(namespace, 'conversations'),
    filterSubject: contextFilter(namespace, 'conversations'),
    async handle(event: OrmuzEvent, delivery: Delivery) {
      await commands.execute(new AdvanceConversationCommand(event.tenant, event.subject, event.id, delivery.attempt));
    },
  };
}
