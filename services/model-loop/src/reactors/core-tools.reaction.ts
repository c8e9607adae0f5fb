import type { CommandBus } from '@nestjs/cqrs';
import { contextFilter, type OrmuzEvent } from '@ormuz/contracts';
import { MODEL_LOOP_SCHEMA } from '../persistence/migrations.js';
import { streamName, type Delivery, type Reaction } from '@ormuz/event-log';
import { RunCoreToolCommand } from '../commands/run-core-tool.handler.js';

/**
 * Model-loop as the executor of the platform's own tools: every tool-call event is offered, and an authorised
 * `ormuz.*` call with no device target is run (most events are not that). Its own consumer, so a slow tool never holds
 * up the routing of outcomes into conversations.
 */
export function coreToolsReaction(namespace: string, commands: CommandBus): Reaction {
  return {
    name: 'model_loop_core_tools',
    schema: MODEL_LOOP_SCHEMA,
    stream: streamName(namespace, 'calls'),
    filterSubject: contextFilter(namespace, 'calls'),
    async handle(event: OrmuzEvent, delivery: Delivery) {
      await commands.execute(new RunCoreToolCommand(event, delivery.attempt));
    },
  };
}
