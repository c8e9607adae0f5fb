/**
 * A command answered in parts: for a result too large for one reply (a tenant's history for an export), the handler
 * returns a {@link StreamedReply}, and the NATS command server sends each part it yields to the request's reply
 * subject as raw bytes (header `Ormuz-Part: n`, from 1), then the usual `{ ok, data }` reply with the generator's
 * return value (header `Ormuz-Parts: n`). An error after some parts ends the stream with the error reply.
 *
 * Parts are not acknowledged one by one: the caller ({@link streamRpc}) checks that their numbers follow each other
 * and that the final reply counts what it received, so a part lost on the way (a slow consumer cut off by the
 * server) is an error, never a silent hole. The caller bounds a stream by what it asks for (a limit), so what is in
 * flight stays bounded.
 */
import {
  createInbox,
  type ConnectionOptions,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
} from '@nats-io/transport-node';
import { commandSubject, internalCommandSubject, rpcContract, type RpcName, type RpcReplyOf } from '@ormuz/contracts';
import type { Credential } from './caller.js';
import { headersFor, RemoteError, ServiceUnavailableError, type RpcReply } from './rpc.js';

/** Header of a part: its number in the stream, from 1. */
export const PART_HEADER = 'Ormuz-Part';
/** Header of the final reply of a streamed command: how many parts came before it. */
export const PARTS_HEADER = 'Ormuz-Parts';

/** One part of a streamed reply: bytes, and headers that say what they hold. */
export interface ReplyPart {
  readonly body: Uint8Array;
  readonly headers?: Readonly<Record<string, string>>;
}

/** Parts sent between two flushes: bounds what the server's client buffers when parts come faster than it writes. */
const FLUSH_EVERY_PARTS = 8;

/** What a streaming handler returns: its parts, then (the generator's return value) the final reply's data. */
export class StreamedReply<T> {
  private constructor(readonly parts: AsyncGenerator<ReplyPart, T>) {}

  /** `parts` as the reply it ends in, for a handler's declared return type. */
  static of<T>(parts: AsyncGenerator<ReplyPart, T>): T {
    return new StreamedReply(parts) as unknown as T;
  }

  /** Sends every part to `reply`, telling `sent` each time one went; returns the final data. */
  async send(nc: NatsConnection, reply: string, make: () => MsgHdrs, sent: (parts: number) => void): Promise<T> {
    let done = false;
    try {
      for (let parts = 1; ; parts++) {
        const next = await this.parts.next();
        if (next.done) {
          done = true;
          return next.value;
        }
        const headers = make();
        headers.set(PART_HEADER, String(parts));
        for (const [key, value] of Object.entries(next.value.headers ?? {})) headers.set(key, value);
        nc.publish(reply, next.value.body, { headers });
        sent(parts);
        if (parts % FLUSH_EVERY_PARTS === 0) await nc.flush();
      }
    } finally {
      // A publish or flush that failed (NATS went away) leaves the handler's generator paused: closing it releases
      // what it holds (a database cursor and its connection).
      if (!done) await this.cancel().catch(() => undefined);
    }
  }

  /** Stops the handler's generator (the request failed before its parts were sent). */
  async cancel(): Promise<void> {
    await this.parts.return(undefined as T);
  }
}

/** One part as the caller receives it. */
export interface ReceivedPart {
  readonly body: Uint8Array;
  readonly headers: MsgHdrs;
}

/**
 * Sends command `name` and yields each part of its streamed reply as it arrives, in order; returns the final reply's
 * data. Throws {@link ServiceUnavailableError} when no instance answers, nothing comes for `idleMs` (before the first
 * part or between two), or a part is missing (each worth asking again from the last part written), and
 * {@link RemoteError} for an error reply.
 */
export async function* streamRpc<N extends RpcName>(
  nc: NatsConnection,
  namespace: string,
  name: N,
  body: unknown,
  options: StreamRpcOptions = {},
): AsyncGenerator<ReceivedPart, NoInfer<RpcReplyOf<N>>> {
  const found = rpcContract(name);
  if (!found) throw new Error(`${name} is not a command of any service`);
  const { idleMs = 30_000, credential } = options;
  const internal = credential !== undefined && 'service' in credential;
  const subject = (internal ? internalCommandSubject : commandSubject)(namespace, found.service, found.command);
  // Under the connection's inbox prefix, the only inboxes its NATS user may read (as `request` does).
  const inbox = nc.subscribe(
    createInbox((nc as NatsConnection & { options?: ConnectionOptions }).options?.inboxPrefix),
  );
  let received = 0;
  try {
    nc.publish(subject, JSON.stringify(body ?? {}), { reply: inbox.getSubject(), headers: headersFor(credential) });
    const messages = inbox[Symbol.asyncIterator]();
    for (;;) {
      const msg = await nextWithin(messages, idleMs, subject, received);
      // The server's status for a request nobody is subscribed to.
      if (msg.data.length === 0 && msg.headers?.status === '503') {
        throw new ServiceUnavailableError(subject, 'no responders', 'no_responders');
      }
      const part = msg.headers?.get(PART_HEADER);
      if (part) {
        if (Number(part) !== received + 1) throw lost(subject, received, `part ${part} came next`);
        received++;
        yield { body: msg.data, headers: msg.headers! };
        continue;
      }
      const reply = JSON.parse(msg.string()) as RpcReply<NoInfer<RpcReplyOf<N>>>;
      if (!reply.ok) throw new RemoteError(reply.error.code, reply.error.message, reply.error.details);
      const sent = Number(msg.headers?.get(PARTS_HEADER) ?? 0);
      if (sent !== received) throw lost(subject, received, `the service sent ${sent}`);
      return reply.data;
    }
  } finally {
    inbox.unsubscribe();
  }
}

/** Options of {@link streamRpc}. */
export interface StreamRpcOptions {
  /** Longest wait for the next message of the reply (the first one included), in milliseconds. Default 30,000. */
  readonly idleMs?: number;
  /** Who is asking, as for `callService`. */
  readonly credential?: Credential;
}

/** The next message, or {@link ServiceUnavailableError} when none comes within `ms` or the subscription ends. */
async function nextWithin(messages: AsyncIterator<Msg>, ms: number, subject: string, received: number): Promise<Msg> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new ServiceUnavailableError(subject, `no reply within ${ms} ms after ${received} parts`, 'timeout'));
    }, ms);
    // The connection keeps a process waiting for the reply alive; a caller that gave up must not wait for this.
    timer.unref();
  });
  try {
    const next = await Promise.race([messages.next(), timeout]);
    if (next.done)
      throw new ServiceUnavailableError(subject, `the connection closed after ${received} parts`, 'connection');
    return next.value;
  } finally {
    clearTimeout(timer);
  }
}

const lost = (subject: string, received: number, what: string) =>
  new ServiceUnavailableError(subject, `parts of the reply were lost: ${received} arrived in order, and ${what}`);
