import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { AuditRebuildReplyV1, AuditRebuildRequestV1 } from '@ormuz/contracts';
import { AuditProjections } from '../projections/audit-projections.js';

export class RebuildProjectionCommand extends Command<AuditRebuildReplyV1> {
  constructor(readonly request: AuditRebuildRequestV1) {
    super();
  }
}

/** Empties one projection and replays its stream into it from sequence 1. */
@CommandHandler(RebuildProjectionCommand)
export class RebuildProjectionHandler implements ICommandHandler<RebuildProjectionCommand> {
  constructor(private readonly projections: AuditProjections) {}

  async execute({ request }: RebuildProjectionCommand): Promise<AuditRebuildReplyV1> {
    const { stream, targetSeq } = await this.projections.rebuild(request.projection);
    return { projection: request.projection, stream, target_seq: targetSeq };
  }
}
