/**
 * A call's identity, given in one place: the id a call gets from its origin. `policy.identify` answers it (with the
 * name to show the call under) before a conversation records a model's reply; `policy.submit` records the call under
 * the same id, so whoever asks first and whoever submits later agree without anyone else deriving it.
 */
import { canonicalFromProviderName } from '@ormuz/catalog';
import type { CallOriginV1, IdentifiedCallV1 } from '@ormuz/contracts';
import { deriveCallId } from '@ormuz/tool-call';

/** The id of the call from `origin` in `tenant`. Throws InvalidCallOriginError for an origin with no id. */
export function callIdOf(tenant: string, origin: CallOriginV1): string {
  return deriveCallId(tenant, origin);
}

/**
 * The id of a call requested as `tool` from `origin`, and the name a transcript shows it under: the name as sent,
 * with a provider's encoding decoded (`device__tap` → `device.tap`) so that the transcript reads like the catalog.
 * Nothing else is normalised here: the gate reads the name leniently when the call is submitted (case, `@<n>`
 * versions, see readToolName), and a version or spelling the model chose stays visible in its transcript.
 */
export function identifyCall(
  tenant: string,
  call: { readonly tool: string; readonly origin: CallOriginV1 },
): IdentifiedCallV1 {
  return { call_id: callIdOf(tenant, call.origin), tool: canonicalFromProviderName(call.tool) ?? call.tool };
}
