import { DeliverPolicy, type JetStreamClient } from '@nats-io/jetstream';
import { headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { now } from './stats.js';

/**
 * The raw hops a governed path is built of, each timed one at a time, for a bench's floor: request/reply round
 * trips, JetStream publish-acks (alone and in chains, as an aggregate's appends follow one another), deliveries of a
 * stored message to a consumer, and WebSocket round trips. Each returns its samples in milliseconds, after `warmup`
 * unmeasured ones; the bench summarises them.
 */

/** About an event's bytes and a snapshot header's, as an append carries. */
const EVENT = new TextEncoder().encode(JSON.stringify({ pad: 'x'.repeat(700) }));
const SNAPSHOT = 'y'.repeat(400);

/** Answers every request on `subject` with its own bytes, on `nc` (the other end of {@link requestReplyRoundTrips}). */
export async function echoResponder(nc: NatsConnection, subject: string): Promise<void> {
  nc.subscribe(subject, {
    callback: (_err, msg) => {
      msg.respond(msg.data);
    },
  });
  await nc.flush();
}

/** `samples` core NATS request/reply round trips to `subject`, one at a time. */
export async function requestReplyRoundTrips(
  nc: NatsConnection,
  subject: string,
  samples: number,
  warmup = 50,
): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < warmup + samples; i++) {
    const t = now();
    await nc.request(subject, 'ping', { timeout: 5_000 });
    if (i >= warmup) out.push(now() - t);
  }
  return out;
}

/**
 * `chains` chains of `length` publishes, each to a subject of its own under `subjectPrefix` (a file stream's), each
 * with the expected subject sequence of the one before and waiting for its ack: `single` times each publish-ack,
 * `chained` each whole chain.
 */
export async function publishAckChains(
  js: JetStreamClient,
  subjectPrefix: string,
  length: number,
  chains: number,
  warmup = 10,
): Promise<{ single: number[]; chained: number[] }> {
  const single: number[] = [];
  const chained: number[] = [];
  for (let i = 0; i < warmup + chains; i++) {
    const subject = `${subjectPrefix}.${i}`;
    const t = now();
    let last = 0;
    for (let k = 0; k < length; k++) {
      const h = natsHeaders();
      h.set('Ormuz-Snapshot', SNAPSHOT);
      const t1 = now();
      const ack = await js.publish(subject, EVENT, {
        msgID: `${subject}-${k}`,
        expect: { lastSubjectSequence: last },
        headers: h,
      });
      if (i >= warmup) single.push(now() - t1);
      last = ack.seq;
    }
    if (i >= warmup) chained.push(now() - t);
  }
  return { single, chained };
}

/**
 * `samples` deliveries, one at a time, from a publish on `publisher` under `subjectPrefix` to an ordered consumer of
 * `stream` on `consumer` (another connection): how long a stored event takes to reach a service that consumes it.
 */
export async function jetStreamDeliveries(
  publisher: NatsConnection,
  consumer: JetStreamClient,
  stream: string,
  subjectPrefix: string,
  samples: number,
  warmup = 20,
): Promise<number[]> {
  const c = await consumer.consumers.get(stream, {
    filter_subjects: `${subjectPrefix}.>`,
    // From the first message under the prefix (there is none before): a publish that overtakes the consumer's creation
    // is still delivered.
    deliver_policy: DeliverPolicy.All,
  });
  const messages = await c.consume({ max_messages: 64 });
  const out: number[] = [];
  try {
    const it = messages[Symbol.asyncIterator]();
    for (let i = 0; i < warmup + samples; i++) {
      const t = now();
      publisher.publish(`${subjectPrefix}.d${i}`, EVENT);
      let timer: NodeJS.Timeout | undefined;
      const next = await Promise.race([
        it.next(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('no delivery within 10 s')), 10_000);
        }),
      ]).finally(() => clearTimeout(timer));
      if (next.done) throw new Error('the delivery consumer stopped');
      if (i >= warmup) out.push(now() - t);
    }
  } finally {
    // Stopped, not awaited: closing an ordered consume can wait for the server for as long as it likes.
    messages.stop();
  }
  return out;
}

/** A WebSocket server that echoes every message (the other end of {@link webSocketRoundTrips}). */
export async function webSocketEchoServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false, clientTracking: false });
  await new Promise((r) => server.once('listening', r));
  server.on('connection', (ws: WebSocket) => ws.on('message', (d: RawData) => ws.send(d as Buffer)));
  return {
    url: `ws://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** `samples` WebSocket round trips to `url`, one at a time, over `connections` connections in turn. */
export async function webSocketRoundTrips(
  url: string,
  samples: number,
  connections = 100,
  warmup = 50,
): Promise<number[]> {
  const clients = await Promise.all(
    Array.from({ length: connections }, async () => {
      const ws = new WebSocket(url, { perMessageDeflate: false });
      await new Promise((r, j) => ws.once('open', r).once('error', j));
      return ws;
    }),
  );
  // A frame about the size of a submit, so the baseline moves the same bytes.
  const body = JSON.stringify({ type: 'submit', tool: 'device.screen_observe', payload: '{}', pad: 'x'.repeat(300) });
  const out: number[] = [];
  try {
    for (let i = 0; i < warmup + samples; i++) {
      const ws = clients[i % clients.length]!;
      const t = now();
      await new Promise<void>((resolve) => {
        ws.once('message', () => resolve());
        ws.send(`{"request_id":"e-${i}",${body.slice(1)}`);
      });
      if (i >= warmup) out.push(now() - t);
    }
  } finally {
    for (const ws of clients) ws.terminate();
  }
  return out;
}
