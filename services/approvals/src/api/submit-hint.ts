/**
 * What a submit over HTTP tells its caller when policy does not answer: the call may have been recorded and may have
 * run, so the caller needs the call's id, the route to read its status, and the fact that submitting the same request
 * again is safe. The id is derived from the origin exactly as policy derives it.
 */
import type { SubmitCallRequestV1 } from '@ormuz/contracts';
import type { UnansweredHint } from '@ormuz/service-kit';
import { deriveCallId } from '@ormuz/tool-call';

/** Never throws: the request has not been checked yet (policy checks it), so a bad origin yields a hint without id. */
export function submitHint(request: Partial<SubmitCallRequestV1>): UnansweredHint {
  let callId: string | undefined;
  try {
    callId = deriveCallId(request.tenant!, request.origin!);
  } catch {
    callId = undefined;
  }
  const status = callId ? `GET /v1/tenants/${request.tenant}/calls/${callId}` : "the call's status route";
  return {
    what: callId ? `call ${callId}` : 'the call',
    check: `Find out with ${status}, or submit the same request again: it observes the original and never runs the call twice.`,
  };
}
