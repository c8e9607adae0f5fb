/**
 * What every transport tells a caller whose `policy.submit` got no answer: the call may have been recorded (and
 * run), how to find out, and that submitting the same request again is safe.
 */
import type { SubmitCallRequestV1 } from '@ormuz/contracts';
import { deriveCallId } from '@ormuz/tool-call';
import type { UnansweredHint } from './rpc.js';

/**
 * The {@link UnansweredHint} for one submit. `knownCallId` is the id the caller already has from policy (a
 * conversation's calls are identified by `policy.identify` before they are submitted); without it the id is derived
 * from the request's origin exactly as policy derives it, so the caller learns the id even though the reply was
 * lost. An origin that yields no id (policy would refuse it) gives a hint without one. Never throws.
 */
export function submitUnansweredHint(
  request: Pick<SubmitCallRequestV1, 'tenant' | 'origin'>,
  knownCallId?: string,
): UnansweredHint {
  const { tenant, origin } = request;
  let callId = knownCallId;
  try {
    callId ??= deriveCallId(tenant, origin);
  } catch {
    callId = undefined;
  }
  const again =
    origin?.kind === 'operation'
      ? `resubmit with the same operation id (${origin.operation_id})`
      : 'submit the same request again with the same origin';
  const status = callId
    ? `\`ormuz call status --tenant ${tenant} --call ${callId}\``
    : '`ormuz call status` with the call id';
  return {
    what: callId ? `call ${callId}` : 'the call',
    check: `Find out with ${status}, or ${again}: it observes the original and never runs the call twice.`,
  };
}
