import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { randomUUID } from 'node:crypto';
import { ToolCallEventType, type SealCallReplyV1, type SealCallRequestV1 } from '@ormuz/contracts';
import { statusView } from '@ormuz/tool-call';
import { ToolCalls } from '@ormuz/service-kit';

export class SealCallCommand extends Command<SealCallReplyV1> {
  constructor(
    readonly request: SealCallRequestV1,
    /** The verified caller's subject: who sealed it, on the log. */
    readonly sealedBy: string,
  ) {
    super();
  }
}

/**
 * Seals a call that has not started; a call that has started is refused with CallAlreadyStartedError. A call that
 * was already sealed stays as it was, and the reply says who sealed it, when and why, so a second operator learns
 * that someone else got there first.
 */
@CommandHandler(SealCallCommand)
export class SealCallHandler implements ICommandHandler<SealCallCommand> {
  constructor(private readonly calls: ToolCalls) {}

  async execute({ request, sealedBy }: SealCallCommand): Promise<SealCallReplyV1> {
    const { tenant, call_id } = request;
    const result = await this.calls.execute(
      tenant,
      call_id,
      { type: 'SealCall', data: { call_id, sealed_by: sealedBy, reason: request.reason } },
      { correlationid: call_id, causationid: randomUUID() },
    );
    const { state } = result;
    if (state.status !== 'sealed') throw new Error(`call ${call_id} is ${state.status} after a seal was accepted`);
    const already = result.events.length === 0;
    const sealedAt = already
      ? await this.calls.recordedAt(tenant, call_id, [ToolCallEventType.Sealed])
      : (result.events[0]?.time ?? null);
    const { sealed_by, reason } = state.seal;
    const who = `${sealed_by}${sealedAt ? ` at ${sealedAt}` : ''} (${reason})`;
    return {
      ...statusView(state),
      sealed_at: sealedAt,
      already_sealed: already,
      message: already
        ? `Call ${call_id} was already sealed by ${who}; this seal changed nothing. It will not run.`
        : `Call ${call_id} is sealed by ${who}; it will not run.`,
    };
  }
}
