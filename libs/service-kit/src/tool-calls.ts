/**
 * The tool-call aggregate as every service reaches it: one subject per call in the `calls` stream, changed only
 * through the pure decider in @ormuz/tool-call with optimistic concurrency. Policy, approvals and device-bridge each
 * append the lifecycle events they are responsible for; the seal-versus-start race is settled by the log because
 * both are appends on the same subject.
 */
import { aggregateSubject } from '@ormuz/contracts';
import { runCommand, streamName, type CommandResult, type EventStore, type Loaded } from '@ormuz/event-log';
import { toolCallDecider, type ToolCallCommand, type ToolCallState } from '@ormuz/tool-call';

export interface CallCausation {
  /** Conversation or operation the call belongs to. */
  readonly correlationid: string;
  /** The command, request or event that caused this change. */
  readonly causationid: string;
}

export class ToolCalls {
  readonly stream: string;

  constructor(
    private readonly store: EventStore,
    private readonly namespace: string,
    private readonly source: string,
  ) {
    this.stream = streamName(namespace, 'calls');
  }

  subject(tenant: string, callId: string): string {
    return aggregateSubject(this.namespace, 'calls', tenant, callId);
  }

  /** Runs a command on one call (load, decide, append, retry on conflict). Domain errors propagate. */
  execute(tenant: string, callId: string, command: ToolCallCommand, cause: CallCausation): Promise<CommandResult<ToolCallState>> {
    return runCommand(
      this.store,
      this.stream,
      this.subject(tenant, callId),
      toolCallDecider,
      command,
      { source: this.source, tenant, aggregateId: callId, ...cause },
      // A submit usually creates the call: try that first instead of loading (a duplicate costs one refused append).
      { assumeNew: command.type === 'SubmitCall' },
    );
  }

  /** Reads a call's state from the log (fresh: one direct get). Never sends anything anywhere. */
  load(tenant: string, callId: string): Promise<Loaded<ToolCallState>> {
    return this.store.load(this.stream, this.subject(tenant, callId), toolCallDecider, { fresh: true });
  }

  /** Every event of one call, in order. */
  timeline(tenant: string, callId: string) {
    return this.store.history(this.stream, this.subject(tenant, callId));
  }

  /**
   * When the call's last event of one of `types` was recorded (its envelope time, RFC 3339), or `null` when it has
   * none. Reads the call's events; used to say when someone else already sealed or decided it.
   */
  async recordedAt(tenant: string, callId: string, types: readonly string[]): Promise<string | null> {
    const events = await this.timeline(tenant, callId);
    return events.findLast(({ event }) => types.includes(event.type))?.event.time ?? null;
  }
}
