import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { randomUUID } from 'node:crypto';
import type { SealCallRequestV1 } from '@ormuz/contracts';
import { statusView } from '@ormuz/tool-call';
import { ToolCalls } from '@ormuz/service-kit';

export class SealCallCommand extends Command<ReturnType<typeof statusView>> {
  constructor(readonly request: SealCallRequestV1) {
    super();
  }
}

/** Seals a call that has not started; a call that has started is refused with CallAlreadyStartedError. */
@CommandHandler(SealCallCommand)
export class SealCallHandler implements ICommandHandler<SealCallCommand> {
  constructor(private readonly calls: ToolCalls) {}

  async execute({ request }: SealCallCommand) {
    const result = await this.calls.execute(
      request.tenant,
      request.call_id,
      { type: 'SealCall', data: { call_id: request.call_id, sealed_by: request.sealed_by, reason: request.reason } },
      { correlationid: request.call_id, causationid: randomUUID() },
    );
    return statusView(result.state);
  }
}
