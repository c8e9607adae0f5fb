/**
 * What makes a re-sent call the same call (the window that remembers calls is sessions/resent-calls.ts). Pure.
 *
 * A re-sent call is a `tools/call` the client sends again with a new JSON-RPC request id (the 2026-07-28 revision drops
 * stream resumption, so a client that lost its answer re-sends the request). Without the client's own operation id the
 * re-sent call would get an operation id of its own (from its session and request id) and run a second time; the
 * window recognises it instead and hands it the original call's operation id, so that policy's idempotency answers the
 * original call.
 *
 * A call is the same as one made within the window when the same principal (tenant, agent — the API key's — and the
 * session's device) asks for the same tool with the same canonical arguments (`canonicalJson`: key order, Unicode
 * normalisation and number spelling do not make a call different). The window runs from the first call: a re-send
 * does not extend it, so a call repeated on purpose every so often runs again once the window has passed. Two calls
 * meant as distinct but identical within the window ("observe the screen" twice in ten seconds) are the same call; a
 * client that means them as two gives each its own `_meta["ormuz/operation_id"]`, which the window never touches.
 *
 * The memory is the process's (a bounded LRU): a restarted gateway, or another replica, does not know the calls this
 * one saw, and a call re-sent there runs again — as does one re-sent after the window forgot it for newer calls. A
 * client that needs exactly once across those sends its own operation id (decision 0035).
 */
import { canonicalJson, sha256Hex } from '@ormuz/contracts';

/** Who asks: the session's principal. */
export interface CallPrincipal {
  readonly tenant: string;
  readonly agentId: string;
  readonly deviceId: string | null;
}

/**
 * The fingerprint of a call: principal, tool and canonical arguments, hashed. `undefined` when the arguments have no
 * canonical form (policy refuses such a call anyway; it is never matched).
 */
export function callFingerprint(
  who: CallPrincipal,
  tool: string,
  args: Readonly<Record<string, unknown>>,
): string | undefined {
  let canonical: string;
  try {
    canonical = canonicalJson(args);
  } catch {
    return undefined;
  }
  return sha256Hex(JSON.stringify([who.tenant, who.agentId, who.deviceId, tool, canonical]));
}
