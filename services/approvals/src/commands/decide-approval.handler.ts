import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { randomUUID } from 'node:crypto';
import type { ApprovalViewV1, DecideApprovalRequestV1 } from '@ormuz/contracts';
import { ToolCalls } from '@ormuz/service-kit';
import { ApprovalNotFoundError } from '../domain/errors.js';
import { InboxRepository, toView } from '../persistence/inbox.repository.js';

export class DecideApprovalCommand extends Command<ApprovalViewV1> {
  constructor(
    readonly decision: 'approve' | 'deny',
    readonly request: DecideApprovalRequestV1,
  ) {
    super();
  }
}

/**
 * Records the owner's decision on the call. The approval binds to the call id, the payload hash and the contract
 * version the owner was shown; the decider refuses a second decision, a mismatch or an expired approval.
 */
@CommandHandler(DecideApprovalCommand)
export class DecideApprovalHandler implements ICommandHandler<DecideApprovalCommand> {
  constructor(
    private readonly inbox: InboxRepository,
    private readonly calls: ToolCalls,
  ) {}

  async execute({ decision, request }: DecideApprovalCommand): Promise<ApprovalViewV1> {
    const row = await this.inbox.find(request.tenant, request.approval_id);
    if (!row) throw new ApprovalNotFoundError(request.tenant, request.approval_id);
    const cause = { correlationid: row.call_id, causationid: randomUUID() };
    const result = await this.calls.execute(
      request.tenant,
      row.call_id,
      decision === 'approve'
        ? {
            type: 'ApproveCall',
            data: {
              call_id: row.call_id,
              approval_id: row.approval_id,
              decided_by: request.decided_by,
              payload_sha256: row.payload_sha256,
              contract_version: row.contract_version,
            },
          }
        : {
            type: 'DenyCall',
            data: {
              call_id: row.call_id,
              approval_id: row.approval_id,
              decided_by: request.decided_by,
              reason: request.reason ?? null,
            },
          },
      cause,
    );
    // A repeated identical decision appends nothing: the time is the original one, from the inbox.
    const decidedAt = result.events[0]?.time ?? row.decided_at?.toISOString() ?? null;
    return {
      ...toView(row),
      status: decision === 'approve' ? 'approved' : 'denied',
      decided_by: request.decided_by,
      decided_at: decidedAt,
    };
  }
}
