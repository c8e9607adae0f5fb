/**
 * Call identity (design invariant 1): the runtime issues a call's id from where the call came from, so a retry of the
 * same model turn or the same API operation gets the same id, and the model can never choose or reuse one.
 */
import { canonicalJson, identifierProblem, sha256Hex, type CallOriginV1 } from '@ormuz/contracts';
import { InvalidCallOriginError } from './tool-call.errors.js';

/** Shape of every derived call id: `call_` followed by 32 lowercase hex characters (128 bits of SHA-256). */
export const CALL_ID_PATTERN = /^call_[0-9a-f]{32}$/;

// Bumping this tag would give every origin a new id; it exists so the derivation can change without collisions.
const DERIVATION = 'ormuz.call_id.v1';

function identifier(field: string, value: unknown): string {
  const problem = identifierProblem(value);
  if (problem)
    throw new InvalidCallOriginError(`${field} ${JSON.stringify(value)} is not a valid identifier (${problem})`);
  return value as string;
}

function position(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new InvalidCallOriginError(`${field} ${JSON.stringify(value)} is not a whole number from 0`);
  }
  return value;
}

/**
 * The call id for `origin` within `tenant`: deterministic (same inputs, same id, across processes and restarts) and
 * distinct for distinct inputs (SHA-256 over an unambiguous encoding, truncated to 128 bits).
 *
 * - conversation origin: from (tenant, conversation_id, turn, index); turn and index are 0-based safe integers.
 * - operation origin: from (tenant, operation_id), the API caller's idempotency key.
 *
 * Throws {@link InvalidCallOriginError} when the tenant or an id is not a valid identifier, or turn/index is not a
 * whole number from 0. Never pass anything the model chose as an id.
 */
export function deriveCallId(tenant: string, origin: CallOriginV1): string {
  const parts: (string | number)[] = [DERIVATION, identifier('tenant', tenant)];
  switch (origin?.kind) {
    case 'conversation':
      parts.push(
        'conversation',
        identifier('conversation_id', origin.conversation_id),
        position('turn', origin.turn),
        position('index', origin.index),
      );
      break;
    case 'operation':
      parts.push('operation', identifier('operation_id', origin.operation_id));
      break;
    default:
      throw new InvalidCallOriginError(
        `the origin kind ${JSON.stringify((origin as { kind?: unknown })?.kind)} is unknown`,
      );
  }
  return `call_${sha256Hex(canonicalJson(parts)).slice(0, 32)}`;
}
