import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { randomUUID } from 'node:crypto';
import { ToolCallEventType, type ApprovalViewV1, type DecideApprovalRequestV1 } from '@ormuz/contracts';
import { isAppendTimeoutError } from '@ormuz/event-log';
import { ToolCalls } from '@ormuz/service-kit';
import { isApprovalAlreadyDecidedError, type ApproveCall, type DenyCall } from '@ormuz/tool-call';
import { ApprovalNotFoundError, DecisionUnacknowledgedError } from '../domain/errors.js';
import { InboxRepository, toView, type InboxRow } from '../persistence/inbox.repository.js';

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
    const result = await this.calls
      .execute(request.tenant, row.call_id, decisionCommand(decision, row, request), cause)
      .catch(async (err: unknown) => {
        // Someone else decided first: say who and when, from the log (the inbox may not have caught up yet).
        if (isApprovalAlreadyDecidedError(err)) throw err.at(await this.decidedAt(request.tenant, row.call_id));
        if (isAppendTimeoutError(err)) throw new DecisionUnacknowledgedError(decision, request, row.call_id);
        throw err;
      });
    return {
      ...toView(row),
      status: decision === 'approve' ? 'approved' : 'denied',
      decided_by: request.decided_by,
      // A repeated identical decision appends nothing: the time is the original one, from the log.
      decided_at: result.events[0]?.time ?? (await this.decidedAt(request.tenant, row.call_id)),
    };
  }

  private decidedAt(tenant: string, callId: string): Promise<string | null> {
    return this.calls.recordedAt(tenant, callId, [ToolCallEventType.Approved, ToolCallEventType.Denied]);
  }
}

function decisionCommand(
  decision: 'approve' | 'deny',
  row: InboxRow,
  request: DecideApprovalRequestV1,
): ApproveCall | DenyCall {
  const { call_id, approval_id } = row;
  return decision === 'approve'
    ? {
        type: 'ApproveCall',
        data: {
          call_id,
          approval_id,
          decided_by: request.decided_by,
          payload_sha256: row.payload_sha256,
          contract_version: row.contract_version,
        },
      }
    : {
        type: 'DenyCall',
        data: { call_id, approval_id, decided_by: request.decided_by, reason: request.reason ?? null },
      };
}
