/**
 * One NATS connection per process, reconnecting forever: a restarted server is waited for, never given up on.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { NatsUnavailableError } from './errors.js';

export interface NatsConnectOptions {
  /** `nats://host:port`, several separated by commas. */
  readonly url: string;
  /** Shown in the server's connection list (`ormuz-policy`). */
  readonly name: string;
  /** How long the first connection attempt may take, in milliseconds. Default 3000. */
  readonly timeoutMs?: number;
}

/** Connects or throws {@link NatsUnavailableError} naming the URL and how to start a server. */
export async function connectNats(opts: NatsConnectOptions): Promise<NatsConnection> {
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
    });
  } catch (err) {
    throw new NatsUnavailableError(opts.url, err instanceof Error ? err.message : String(err));
  }
}
