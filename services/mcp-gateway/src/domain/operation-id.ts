/**
 * The operation id a `tools/call` is submitted under (its origin `{kind: 'operation'}`, from which policy derives the
 * call id). Pure.
 *
 * A client's own `_meta["ormuz/operation_id"]` is used as it is, so that a retry from any session (after a crash, a
 * reconnect) is the same call. Without one, the id is derived from the session and the JSON-RPC request id: a retry
 * of the same request in the same session observes the original call, and nothing else can collide with it. A
 * derived id has a shape of its own (`mcp-` and 40 hex digits) that a client's is refused in, so that the gateway can
 * tell the two apart: a call under a derived id may be a re-sent one (resent-calls.ts), one under the client's never.
 */
import { createHash } from 'node:crypto';

export const OPERATION_ID_META = 'ormuz/operation_id';

const IDENTIFIER = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;
/** The shape of the ids {@link sessionOperationId} derives. */
const DERIVED = /^mcp-[0-9a-f]{40}$/;

/** The client's operation id, `undefined` when it gave none; throws a sentence when it gave one that cannot be used. */
export function clientOperationId(meta: Record<string, unknown> | undefined): string | undefined {
  const value = meta?.[OPERATION_ID_META];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !IDENTIFIER.test(value)) {
    throw new Error(
      `_meta["${OPERATION_ID_META}"] must be 1 to 128 letters, digits, '_' or '-', starting with a letter or digit.`,
    );
  }
  if (DERIVED.test(value)) {
    throw new Error(
      `_meta["${OPERATION_ID_META}"] may not be "mcp-" followed by 40 hex digits: ids of that shape are the gateway's own.`,
    );
  }
  return value;
}

/** Whether `operationId` is one {@link sessionOperationId} derived, rather than a client's own. */
export const isSessionOperationId = (operationId: string): boolean => DERIVED.test(operationId);

/** The operation id of request `requestId` of session `sessionId`. */
export function sessionOperationId(sessionId: string, requestId: string | number): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([sessionId, requestId]))
    .digest('hex');
  return `mcp-${digest.slice(0, 40)}`;
}
