/**
 * Runs a side-effecting reaction to the events of one stream.
 *
 * Unlike a projection, a reaction acts on other aggregates or services, so its handler must be idempotent: the
 * checkpoint moves over a message only once its handler has finished (or the message was parked), and after a crash
 * every message after the checkpoint is handled again. Messages with the same key (the subject: one conversation, one
 * call) are handled one at a time in stream order; different keys run concurrently, at most `window` at once. A
 * failing message is retried with backoff; after `maxAttempts` it is parked and reported, never dropped silently.
 * The events of one message (one decision) are handled in order, and the message is done once the last one is; an
 * event that fails is retried on its own, since those before it were handled.
 */
import type { JetStreamClient, JetStreamManager, JsMsg } from '@nats-io/jetstream';
import type { Kysely } from 'kysely';
import type { EventDraft, OrmuzEvent } from '@ormuz/contracts';
import { inTraceOf, traceparentOf } from '@ormuz/tracing';
import type { Enveloped, ReadsEvents } from '../event-types.js';
import type { ParkedMessage } from './bookkeeping.js';
import { ConsumerRunner } from './consumer-runner.js';
import type { LogConsumerOptions, LogSource } from './log-consumer.js';

/** A delivery's position in its retries, and the event's place on the log. */
export interface Delivery {
  /** 1 on the first attempt in this process. */
  readonly attempt: number;
  /** The stream sequence of the event's message. */
  readonly seq: number;
  /** The event's place in its message: 0 for a message of one event. */
  readonly index: number;
}

/**
 * What to do with the events `E` of one stream. Like a {@link Projection}, a reaction to one aggregate's events names
 * them (`accepts`) and is handed them typed; another event on the stream is parked at once (ForeignEventError).
 */
export type Reaction<E extends EventDraft = EventDraft> = ReactionOf<E> & ReadsEvents<E>;

interface ReactionOf<E extends EventDraft> extends LogSource {
  /** Handles one event; must be idempotent. Throwing retries the message later. */
  handle(event: Enveloped<E>, delivery: Delivery): Promise<void>;
}

export interface ReactionRunnerOptions extends LogConsumerOptions {
  /** Attempts before a message is parked. Default 10. */
  readonly maxAttempts?: number;
  /** First retry delay in ms, doubled on each attempt up to 30 s. Default 250. */
  readonly retryDelayMs?: number;
}

/**
 * How long a finished message may wait for the save of the checkpoint over it, in ms, unless a batch's worth waits.
 * Nothing waits on a reaction's checkpoint (its handler has acted already): it only says where to resume after a
 * crash, and handlers are idempotent. So a trickle of messages shares one save instead of a transaction each, which
 * was most of what a reaction cost Postgres per governed call (`bench:e2e`'s commits per result).
 */
const SAVE_DELAY_MS = 100;

/** A reaction takes 64 messages at a time and lets at most 256 be unfinished. */
function consumerOptions(opts: ReactionRunnerOptions): LogConsumerOptions & { batchSize: number; window: number } {
  const batchSize = opts.batchSize ?? 64;
  return { ...opts, batchSize, window: Math.max(batchSize, opts.window ?? 256) };
}

interface InFlight {
  readonly seq: number;
  done: boolean;
}

export class ReactionRunner extends ConsumerRunner {
  private readonly maxAttempts: number;
  private readonly retryDelayMs: number;
  private readonly window: number;
  /** Taken messages in stream order, until the checkpoint moves over them. */
  private inFlight: InFlight[] = [];
  private readonly chains = new Map<string, Promise<void>>();
  private saving: Promise<void> = Promise.resolve();
  /** The finished position not saved yet, how many messages it covers, and the save that will write it. */
  private unsavedUpTo = 0;
  private unsaved = 0;
  private saveTimer: NodeJS.Timeout | undefined;
  private readonly batchSize: number;
  private stopping = false;
  private progressed: (() => void) | undefined;
  private readonly sleepers = new Set<() => void>();

  constructor(
    js: JetStreamClient,
    jsm: JetStreamManager,
    db: Kysely<any>,
    private readonly reaction: Reaction,
    opts: ReactionRunnerOptions = {},
  ) {
    super(js, jsm, db, reaction, 'reaction', consumerOptions(opts));
    this.maxAttempts = opts.maxAttempts ?? 10;
    this.retryDelayMs = opts.retryDelayMs ?? 250;
    this.window = consumerOptions(opts).window;
    this.batchSize = consumerOptions(opts).batchSize;
  }

  override async start(): Promise<void> {
    this.stopping = false;
    await super.start();
  }

  /** Stops taking messages, abandons retries waiting for their turn, and waits for the handlers in flight. */
  override async stop(): Promise<void> {
    this.stopping = true;
    for (const wake of this.sleepers) wake();
    this.progressed?.();
    await super.stop();
  }

  /** Handles the parked messages again (one attempt each) and removes those that now succeed. */
  async retryParked(): Promise<{ retried: number; stillParked: ParkedMessage[]; rebuilt: boolean }> {
    const stillParked: ParkedMessage[] = [];
    let retried = 0;
    for (const parked of await this.parked()) {
      try {
        const events = this.read(parked.subject, parked.seq, new TextEncoder().encode(parked.payload));
        // The row stays claimed (locked) while the handler runs, so a concurrent retry waits and then finds it gone.
        const handled = await this.consumer.bookkeeping.db.transaction().execute(async (trx) => {
          if (!(await this.consumer.bookkeeping.unpark(trx, parked.seq))) return false;
          for (const [index, event] of events.entries()) {
            await this.reaction.handle(event, { attempt: 1, seq: parked.seq, index });
          }
          return true;
        });
        if (handled) retried++;
      } catch (err) {
        stillParked.push({ ...parked, error: err instanceof Error ? err.message : String(err) });
      }
    }
    return { retried, stillParked, rebuilt: false };
  }

  async take(batch: readonly JsMsg[]): Promise<void> {
    for (const msg of batch) {
      const entry: InFlight = { seq: msg.seq, done: false };
      this.inFlight.push(entry);
      const key = msg.subject;
      const next = (this.chains.get(key) ?? Promise.resolve()).then(async () => {
        if (this.stopping) return;
        if (await this.process(msg)) {
          entry.done = true;
          this.moveCheckpoint();
        }
      });
      this.chains.set(key, next);
      void next.finally(() => {
        if (this.chains.get(key) === next) this.chains.delete(key);
      });
    }
    // Backpressure: take more only while fewer than `window` messages are unfinished.
    while (!this.stopping && this.inFlight.length >= this.window) {
      await new Promise<void>((resolve) => (this.progressed = resolve));
    }
  }

  async settle(): Promise<void> {
    while (this.chains.size > 0) await Promise.allSettled([...this.chains.values()]);
    this.saveCheckpoint();
    await this.saving;
    this.inFlight = [];
  }

  /** Handles one message's events in order, each with retries; false when abandoned because the runner is stopping. */
  private async process(msg: JsMsg): Promise<boolean> {
    let events: OrmuzEvent[];
    try {
      events = this.read(msg.subject, msg.seq, msg.data);
    } catch (err) {
      return this.park(msg, err);
    }
    // The handler continues the trace the message was appended in.
    const traceparent = traceparentOf(() => msg.headers);
    for (const [index, event] of events.entries()) {
      for (let attempt = 1; ; attempt++) {
        if (this.stopping) return false;
        try {
          await inTraceOf(traceparent, () => this.reaction.handle(event, { attempt, seq: msg.seq, index }));
          this.consumer.crash('event', msg.seq);
          break;
        } catch (err) {
          if (attempt >= this.maxAttempts) return this.park(msg, err);
          const retryInMs = Math.min(this.retryDelayMs * 2 ** (attempt - 1), 30_000);
          this.consumer.logger.warn(
            {
              reaction: this.reaction.name,
              seq: msg.seq,
              index,
              subject: msg.subject,
              attempt,
              retryInMs,
              err: String(err),
            },
            'reaction failed; it will be retried',
          );
          await this.sleep(retryInMs);
        }
      }
    }
    this.consumer.crash('applied', msg.seq);
    return true;
  }

  private async park(msg: JsMsg, err: unknown): Promise<boolean> {
    const reason = err instanceof Error ? err.message : String(err);
    for (;;) {
      try {
        await this.consumer.bookkeeping.db
          .transaction()
          .execute((trx) => this.consumer.bookkeeping.park(trx, msg, reason));
        break;
      } catch (parkErr) {
        this.consumer.logger.error(
          { reaction: this.reaction.name, seq: msg.seq, err: String(parkErr) },
          'could not park a message',
        );
        if (this.stopping) return false;
        await this.sleep(1_000);
      }
    }
    this.consumer.logger.error(
      { reaction: this.reaction.name, seq: msg.seq, subject: msg.subject, err: reason },
      'message parked: it kept failing and was stored in parked_messages',
    );
    return true;
  }

  /**
   * Moves the checkpoint over the finished head of `inFlight`: saved at once when a batch's worth is unsaved, else
   * within SAVE_DELAY_MS (and when the runner settles).
   */
  private moveCheckpoint(): void {
    let upTo = 0;
    let finished = 0;
    while (this.inFlight.length > 0 && this.inFlight[0]!.done) {
      upTo = this.inFlight.shift()!.seq;
      finished++;
    }
    this.progressed?.();
    if (upTo === 0) return;
    this.unsavedUpTo = upTo;
    this.unsaved += finished;
    if (this.unsaved >= this.batchSize) this.saveCheckpoint();
    else this.saveTimer ??= setTimeout(() => this.saveCheckpoint(), SAVE_DELAY_MS);
  }

  /** Saves the finished position not saved yet; one save at a time, the latest position wins. */
  private saveCheckpoint(): void {
    clearTimeout(this.saveTimer);
    this.saveTimer = undefined;
    const upTo = this.unsavedUpTo;
    this.unsavedUpTo = 0;
    this.unsaved = 0;
    if (upTo === 0) return;
    this.saving = this.saving.then(async () => {
      const from = this.consumer.position;
      if (upTo <= from) return;
      try {
        await this.consumer.bookkeeping.db
          .transaction()
          .execute((trx) => this.consumer.bookkeeping.move(trx, from, upTo));
        this.consumer.advance(upTo);
      } catch (err) {
        // Not saved (another process moved it, or the database failed): consumption restarts from the saved
        // checkpoint and handles what follows again (handlers are idempotent); that also frees the server's window.
        this.consumer.logger.warn(
          { reaction: this.reaction.name, upTo, err: String(err) },
          'could not save the checkpoint',
        );
        this.consumer.interrupt(err instanceof Error ? err : new Error(String(err)));
      }
    });
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.sleepers.add(wake);
    });
  }
}
