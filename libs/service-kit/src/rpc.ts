/**
 * Commands between services are NATS request/reply on `<namespace>.cmd.<service>.<name>`, with one reply shape:
 * `{ ok: true, data }` or `{ ok: false, error: { code, message } }`. Errors are results: a caller always gets a code
 * it can branch on and a sentence it can show.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { commandSubject, OrmuzError } from '@ormuz/contracts';

/** Largest accepted request body, in bytes. */
export const MAX_RPC_BYTES = 512 * 1024;

export interface RpcErrorBody {
  readonly code: string;
  readonly message: string;
  readonly details?: unknown;
}

export type RpcReply<T> = { readonly ok: true; readonly data: T } | { readonly ok: false; readonly error: RpcErrorBody };

/** An error answered by a remote service. */
export class RemoteError extends OrmuzError {
  constructor(
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

/** The service did not answer in time, or no instance is running. */
export class ServiceUnavailableError extends OrmuzError {
  readonly code = 'service_unavailable';
  constructor(
    readonly subject: string,
    reason: string,
  ) {
    super(`No answer on ${subject} (${reason}). Check that the service is running and connected to the same NATS namespace.`);
  }
}

/** Sends a command and returns its data, or throws {@link RemoteError} / {@link ServiceUnavailableError}. */
export async function callService<T>(
  nc: NatsConnection,
  namespace: string,
  service: string,
  name: string,
  body: unknown,
  timeoutMs = 5000,
): Promise<T> {
  const subject = commandSubject(namespace, service, name);
  let reply;
  try {
    reply = await nc.request(subject, JSON.stringify(body ?? {}), { timeout: timeoutMs });
  } catch (err) {
    throw new ServiceUnavailableError(subject, err instanceof Error ? err.message : String(err));
  }
  const parsed = JSON.parse(reply.string()) as RpcReply<T>;
  if (parsed.ok) return parsed.data;
  throw new RemoteError(parsed.error.code, parsed.error.message, parsed.error.details);
}

/** Maps any thrown value to the wire error body; unknown errors are not leaked. */
export function toErrorBody(err: unknown): RpcErrorBody {
  if (err instanceof OrmuzError) return { code: err.code, message: err.message };
  const e = err as { code?: unknown; message?: unknown };
  if (e && typeof e.code === 'string' && typeof e.message === 'string') return { code: e.code, message: e.message };
  return { code: 'internal', message: 'The service failed while handling this command; it has been logged.' };
}
