/**
 * The tool-call aggregate as every service reaches it: one subject per call in the `calls` stream, changed only
 * through the pure decider in @ormuz/tool-call with optimistic concurrency. Policy, approvals and device-bridge each
 * append the lifecycle events they are responsible for; the seal-versus-start race is settled by the log because
 * both are appends on the same subject.
 */
import type { ToolCallEventDraft } from '@ormuz/contracts';
import { AggregateRepository, type Causation, type EventStore } from '@ormuz/event-log';
import { toolCallDecider, type ToolCallCommand, type ToolCallState } from '@ormuz/tool-call';

/** Who caused a change to a call: the conversation or operation it belongs to, and what led to it. */
export type CallCausation = Causation;

export class ToolCalls extends AggregateRepository<ToolCallState, ToolCallCommand, ToolCallEventDraft> {
  constructor(store: EventStore, namespace: string, source: string) {
    super(store, namespace, source, {
      context: 'calls',
      decider: toolCallDecider,
      // A submit usually creates the call: try that first instead of loading (a duplicate costs one refused append).
      assumeNew: (command) => command.type === 'SubmitCall',
    });
  }
}
