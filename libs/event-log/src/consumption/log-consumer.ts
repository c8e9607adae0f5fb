/**
 * The one way Ormuz consumes its log, shared by projections and reactors.
 *
 * The checkpoint in Postgres is the only truth about how far a consumer has got. Each time consumption starts — at
 * boot, and again after any fault — the JetStream consumer is created anew at checkpoint + 1, so messages delivered to
 * a process that died are simply delivered again, in order, and no acknowledgement can cover a message that was not
 * handled. Within one incarnation, deliveries are checked as the ordered consumer checks them: a delivery sequence
 * that skips, or a stream sequence that goes backwards past what was taken, restarts consumption from the checkpoint.
 * The server's acknowledgements (ack-all, sent only up to the saved checkpoint, at most ACK_DELAY_MS after it moved)
 * serve as flow control: at most `window` messages are ever out.
 *
 * What is done with the messages is the sink's business (a projection commits them with the checkpoint in one
 * transaction; a reactor runs handlers and moves the checkpoint over what is finished); the sink reports each durable
 * checkpoint back through {@link LogConsumer.advance}.
 */
import {
  AckPolicy,
  DeliverPolicy,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import type { Kysely } from 'kysely';
import { Bookkeeping } from './bookkeeping.js';

/** What a consumer reads: one filter on one stream, with its checkpoint in `schema`. */
export interface LogSource {
  /** Durable consumer name and checkpoint key; unique per schema. */
  readonly name: string;
  /** Postgres schema holding the checkpoint and parked messages. */
  readonly schema: string;
  readonly stream: string;
  /** One subject filter (NATS 2.9 accepts only one per consumer). */
  readonly filterSubject: string;
}

/**
 * Where a crash can happen; tests kill the process at these points. `event`: one event of a message was applied (a
 * projection, inside its transaction) or handled (a reaction), before the message counts as done; `applied`: every
 * event of the batch (a projection, before its commit) or of the message (a reaction) was.
 */
export type CrashPoint = 'received' | 'event' | 'applied' | 'committed' | 'acknowledged';

export interface ConsumerLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface LogConsumerOptions {
  /** Messages handed to the sink at once (a projection's transaction). Default 256. */
  readonly batchSize?: number;
  /** Messages the server lets out before an acknowledgement. Default 4 × batchSize. */
  readonly window?: number;
  /** How long one pull waits for messages, in milliseconds. Default 1000. */
  readonly pullExpiresMs?: number;
  readonly logger?: ConsumerLogger;
  /** Called after each checkpoint the sink saves, e.g. to wake a dispatcher that reads the table. */
  readonly onCommitted?: (checkpoint: number) => void;
  /** Fault injection for crash tests: called at each step with the stream sequence concerned. */
  readonly crashPoint?: (point: CrashPoint, seq: number) => void;
}

/** Where one consumer stands, for operators (`ormuz projections status`). */
export interface ConsumerStatus {
  readonly name: string;
  readonly kind: 'projection' | 'reaction';
  readonly schema: string;
  readonly stream: string;
  readonly running: boolean;
  /** Highest stream sequence handled (saved). */
  readonly checkpoint: number;
  /** Messages in its filter after the checkpoint (undelivered plus delivered but not yet handled); null if unknown. */
  readonly lag: number | null;
  readonly parked: number;
  /** The oldest parked message, with its error. */
  readonly oldest_parked: {
    readonly seq: number;
    readonly subject: string;
    readonly error: string;
    readonly parked_at: string;
  } | null;
}

/** What consumes the messages. */
export interface LogSink {
  /**
   * Takes the next messages, in stream order, all after the checkpoint; resolves when it can take more. Throwing
   * restarts consumption from the saved checkpoint.
   */
  take(batch: readonly JsMsg[]): Promise<void>;
  /** Waits for work taken but not finished, and forgets it: consumption restarts from the checkpoint. */
  settle(): Promise<void>;
}

const silent: ConsumerLogger = { info() {}, warn() {}, error() {} };
/**
 * How long an acknowledgement may wait for later commits to cover it too, in ms. Acknowledgements are flow control
 * only (the checkpoint is the cursor), so a short wait costs nothing but trims a message per commit.
 */
const ACK_DELAY_MS = 20;
const ACK_WAIT_NANOS = 5 * 60 * 1_000_000_000;

export class LogConsumer {
  readonly bookkeeping: Bookkeeping;
  readonly logger: ConsumerLogger;
  private readonly batchSize: number;
  private readonly window: number;
  private readonly pullExpiresMs: number;
  private running = false;
  private starting: Promise<void> | undefined;
  private loop: Promise<void> | undefined;
  private messages: ConsumerMessages | undefined;
  /** Saved checkpoint: every message at or below it is handled or parked. */
  private checkpoint = 0;
  /** Highest stream sequence taken in this incarnation of the server consumer. */
  private received = 0;
  private nextDelivery = 1;
  private buffer: JsMsg[] = [];
  /** Taken messages not yet acknowledged, in stream order. */
  private unacked: JsMsg[] = [];
  /** Acknowledges what the checkpoint covers, unless a batch's worth made it happen sooner. */
  private ackTimer: NodeJS.Timeout | undefined;
  private fault: Error | undefined;
  private wake: (() => void) | undefined;
  private stopped: (() => void) | undefined;

  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    db: Kysely<any>,
    readonly source: LogSource,
    private readonly sink: LogSink,
    private readonly opts: LogConsumerOptions = {},
  ) {
    this.batchSize = opts.batchSize ?? 256;
    this.window = Math.max(this.batchSize, opts.window ?? this.batchSize * 4);
    this.pullExpiresMs = Math.max(1000, opts.pullExpiresMs ?? 1000);
    this.logger = opts.logger ?? silent;
    this.bookkeeping = new Bookkeeping(db, source.schema, source.name, source.stream);
  }

  /** Highest stream sequence handled (saved). */
  get position(): number {
    return this.checkpoint;
  }

  get isRunning(): boolean {
    return this.running;
  }

  /** Opens the consumer at checkpoint + 1 (errors are thrown here) and consumes in the background. */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.starting = this.open();
    try {
      await this.starting;
    } catch (err) {
      this.running = false;
      throw err;
    } finally {
      this.starting = undefined;
    }
    // stop() was called while the consumer opened: it waits for this start, then finds nothing running.
    if (!this.running) return this.close();
    this.loop = this.run();
  }

  /** Stops taking messages and waits for the sink; whatever was not saved is delivered again at the next start. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    await this.starting?.catch(() => undefined);
    this.wake?.();
    this.stopped?.();
    await this.loop;
    this.loop = undefined;
  }

  /** Deletes the server consumer (a rebuild or a removal); the checkpoint stays where the caller leaves it. */
  async deleteServerConsumer(): Promise<void> {
    await this.jsm.consumers.delete(this.source.stream, this.source.name).catch(() => false);
  }

  /**
   * Called by the sink once the checkpoint `seq` is saved: acknowledges up to it (at once when a batch's worth waits,
   * otherwise within ACK_DELAY_MS, so that a read model committing one event at a time does not send an
   * acknowledgement per event) and tells the listeners.
   */
  advance(seq: number): void {
    if (seq <= this.checkpoint) return;
    this.checkpoint = seq;
    this.crash('committed', seq);
    let covered = 0;
    while (covered < this.unacked.length && this.unacked[covered]!.seq <= seq) covered++;
    if (covered >= this.batchSize) this.acknowledge();
    else if (covered > 0) this.ackTimer ??= setTimeout(() => this.acknowledge(), ACK_DELAY_MS);
    if (this.opts.onCommitted) this.runEffects([() => this.opts.onCommitted!(seq)]);
  }

  /** Acknowledges (ack-all) every taken message the saved checkpoint covers. */
  private acknowledge(): void {
    clearTimeout(this.ackTimer);
    this.ackTimer = undefined;
    let last: JsMsg | undefined;
    while (this.unacked.length > 0 && this.unacked[0]!.seq <= this.checkpoint) last = this.unacked.shift();
    if (last) {
      last.ack();
      this.crash('acknowledged', last.seq);
    }
  }

  /** Runs work that follows a commit; a failing one is logged, and never undoes or repeats the commit. */
  runEffects(effects: readonly (() => void)[]): void {
    for (const effect of effects) {
      try {
        effect();
      } catch (err) {
        this.logger.error({ consumer: this.source.name, err: String(err) }, 'an effect after a commit failed');
      }
    }
  }

  /** Restarts consumption from the saved checkpoint (a sink found its view stale). */
  interrupt(err: Error): void {
    this.fault ??= err;
    this.wake?.();
  }

  /** Fault injection point (a no-op outside crash tests). */
  crash(point: CrashPoint, seq: number): void {
    this.opts.crashPoint?.(point, seq);
  }

  /** Where this consumer stands; `kind` is the sink's. */
  async status(kind: ConsumerStatus['kind']): Promise<ConsumerStatus> {
    const info = await this.jsm.consumers.info(this.source.stream, this.source.name).catch(() => undefined);
    const parked = await this.bookkeeping.parked();
    const oldest = parked[0];
    return {
      name: this.source.name,
      kind,
      schema: this.source.schema,
      stream: this.source.stream,
      running: this.running,
      checkpoint: this.checkpoint,
      lag: info ? info.num_pending + info.num_ack_pending : null,
      parked: parked.length,
      oldest_parked: oldest
        ? { seq: oldest.seq, subject: oldest.subject, error: oldest.error, parked_at: oldest.parkedAt.toISOString() }
        : null,
    };
  }

  /** Resolves once the checkpoint reaches `seq` (polling), or rejects after `timeoutMs`. */
  async waitFor(seq: number, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.checkpoint < seq) {
      if (Date.now() > deadline) {
        throw new Error(`${this.source.name} reached ${this.checkpoint}, not ${seq}, within ${timeoutMs} ms`);
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /** Resolves once every message now in the stream's filter is handled. */
  async catchUp(timeoutMs = 30_000): Promise<void> {
    // Acks are sent only up to the saved checkpoint, so an empty consumer (nothing undelivered, nothing unacknowledged)
    // means every message in the filter is handled, whatever else the stream holds. Consumer info takes the consumer's
    // lock on the server and slows its deliveries (by ~20x on NATS 2.9 when asked every few ms), so it is only asked
    // once the checkpoint has stopped moving.
    const deadline = Date.now() + timeoutMs;
    let seen = -1;
    for (;;) {
      if (this.checkpoint === seen) {
        const info = await this.jsm.consumers.info(this.source.stream, this.source.name).catch(() => undefined);
        if (info && info.num_pending === 0 && info.num_ack_pending === 0 && this.buffer.length === 0) return;
        if (Date.now() > deadline) {
          throw new Error(
            `${this.source.name} did not catch up within ${timeoutMs} ms ` +
              `(${info?.num_pending ?? '?'} undelivered, ${info?.num_ack_pending ?? '?'} unacknowledged, checkpoint ${this.checkpoint})`,
          );
        }
      }
      seen = this.checkpoint;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Reads the checkpoint and creates the server consumer anew right after it. */
  private async open(): Promise<void> {
    const { stream, name, filterSubject } = this.source;
    this.checkpoint = await this.bookkeeping.checkpoint();
    const start = this.checkpoint + 1;
    // A consumer left by an earlier incarnation (or a dead process) may hold deliveries that were never handled; its
    // position means nothing, so it is replaced.
    await this.jsm.consumers.delete(stream, name).catch(() => false);
    await this.jsm.consumers.add(stream, {
      durable_name: name,
      ack_policy: AckPolicy.All,
      deliver_policy: start > 1 ? DeliverPolicy.StartSequence : DeliverPolicy.All,
      ...(start > 1 ? { opt_start_seq: start } : {}),
      filter_subject: filterSubject,
      max_ack_pending: this.window,
      ack_wait: ACK_WAIT_NANOS,
    });
    const consumer = await this.js.consumers.get(stream, name);
    this.received = this.checkpoint;
    this.nextDelivery = 1;
    this.buffer = [];
    this.unacked = [];
    this.fault = undefined;
    const messages = await consumer.consume({
      max_messages: Math.min(this.window, this.batchSize * 2),
      expires: this.pullExpiresMs,
      // A deleted consumer or stream ends the subscription (and so restarts from the checkpoint) instead of waiting.
      abort_on_missing_resource: true,
      callback: (m) => this.receive(m),
    });
    this.messages = messages;
    void messages.closed().then((err) => {
      if (this.messages !== messages) return;
      this.fault ??= err instanceof Error ? err : new Error('the server consumer stopped delivering');
      this.wake?.();
    });
  }

  private receive(m: JsMsg): void {
    if (this.fault) return;
    const delivery = m.info.deliverySequence;
    if (delivery !== this.nextDelivery) {
      this.fault = new Error(`delivery ${delivery} arrived where ${this.nextDelivery} was due: a delivery was lost`);
    } else if (m.seq <= this.received) {
      // Delivered again (its ack wait ran out) while this process still holds it: the held copy is handled.
      this.nextDelivery++;
      return;
    } else {
      this.nextDelivery++;
      this.received = m.seq;
      this.buffer.push(m);
    }
    this.wake?.();
  }

  private async close(): Promise<void> {
    // Acknowledgements are the server consumer's flow control only: the next one is created anew at the checkpoint.
    clearTimeout(this.ackTimer);
    this.ackTimer = undefined;
    this.unacked = [];
    const messages = this.messages;
    this.messages = undefined;
    await messages?.close().catch(() => undefined);
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (this.running) {
      try {
        if (!this.messages) await this.open();
        if (!this.running) break;
        if (this.fault) throw this.fault;
        if (this.buffer.length === 0) {
          await new Promise<void>((resolve) => (this.wake = resolve));
          this.wake = undefined;
          continue;
        }
        const batch = this.buffer.splice(0, this.batchSize);
        this.unacked.push(...batch);
        for (const m of batch) this.crash('received', m.seq);
        await this.sink.take(batch);
        failures = 0;
      } catch (err) {
        if (!this.running) break;
        failures++;
        const retryInMs = Math.min(100 * 2 ** Math.min(failures, 6), 5_000);
        this.logger.warn(
          {
            consumer: this.source.name,
            stream: this.source.stream,
            checkpoint: this.checkpoint,
            retryInMs,
            err: String(err),
          },
          'consumption interrupted; resuming after the saved checkpoint',
        );
        await this.close();
        await this.sink.settle().catch(() => undefined);
        if (!this.running) break;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, retryInMs);
          this.stopped = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.stopped = undefined;
      }
    }
    await this.close();
    await this.sink.settle().catch(() => undefined);
  }
}
