import type { CommandBus } from '@nestjs/cqrs';
import { contextFilter, type OrmuzEvent } from '@ormuz/contracts';
import { MODEL_LOOP_SCHEMA } from '../persistence/migrations.js';
import { streamName, type Reaction } from '@ormuz/event-log';
import { RecordCallOutcomeCommand } from '../commands/record-call-outcome.handler.js';

/** Every tool-call event is offered to the conversation that requested the call (most are not for a conversation). */
export function callOutcomesReaction(namespace: string, commands: CommandBus): Reaction {
  return {
    name: 'model_loop_call_outcomes',
    schema: MODEL_LOOP_SCHEMA,
    stream: streamName(namespace, 'calls'),
    filterSubject: contextFilter(namespace, 'calls'),
    async handle(event: OrmuzEvent) {
      await commands.execute(new RecordCallOutcomeCommand(event));
    },
  };
}
