/**
 * Reads a stream's events from a sequence or a time through an ordered (ephemeral, flow-controlled) consumer,
 * for replays, NDJSON exports and live tails. Nothing durable is created on the server.
 */
import { DeliverPolicy, type JetStreamClient } from '@nats-io/jetstream';
import type { OrmuzEvent } from '@ormuz/contracts';
import { decodeEvents } from './event-store.js';

export interface ReplayOptions {
  readonly stream: string;
  /** One subject filter, e.g. a tenant's `ormuz.calls.acme.>`. */
  readonly filterSubject: string;
  /** Start at this stream sequence (inclusive) ... */
  readonly fromSequence?: number;
  /** ... or at the first event stored at or after this time. Neither: from the beginning. */
  readonly fromTime?: Date;
  /** Keep waiting for new events after catching up (a live tail). Default false: stop when caught up. */
  readonly follow?: boolean;
  /** Stops a follow; also honoured while catching up. */
  readonly signal?: AbortSignal;
}

/**
 * One replayed event with the stream sequence of its message and its index in that message (0 for a message of one
 * event; the events of one decision share a message). An unreadable message is yielded once, with `error` instead of
 * `event`.
 */
export type ReplayItem =
  | {
      readonly seq: number;
      readonly index: number;
      readonly subject: string;
      readonly event: OrmuzEvent;
      readonly error?: undefined;
    }
  | {
      readonly seq: number;
      readonly index?: undefined;
      readonly subject: string;
      readonly event?: undefined;
      readonly error: string;
    };

/** Yields the matching events in stream order. */
export async function* replay(js: JetStreamClient, opts: ReplayOptions): AsyncGenerator<ReplayItem> {
  const start =
    opts.fromSequence !== undefined
      ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: Math.max(1, opts.fromSequence) }
      : opts.fromTime
        ? { deliver_policy: DeliverPolicy.StartTime, opt_start_time: opts.fromTime.toISOString() }
        : { deliver_policy: DeliverPolicy.All };
  // A single filter must be a string: an array becomes filter_subjects, which NATS 2.9 refuses.
  const consumer = await js.consumers.get(opts.stream, { filter_subjects: opts.filterSubject, ...start });
  if (!opts.follow) {
    // Nothing matches at or after the start point (other tenants' events do not count): stop before consuming, since
    // closing a consume that was never read waits forever.
    const info = await consumer.info(false);
    if (info.num_pending === 0 && info.delivered.consumer_seq === 0) return;
  }
  const messages = await consumer.consume({ max_messages: 512 });
  const stop = () => void messages.stop();
  opts.signal?.addEventListener('abort', stop, { once: true });
  try {
    for await (const m of messages) {
      let events: OrmuzEvent[] | undefined;
      try {
        events = decodeEvents(m.subject, m.seq, m.data);
      } catch (err) {
        yield { seq: m.seq, subject: m.subject, error: (err as Error).message };
      }
      for (const [index, event] of events?.entries() ?? []) yield { seq: m.seq, index, subject: m.subject, event };
      if (!opts.follow && m.info.pending === 0) break;
    }
  } finally {
    opts.signal?.removeEventListener('abort', stop);
    await messages.close().catch(() => undefined);
  }
}
