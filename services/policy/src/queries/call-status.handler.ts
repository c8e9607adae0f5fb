import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { CallStatusReplyV1, CallStatusRequestV1, OrmuzEvent } from '@ormuz/contracts';
import { asOfPoint, recordedBy, type AsOf } from '@ormuz/event-log';
import { CallNotFoundError, statusView, type ToolCallState } from '@ormuz/tool-call';
import { ToolCalls } from '@ormuz/service-kit';

export class CallStatusQuery extends Query<CallStatusReplyV1> {
  constructor(readonly request: CallStatusRequestV1) {
    super();
  }
}

/**
 * Reads the call from the log. Status never acts: nothing is sent to an executor. With `as_of`, the call as it stood
 * then: its events recorded by that time or sequence folded with the decider's own `evolve` (time travel); a call
 * with no event by then is not found.
 */
@QueryHandler(CallStatusQuery)
export class CallStatusHandler implements IQueryHandler<CallStatusQuery> {
  constructor(private readonly calls: ToolCalls) {}

  async execute({ request }: CallStatusQuery): Promise<CallStatusReplyV1> {
    const asOf = request.as_of ? asOfPoint(request.as_of, new Date()) : undefined;
    const { state, version } = await this.state(request.tenant, request.call_id, asOf);
    if (state.status === 'absent') throw new CallNotFoundError(request.call_id);
    if (!request.timeline) return { status: statusView(state), version };
    const timeline = (await this.calls.timeline(request.tenant, request.call_id))
      .filter(({ seq, event }) => !asOf || recordedBy(asOf, seq, event.time))
      .map(({ seq, event }: { seq: number; event: OrmuzEvent }) => ({
        seq,
        type: event.type,
        time: event.time,
        source: event.source,
        data: event.data,
      }));
    return { status: statusView(state), version, timeline };
  }

  /** The live state (the snapshot on the last message), or the fold of the events recorded by `asOf`. */
  private async state(
    tenant: string,
    callId: string,
    asOf: AsOf | undefined,
  ): Promise<{ state: ToolCallState; version: number }> {
    if (!asOf) return this.calls.load(tenant, callId);
    const { state, version } = await this.calls.read(tenant, callId, asOf);
    return { state, version };
  }
}
