/**
 * Commands between services are NATS request/reply on `<namespace>.cmd.<service>.<name>`, with one reply shape:
 * `{ ok: true, data }` or `{ ok: false, error: { code, message } }`. Errors are results: a caller always gets a code
 * it can branch on and a sentence it can show.
 */
import { errors, headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import {
  assertValidReply,
  commandSubject,
  internalCommandSubject,
  OrmuzError,
  rpcContract,
  type RpcName,
  type RpcReplyOf,
  type RpcRequestOf,
  type ServiceHealthV1,
} from '@ormuz/contracts';

import { injectTraceHeaders, inTrace } from '@ormuz/tracing';

import { AUTHORIZATION_HEADER, IDENTITY_HEADER, type Credential } from './caller.js';

/** Largest accepted request body, in bytes. */
export const MAX_RPC_BYTES = 512 * 1024;

export interface RpcErrorBody {
  readonly code: string;
  readonly message: string;
  readonly details?: unknown;
}

export type RpcReply<T> =
  { readonly ok: true; readonly data: T } | { readonly ok: false; readonly error: RpcErrorBody };

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

/** Error codes that say nothing about the request itself (infrastructure, contention): asking again may succeed. */
const TRANSIENT_CODES: ReadonlySet<string> = new Set([
  'internal',
  'retries_exhausted',
  'concurrency_conflict',
  'stream_missing',
  'nats_unavailable',
  'postgres_unavailable',
]);

/**
 * True when `err` says nothing about the request, so the same request may be sent again: no answer at all (not a
 * {@link RemoteError}), or a remote error of infrastructure or contention. False for an answer about the request
 * (malformed, refused, unknown), which asking again would only repeat.
 */
export function isTransientRemoteError(err: unknown): boolean {
  return !(err instanceof RemoteError) || TRANSIENT_CODES.has(err.code);
}

/**
 * Why a command got no answer. `no_responders`: no instance was subscribed, so none received this attempt.
 * `timeout`: it was sent and no reply came in time, so it may have been handled. `connection`: the client's
 * connection failed while asking, so it may or may not have been received.
 */
export type NoAnswerCause = 'no_responders' | 'timeout' | 'connection';

/**
 * What a state-changing command tells its caller when no answer comes: what it would have recorded, and how to find
 * out whether it did. Read-only commands pass none.
 */
export interface UnansweredHint {
  /** What may have been recorded, e.g. `call call_0a1b…`. */
  readonly what: string;
  /** One or two sentences: how to find out, and which retry is safe. */
  readonly check: string;
}

/**
 * The service did not answer: no instance is running (`no_responders`), or the answer did not come in time
 * (`timeout`) or the connection failed (`connection`). For a command given an {@link UnansweredHint}, the message
 * says plainly whether it may have taken effect and how to find out; a timeout is never proof that nothing happened.
 */
export class ServiceUnavailableError extends OrmuzError {
  readonly code = 'service_unavailable';
  constructor(
    readonly subject: string,
    reason: string,
    readonly noAnswer: NoAnswerCause = 'timeout',
    readonly hint?: UnansweredHint,
  ) {
    super(unansweredMessage(subject, reason, noAnswer, hint));
  }
}

function unansweredMessage(subject: string, reason: string, noAnswer: NoAnswerCause, hint?: UnansweredHint): string {
  const fix = 'Check that the service is running and connected to the same NATS namespace';
  if (!hint) return `No answer on ${subject} (${reason}). ${fix}.`;
  if (noAnswer === 'no_responders') {
    return (
      `No instance is listening on ${subject} (${reason}), so this attempt was not received; ${hint.what} exists ` +
      `only if an earlier attempt recorded it. ${fix}. ${hint.check}`
    );
  }
  return (
    `No answer on ${subject} (${reason}): ${hint.what} may have been recorded, and may even have run; the outcome ` +
    `is unknown, not a failure. ${hint.check}`
  );
}

/** Remote error codes after which a state-changing command may or may not have taken effect. */
const OUTCOME_UNKNOWN_CODES: ReadonlySet<string> = new Set(['append_unacknowledged', 'internal']);

/** Options of {@link callService}. */
export interface CallServiceOptions {
  /** Milliseconds to wait for the answer. Default 5000. */
  readonly timeoutMs?: number;
  /** For a command that changes state: what to say when no answer (or an ambiguous failure) comes. */
  readonly ifUnanswered?: UnansweredHint;
  /**
   * Who is asking: a bearer token or API key (sent as `Authorization`), or a service acting within a tenant (sent on
   * the internal subject with `Ormuz-Identity`). Without one, only commands anyone may run (health) are answered.
   */
  readonly credential?: Credential;
}

/**
 * Sends a command and returns its data, or throws {@link RemoteError} / {@link ServiceUnavailableError}. With
 * `ifUnanswered`, both errors say whether the command may have taken effect and how to find out, whenever that is
 * unknown (no answer, an unacknowledged append, an internal failure).
 */
export async function callService<T>(
  nc: NatsConnection,
  namespace: string,
  service: string,
  name: string,
  body: unknown,
  options: number | CallServiceOptions = {},
): Promise<T> {
  const { timeoutMs = 5000, ifUnanswered, credential } = typeof options === 'number' ? { timeoutMs: options } : options;
  const internal = credential !== undefined && 'service' in credential;
  const subject = (internal ? internalCommandSubject : commandSubject)(namespace, service, name);
  let reply;
  try {
    reply = await nc.request(subject, JSON.stringify(body ?? {}), {
      timeout: timeoutMs,
      headers: headersFor(credential),
    });
  } catch (err) {
    throw new ServiceUnavailableError(subject, reasonOf(err, timeoutMs), noAnswerCause(err), ifUnanswered);
  }
  const parsed = JSON.parse(reply.string()) as RpcReply<T>;
  if (parsed.ok) return parsed.data;
  const { code, message, details } = parsed.error;
  if (ifUnanswered && OUTCOME_UNKNOWN_CODES.has(code)) {
    throw new RemoteError(
      code,
      `${message} So ${ifUnanswered.what} may or may not have been recorded. ${ifUnanswered.check}`,
      details,
    );
  }
  throw new RemoteError(code, message, details);
}

/** What every service answers to `health` once it is serving (see `startService`). */
export type ServiceHealth = ServiceHealthV1;

/** Options of {@link callRpc}. */
export interface CallRpcOptions extends CallServiceOptions {
  /**
   * Check the reply's `data` against the command's declared reply schema, throwing SchemaViolationError when it does
   * not match. For tests and tools that hold a service to its contract; services do not pay for it.
   */
  readonly checkReply?: boolean;
}

/**
 * Sends command `name` (`<service>.<name>` from the contracts' command map) and returns its reply's data, typed by
 * the map: the request and reply of every command are declared once, in `@ormuz/contracts`. Throws what
 * {@link callService} throws. The request is not checked here: the service checks it and answers
 * `schema_violation`.
 */
export async function callRpc<N extends RpcName>(
  nc: NatsConnection,
  namespace: string,
  name: N,
  // `NoInfer`: `N` comes from `name` alone; inferring it from the body or from where the reply goes costs the
  // compiler seconds per call.
  body: NoInfer<RpcRequestOf<N>>,
  options: number | CallRpcOptions = {},
): Promise<NoInfer<RpcReplyOf<N>>> {
  const found = rpcContract(name);
  if (!found) throw new Error(`${name} is not a command of any service`);
  const data = await callService<NoInfer<RpcReplyOf<N>>>(nc, namespace, found.service, found.command, body, options);
  if (typeof options === 'object' && options.checkReply) assertValidReply(name, data);
  return data;
}

/**
 * Asks `service` for its `health` over `nc` until it answers, and returns the answer: the service is then serving, and
 * requests sent on this connection reach it. Anything that starts a service and then talks to it (tests, the CLI's
 * supervisor) waits here first, so no request races the start. Throws {@link ServiceUnavailableError} after
 * `timeoutMs`, or at once with `stillStarting` false (the process that was to serve exited).
 */
export async function waitUntilServing(
  nc: NatsConnection,
  namespace: string,
  service: string,
  options: { readonly timeoutMs?: number; readonly stillStarting?: () => boolean } = {},
): Promise<ServiceHealth> {
  const { timeoutMs = 30_000, stillStarting = () => true } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // A service that is up but busy (catching up after a restart, on a loaded machine) may take seconds to answer:
    // give each ask up to 5 s. No responders answer at once, so this bound costs nothing while it is still starting.
    const attempt = Math.max(100, Math.min(5000, deadline - Date.now()));
    try {
      return await callService<ServiceHealth>(nc, namespace, service, 'health', {}, attempt);
    } catch (err) {
      if (!(err instanceof ServiceUnavailableError) || !stillStarting() || Date.now() >= deadline) throw err;
      // No responders come back at once: pace the next ask instead of spinning.
      if (err.noAnswer === 'no_responders') await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** The request's headers: who is asking, and the trace it is asked in (none outside a trace). */
export function headersFor(credential: Credential | undefined) {
  const traced = inTrace();
  if (!credential && !traced) return undefined;
  const h = natsHeaders();
  if (traced) injectTraceHeaders(h);
  if (!credential) return h;
  if ('bearer' in credential) h.set(AUTHORIZATION_HEADER, `Bearer ${credential.bearer}`);
  else {
    const { service, tenant, agent_id } = credential.service;
    h.set(IDENTITY_HEADER, JSON.stringify({ service, tenant, ...(agent_id === undefined ? {} : { agent_id }) }));
  }
  return h;
}

function noAnswerCause(err: unknown): NoAnswerCause {
  if (err instanceof errors.RequestError && err.isNoResponders()) return 'no_responders';
  if (err instanceof errors.TimeoutError) return 'timeout';
  return 'connection';
}

function reasonOf(err: unknown, timeoutMs: number): string {
  if (err instanceof errors.TimeoutError) return `no reply within ${timeoutMs} ms`;
  if (err instanceof errors.RequestError && err.isNoResponders()) return 'no responders';
  return err instanceof Error ? err.message : String(err);
}

/** Maps any thrown value to the wire error body; unknown errors are not leaked. */
export function toErrorBody(err: unknown): RpcErrorBody {
  if (err instanceof OrmuzError) return { code: err.code, message: err.message };
  const e = err as { code?: unknown; message?: unknown };
  if (e && typeof e.code === 'string' && typeof e.message === 'string') return { code: e.code, message: e.message };
  return { code: 'internal', message: 'The service failed while handling this command; it has been logged.' };
}
