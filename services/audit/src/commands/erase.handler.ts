import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { AuditEraseReplyV1, AuditEraseRequestV1 } from '@ormuz/contracts';
import { InvalidErasureError } from '../domain/errors.js';
import { ArchiveEraser } from '../persistence/archive-eraser.js';

export class EraseCommand extends Command<AuditEraseReplyV1> {
  constructor(readonly request: AuditEraseRequestV1) {
    super();
  }
}

/** A data-protection request: erases a tenant's call payloads and/or results recorded before a past moment. */
@CommandHandler(EraseCommand)
export class EraseHandler implements ICommandHandler<EraseCommand> {
  constructor(private readonly eraser: ArchiveEraser) {}

  async execute({ request }: EraseCommand): Promise<AuditEraseReplyV1> {
    const before = new Date(request.before);
    if (before.getTime() > Date.now()) throw new InvalidErasureError(request.before);
    const kinds = request.kinds ?? ['payloads', 'results'];
    const erased = await this.eraser.erase(request.tenant, before, kinds);
    return {
      tenant: request.tenant,
      before: before.toISOString(),
      kinds: [...kinds],
      erased_events: erased.events,
      erased_calls: erased.calls,
    };
  }
}
