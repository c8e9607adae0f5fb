import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { randomUUID } from 'node:crypto';
import { canonicalPayload, type SubmitCallReplyV1, type SubmitCallRequestV1 } from '@ormuz/contracts';
import { deriveCallId, type ToolCallState } from '@ormuz/tool-call';
import { ToolCalls } from '@ormuz/service-kit';
import { POLICY_CONFIG, type PolicyConfig } from '../config.js';
import { findTool } from '../domain/catalog.js';
import { decideGate } from '../domain/gate.js';

export class SubmitCallCommand extends Command<SubmitCallReplyV1> {
  constructor(readonly request: SubmitCallRequestV1) {
    super();
  }
}

/** Records the request (bytes and hash first), then records the gate's decision. A duplicate observes the original. */
@CommandHandler(SubmitCallCommand)
export class SubmitCallHandler implements ICommandHandler<SubmitCallCommand> {
  constructor(
    private readonly calls: ToolCalls,
    @Inject(POLICY_CONFIG) private readonly config: PolicyConfig,
  ) {}

  async execute({ request }: SubmitCallCommand): Promise<SubmitCallReplyV1> {
    const { payload, sha256 } = canonicalPayload(request.arguments);
    const callId = deriveCallId(request.tenant, request.origin);
    const cause = { correlationid: request.correlation_id ?? callId, causationid: randomUUID() };
    const submitted = await this.calls.execute(
      request.tenant,
      callId,
      {
        type: 'SubmitCall',
        data: {
          call_id: callId,
          tool: request.tool,
          contract_version: findTool(request.tool)?.contractVersion ?? 'unknown',
          payload,
          payload_sha256: sha256,
          origin: request.origin,
          agent_id: request.agent_id,
          target: request.device_id ? { device_id: request.device_id } : null,
        },
      },
      cause,
    );
    const duplicate = submitted.events.length === 0;
    // A call still in `requested` was recorded but not yet decided (a crash in between): decide it now.
    if (duplicate && submitted.state.status !== 'requested') return reply(callId, sha256, submitted.state, true);

    const gate = decideGate(
      { tool: request.tool, args: JSON.parse(payload) as Record<string, unknown>, target: request.device_id ? { device_id: request.device_id } : null },
      new Date(),
      this.config.approvalTtlMs,
    );
    const decided = await this.calls.execute(
      request.tenant,
      callId,
      gate.kind === 'refuse'
        ? { type: 'RefuseCall', data: { call_id: callId, reason_code: gate.reasonCode, message: gate.message } }
        : gate.kind === 'stage'
          ? {
              type: 'StageCall',
              data: {
                call_id: callId,
                approval_id: `apr_${callId.slice(5)}`,
                summary: gate.summary,
                expires_at: gate.expiresAt.toISOString(),
                verdict: gate.verdict,
              },
            }
          : { type: 'AuthorizeCall', data: { call_id: callId, verdict: gate.verdict } },
      cause,
    );
    return reply(callId, sha256, decided.state, duplicate);
  }
}

function reply(callId: string, sha256: string, state: ToolCallState, duplicate: boolean): SubmitCallReplyV1 {
  const approval = 'approval' in state ? state.approval : undefined;
  return {
    call_id: callId,
    status: state.status,
    duplicate,
    payload_sha256: sha256,
    message:
      state.status === 'refused'
        ? state.refusal.message
        : state.status === 'staged'
          ? 'pending_confirmation: the owner has been asked to approve this action. Do not retry it; tell the user it awaits approval.'
          : null,
    approval_id: approval?.approval_id ?? null,
    summary: approval?.summary ?? null,
    expires_at: approval?.expires_at ?? null,
  };
}
