import type { CallOriginV1 } from '@ormuz/contracts';
import { submitSeededCall } from '@ormuz/testing';
import type { ToolCalls } from '@ormuz/service-kit';
import { deriveCallId } from '@ormuz/tool-call';

export interface StagedCall {
  readonly callId: string;
  readonly approvalId: string;
  readonly expiresAt: string;
  readonly payloadSha256: string;
}

/** Submits a high-risk call for `tenant` and stages it for approval, as policy does (`policy` appends as policy). */
export async function stageCall(
  policy: ToolCalls,
  tenant: string,
  operationId: string,
  opts: { readonly expiresInMs?: number; readonly agentId?: string } = {},
): Promise<StagedCall> {
  const origin: CallOriginV1 = { kind: 'operation', operation_id: operationId };
  const callId = deriveCallId(tenant, origin);
  const approvalId = `apr_${callId.slice(5)}`;
  const cause = () => ({ correlationid: operationId, causationid: `c-${Math.random().toString(36).slice(2)}` });
  const { sha256 } = await submitSeededCall(
    policy,
    {
      tenant,
      callId,
      tool: 'device.send_message',
      args: { recipient: 'Alice', message_body: 'hi' },
      origin,
      agentId: opts.agentId ?? 'agent-1',
    },
    cause(),
  );
  const expiresAt = new Date(Date.now() + (opts.expiresInMs ?? 10 * 60_000)).toISOString();
  await policy.execute(
    tenant,
    callId,
    {
      type: 'StageCall',
      data: {
        call_id: callId,
        approval_id: approvalId,
        summary: 'Send a text message to Alice: "hi"',
        expires_at: expiresAt,
        verdict: { level: 'high', reasons: ['sends a message'] },
      },
    },
    cause(),
  );
  return { callId, approvalId, expiresAt, payloadSha256: sha256 };
}
