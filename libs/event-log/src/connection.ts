/**
 * One NATS connection per process, reconnecting forever: a restarted server is waited for, never given up on.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { NatsAuthorizationError, NatsUnavailableError } from './errors.js';

export interface NatsConnectOptions {
  /** `nats://host:port`, several separated by commas. */
  readonly url: string;
  /** Shown in the server's connection list (`ormuz-policy`). */
  readonly name: string;
  /** How long the first connection attempt may take, in milliseconds. Default 3000. */
  readonly timeoutMs?: number;
  /** The NATS user to connect as (with `password`); none connects without credentials. */
  readonly user?: string | undefined;
  readonly password?: string | undefined;
}

/**
 * The reply inbox prefix of a NATS user: `_INBOX.<user>`. The shipped authorization lets each user subscribe only to
 * its own inboxes, so no client reads the replies (JetStream reads included) sent to another user; a client that
 * connects as `user` must create its inboxes under this prefix. Without a user, the client's default `_INBOX`.
 */
export function inboxPrefixOf(user: string | undefined): string | undefined {
  return user === undefined ? undefined : `_INBOX.${user}`;
}

/**
 * Connects or throws {@link NatsUnavailableError} naming the URL and how to start a server, or
 * {@link NatsAuthorizationError} when the server refuses the credentials.
 */
export async function connectNats(opts: NatsConnectOptions): Promise<NatsConnection> {
  const inboxPrefix = inboxPrefixOf(opts.user);
  try {
    return await connect({
      servers: opts.url.split(','),
      name: opts.name,
      timeout: opts.timeoutMs ?? 3000,
      reconnect: true,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      reconnectJitter: 100,
      pingInterval: 10_000,
      // Capturing an async stack per request costs about a quarter of the client's CPU on the append path
      // (measured by bench:log); errors keep their messages.
      noAsyncTraces: true,
      ...(opts.user !== undefined ? { user: opts.user, pass: opts.password ?? '' } : {}),
      ...(inboxPrefix !== undefined ? { inboxPrefix } : {}),
    });
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    if (err instanceof Error && err.name === 'AuthorizationError') {
      throw new NatsAuthorizationError(opts.url, opts.user, reason);
    }
    throw new NatsUnavailableError(opts.url, reason);
  }
}
