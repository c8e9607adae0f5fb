/**
 * What a projection runner and a reaction runner share: one {@link LogConsumer} feeding the runner (its sink), and
 * the operations on it that callers and operators use. A runner adds how messages are handled (`take`, `settle`).
 */
import type { JetStreamClient, JetStreamManager, JsMsg } from '@nats-io/jetstream';
import type { Kysely } from 'kysely';
import type { EventDraft, OrmuzEvent } from '@ormuz/contracts';
import { decodeEvents } from '../event-store.js';
import { expectEvent, type EventGuard } from '../event-types.js';
import type { ParkedMessage } from './bookkeeping.js';
import {
  LogConsumer,
  type ConsumerStatus,
  type LogConsumerOptions,
  type LogSink,
  type LogSource,
} from './log-consumer.js';

export abstract class ConsumerRunner implements LogSink {
  protected readonly consumer: LogConsumer;
  private readonly accepts: EventGuard<EventDraft> | undefined;

  protected constructor(
    js: JetStreamClient,
    jsm: JetStreamManager,
    db: Kysely<any>,
    source: LogSource & { readonly accepts?: EventGuard<EventDraft> },
    private readonly kind: ConsumerStatus['kind'],
    opts: LogConsumerOptions,
  ) {
    this.consumer = new LogConsumer(js, jsm, db, source, this, opts);
    this.accepts = source.accepts;
  }

  /**
   * A stored message as the events the consumer reads, in order (one decision's events are one message): throws
   * CorruptEventError when it does not hold Ormuz events, and ForeignEventError when the consumer names its events
   * (`accepts`) and one of them is another. Either way the runner parks the whole message; the consumer's code only
   * ever sees the events it was typed for.
   */
  protected read(subject: string, seq: number, data: Uint8Array): OrmuzEvent[] {
    const events = decodeEvents(subject, seq, data);
    const accepts = this.accepts;
    if (!accepts) return events;
    return events.map((event) => expectEvent(accepts, event, { subject, seq, reader: `${this.kind} ${this.name}` }));
  }

  get name(): string {
    return this.consumer.source.name;
  }

  /** Highest stream sequence whose message, and every one before it, is handled or parked (saved). */
  get position(): number {
    return this.consumer.position;
  }

  /**
   * The checkpoint: this runner's while it runs, else the one saved in Postgres (where another replica's runner of the
   * same consumer stands).
   */
  async checkpoint(): Promise<number> {
    return this.consumer.isRunning ? this.consumer.position : this.consumer.bookkeeping.checkpoint();
  }

  start(): Promise<void> {
    return this.consumer.start();
  }

  /** Stops taking messages; what was not saved is delivered again at the next start. */
  stop(): Promise<void> {
    return this.consumer.stop();
  }

  waitFor(seq: number, timeoutMs?: number): Promise<void> {
    return this.consumer.waitFor(seq, timeoutMs);
  }

  catchUp(timeoutMs?: number): Promise<void> {
    return this.consumer.catchUp(timeoutMs);
  }

  status(): Promise<ConsumerStatus> {
    return this.consumer.status(this.kind);
  }

  parked(): Promise<ParkedMessage[]> {
    return this.consumer.bookkeeping.parked();
  }

  abstract take(batch: readonly JsMsg[]): Promise<void>;
  abstract settle(): Promise<void>;
}
