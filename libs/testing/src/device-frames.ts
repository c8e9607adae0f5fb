import { canonicalPayload, type DeviceFrameDraft, type SubmitFrameV1 } from '@ormuz/contracts';

/** A valid submit frame for `args`, as the bridge would send it: canonical bytes, their SHA-256, a minute to run. */
export function submitFrame(requestId: string, tool: string, args: unknown): DeviceFrameDraft<SubmitFrameV1> {
  const { payload, sha256 } = canonicalPayload(args);
  return {
    type: 'submit',
    request_id: requestId,
    call_id: `call-${requestId}`,
    tool,
    payload,
    payload_sha256: sha256,
    deadline: new Date(Date.now() + 60_000).toISOString(),
    verdict: { level: 'low', reasons: [] },
  };
}
