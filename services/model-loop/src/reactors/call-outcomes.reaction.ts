import type { CommandBus } from '@nestjs/cqrs';
import { contextFilter, type OrmuzEvent } from '@ormuz/contracts';
import { streamName } from '@ormuz/event-log';
import { RecordCallOutcomeCommand } from '../commands/record-call-outcome.handler.js';
import type { Reaction } from './durable-reactor.js';

/** Every tool-call event is offered to the conversation that requested the call (most are not for a conversation). */
export function callOutcomesReaction(namespace: string, commands: CommandBus): Reaction {
  return {
    name: 'model_loop_call_outcomes',
    stream: streamName(namespace, 'calls'),
    filterSubject: contextFilter(namespace, 'calls'),
    async handle(event: OrmuzEvent) {
      await commands.execute(new RecordCallOutcomeCommand(event));
    },
  };
}
