import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { randomUUID } from 'node:crypto';
import { ToolCallEventType, type ApprovalViewV1, type DecideApprovalRequestV1 } from '@ormuz/contracts';
import { decidesFor, ForbiddenError, type Identity } from '@ormuz/auth';
import { isAppendTimeoutError } from '@ormuz/event-log';
import { ToolCalls } from '@ormuz/service-kit';
import {
  contextOfTraceparent,
  inSpan,
  linksTo,
  ORMUZ_APPROVAL_ID,
  ORMUZ_DECISION,
  toolCallAttributes,
} from '@ormuz/tracing';
import { isApprovalAlreadyDecidedError, type ApproveCall, type DenyCall } from '@ormuz/tool-call';
import { ApprovalNotFoundError, DecisionUnacknowledgedError } from '../domain/errors.js';
import { InboxRepository, toView, type InboxRow } from '../persistence/inbox.repository.js';

export class DecideApprovalCommand extends Command<ApprovalViewV1> {
  constructor(
    readonly decision: 'approve' | 'deny',
    readonly request: DecideApprovalRequestV1,
    /** The verified caller: the approver recorded on the log. */
    readonly caller: Identity,
  ) {
    super();
  }
}

/**
 * Records the owner's decision on the call. The approver is the verified caller, who must decide for the call's agent
 * (an owner of the tenant, or of that agent; an admin). The approval binds to the call id, the payload hash and the
 * contract version the owner was shown; the decider refuses a second decision, a mismatch or an expired approval.
 */
@CommandHandler(DecideApprovalCommand)
export class DecideApprovalHandler implements ICommandHandler<DecideApprovalCommand> {
  constructor(
    private readonly inbox: InboxRepository,
    private readonly calls: ToolCalls,
  ) {}

  async execute({ decision, request, caller }: DecideApprovalCommand): Promise<ApprovalViewV1> {
    const row = await this.inbox.find(request.tenant, request.approval_id);
    if (!row) throw new ApprovalNotFoundError(request.tenant, request.approval_id);
    if (!decidesFor(caller, row.agent_id ?? '')) {
      throw new ForbiddenError(`${caller.subject} does not decide approvals for agent ${row.agent_id ?? '(unknown)'}.`);
    }
    const cause = { correlationid: row.call_id, causationid: randomUUID() };
    // The decision joins the call's trace (the one its staging was appended in); the owner's request is linked.
    // Loaded here rather than inside the command, which decides against this state (a stale one is decided again).
    const known = await this.calls.load(request.tenant, row.call_id);
    const attributes = {
      ...toolCallAttributes({ tenant: request.tenant, tool: row.tool, callId: row.call_id }),
      [ORMUZ_APPROVAL_ID]: row.approval_id,
      [ORMUZ_DECISION]: decision,
    };
    const command = decisionCommand(decision, row, request, caller.subject);
    const result = await inSpan(
      '@ormuz/approvals',
      `approval_decision ${row.tool}`,
      { parent: contextOfTraceparent(known.traceparent), links: linksTo(), attributes },
      () => this.calls.execute(request.tenant, row.call_id, command, cause, { known }),
    ).catch(async (err: unknown) => {
      // Someone else decided first: say who and when, from the log (the inbox may not have caught up yet).
      if (isApprovalAlreadyDecidedError(err)) throw err.at(await this.decidedAt(request.tenant, row.call_id));
      if (isAppendTimeoutError(err))
        throw new DecisionUnacknowledgedError(decision, request, caller.subject, row.call_id);
      throw err;
    });
    return {
      ...toView(row),
      status: decision === 'approve' ? 'approved' : 'denied',
      decided_by: caller.subject,
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
  decidedBy: string,
): ApproveCall | DenyCall {
  const { call_id, approval_id } = row;
  return decision === 'approve'
    ? {
        type: 'ApproveCall',
        data: {
          call_id,
          approval_id,
          decided_by: decidedBy,
          payload_sha256: row.payload_sha256,
          contract_version: row.contract_version,
        },
      }
    : {
        type: 'DenyCall',
        data: { call_id, approval_id, decided_by: decidedBy, reason: request.reason ?? null },
      };
}
