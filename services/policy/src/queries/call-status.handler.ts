import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { CallStatusReplyV1, CallStatusRequestV1, OrmuzEvent } from '@ormuz/contracts';
import { CallNotFoundError, statusView } from '@ormuz/tool-call';
import { ToolCalls } from '@ormuz/service-kit';

export class CallStatusQuery extends Query<CallStatusReplyV1> {
  constructor(readonly request: CallStatusRequestV1) {
    super();
  }
}

/** Reads the call from the log. Status never acts: nothing is sent to an executor. */
@QueryHandler(CallStatusQuery)
export class CallStatusHandler implements IQueryHandler<CallStatusQuery> {
  constructor(private readonly calls: ToolCalls) {}

  async execute({ request }: CallStatusQuery): Promise<CallStatusReplyV1> {
    const { state, version } = await this.calls.load(request.tenant, request.call_id);
    if (state.status === 'absent') throw new CallNotFoundError(request.call_id);
    if (!request.timeline) return { status: statusView(state), version };
    const timeline = (await this.calls.timeline(request.tenant, request.call_id)).map(
      ({ seq, event }: { seq: number; event: OrmuzEvent }) => ({
        seq,
        type: event.type,
        time: event.time,
        source: event.source,
        data: event.data,
      }),
    );
    return { status: statusView(state), version, timeline };
  }
}
