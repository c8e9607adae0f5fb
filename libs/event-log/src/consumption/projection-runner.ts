/**
 * Builds a Postgres read model from one stream.
 *
 * Messages arrive through a {@link LogConsumer} (in order, from the checkpoint); every event of a message (one
 * decision's events are one message) is applied in the batch that holds it. Each batch is applied in one
 * transaction that first moves the checkpoint over it (a conditional update: a process whose view is stale fails
 * here and starts again from the table), or in one statement that does both (`writeBatch`), and is acknowledged only
 * after the commit. When a batch fails, its
 * messages are applied one transaction each; a message that still fails while the database answers is parked
 * (stored with its error, the checkpoint moved past it in the same transaction, and reported) rather than blocking
 * the read model or being dropped silently. When the database does not answer, nothing is parked: consumption
 * restarts from the checkpoint once it answers again. Side effects wait for the commit ({@link AfterCommit}).
 */
import type { JetStreamClient, JetStreamManager, JsMsg } from '@nats-io/jetstream';
import type { Kysely, RawBuilder, Transaction } from 'kysely';
import type { EventDraft } from '@ormuz/contracts';
import { inTraceOf, traceparentOf } from '@ormuz/tracing';
import type { Enveloped, ReadsEvents } from '../event-types.js';
import { CheckpointMovedError, type ParkedMessage } from './bookkeeping.js';
import { ConsumerRunner } from './consumer-runner.js';
import { SchemaRedirect } from './schema-redirect.js';
import type { LogConsumerOptions, LogSource } from './log-consumer.js';

/** Work to do once the transaction that applied the events has committed (frames to devices, wake-ups). */
export interface AfterCommit {
  defer(effect: () => void): void;
}

/**
 * A read model: how the events `E` change its tables. `apply` must only use `trx`.
 *
 * A projection of one aggregate's stream names its events with the contracts' guard
 * (`Projection<DB, ToolCallEventDraft>` with `accepts: isToolCallEvent`) and is handed them typed: switching on
 * `event.type` narrows `event.data`. Another event on the stream (only a writer that bypassed the aggregate's decider
 * can put one there) is parked as a ForeignEventError, never applied. A projection of every event (an archive) names
 * none.
 */
export type Projection<DB = any, E extends EventDraft = EventDraft> = ProjectionOf<DB, E> & ReadsEvents<E>;

interface ProjectionOf<DB, E extends EventDraft> extends LogSource {
  /**
   * Applies one event. `seq` is its message's stream sequence and `index` its place in that message (0 for a message
   * of one event): the events of one decision share a sequence, so a row guarded by the sequence it last saw lets an
   * equal one through (`last_seq <= seq`); the checkpoint, moved in the same transaction, already keeps a message
   * from being applied twice. A row keyed by sequence alone holds one event per message; key it by (seq, index).
   */
  apply(trx: Transaction<DB>, event: Enveloped<E>, seq: number, after: AfterCommit, index: number): Promise<void>;
  /**
   * Optional: applies a whole batch at once (e.g. one multi-row upsert), in stream order, every event of each
   * message. Used for healthy batches of more than one event; when a batch fails, its messages go through `apply`
   * one by one so a poison message can be parked.
   */
  applyBatch?(trx: Transaction<DB>, items: readonly AppliedEvent<E>[], after: AfterCommit): Promise<void>;
  /**
   * Optional, taken over `applyBatch`: writes a whole batch (every event of each message) and moves the checkpoint in
   * one statement, which commits on its own: one round trip to the database instead of a transaction's four (begin,
   * move, write, commit), which is what a busy read model that commits many small batches waits on. `moved` is the
   * checkpoint's move (`Bookkeeping.moveStatement`), to embed as a common table expression on which every write is
   * conditioned (`with moved as (...) insert ... where exists (select from moved)`), so that nothing is written when
   * another process moved the checkpoint. Resolves to whether the checkpoint moved. When it throws, the batch goes
   * through `apply` one by one like any failed batch.
   */
  writeBatch?(
    db: Kysely<DB>,
    items: readonly AppliedEvent<E>[],
    moved: RawBuilder<unknown>,
    after: AfterCommit,
  ): Promise<boolean>;
  /** Empties the read model's tables, for a rebuild from sequence 1. */
  reset(trx: Transaction<DB>): Promise<void>;
  /**
   * True when applying an event after events that followed it gives the same rows as applying it in order (an archive
   * keyed by stream sequence): a parked event is then retried where it stands; otherwise a retry rebuilds.
   */
  readonly appliesOutOfOrder?: boolean;
  /**
   * The tables the projection writes, in its schema: what a rebuild into another schema compares with the live read
   * model and swaps in (`ormuz projections rebuild`). A table other projections write too names the column and value
   * that select this projection's rows (such a table is compared, never swapped). Absent: it cannot be rebuilt elsewhere.
   */
  readonly tables?: readonly ReadModelTable[];
}

/** One table of a read model (see {@link Projection.tables}). */
export interface ReadModelTable {
  readonly name: string;
  /** In a table several projections write: the projection's rows are those where `column` equals `value`. */
  readonly rows?: { readonly column: string; readonly value: string };
  /**
   * Columns a rebuild of this projection alone cannot reproduce, left out when the copy is compared: they derive from
   * rows other projections write (the audit archive's hash chain links a tenant's events of every stream; `ormuz
   * audit verify` checks it).
   */
  readonly uncompared?: readonly string[];
}

/** One event of a batch: its message's stream sequence, and its place in that message. */
export interface AppliedEvent<E extends EventDraft = EventDraft> {
  readonly event: Enveloped<E>;
  readonly seq: number;
  readonly index: number;
  /** The W3C `traceparent` its message was appended under, when there was a trace (`apply` runs inside it). */
  readonly traceparent?: string;
}

export interface ProjectionRunnerOptions extends LogConsumerOptions {
  /** Leaves out what the projection defers to after its commits (a rebuild beside the live model tells no one). */
  readonly withoutEffects?: boolean;
}

export class ProjectionRunner extends ConsumerRunner {
  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly db: Kysely<any>,
    readonly projection: Projection,
    private readonly opts: ProjectionRunnerOptions = {},
  ) {
    super(js, jsm, db, projection, 'projection', opts);
  }

  /**
   * The same projection, applying the same events with the same code to a copy of its tables in `schema` (which must
   * hold them and the bookkeeping tables): its own consumer and checkpoint under `name`, every query redirected from
   * the live schema to `schema` ({@link SchemaRedirect}), and nothing run after its commits.
   */
  copyInto(schema: string, name: string): ProjectionRunner {
    const db = this.db.withPlugin(new SchemaRedirect(this.projection.schema, schema));
    return new ProjectionRunner(
      this.js,
      this.jsm,
      db,
      { ...this.projection, name, schema },
      {
        ...this.opts,
        onCommitted: undefined,
        crashPoint: undefined,
        withoutEffects: true,
      },
    );
  }

  /**
   * Empties the read model and its checkpoint and starts again from sequence 1. The rebuilt table equals the live one
   * because the same `apply` runs over the same events in the same order.
   *
   * A runner that is not running (a standby replica's, decision 0033) only empties both and deletes the server
   * consumer, after the reset: the process that runs the projection loses its subscription, restarts from the emptied
   * checkpoint and rebuilds (a batch it was committing meanwhile fails its checkpoint move and restarts the same way).
   */
  async rebuild(): Promise<void> {
    const running = this.consumer.isRunning;
    await this.stop();
    await this.db.transaction().execute(async (trx) => {
      await this.projection.reset(trx);
      await this.consumer.bookkeeping.reset(trx);
    });
    await this.consumer.deleteServerConsumer();
    if (running) await this.start();
  }

  /** Stops and deletes its server consumer: a copy ({@link copyInto}) that has done its work leaves nothing behind. */
  async dispose(): Promise<void> {
    await this.stop();
    await this.consumer.deleteServerConsumer();
  }

  /**
   * Applies the parked messages again once their cause is fixed. A projection whose `apply` gives the same rows in any
   * order ({@link Projection.appliesOutOfOrder}) gets each parked event applied where it stands, in the transaction
   * that takes it off the parked list. Any other is rebuilt from sequence 1, so the events are applied in stream
   * order; what still fails is parked again.
   */
  async retryParked(): Promise<{ retried: number; stillParked: ParkedMessage[]; rebuilt: boolean }> {
    const parked = await this.parked();
    if (parked.length === 0) return { retried: 0, stillParked: [], rebuilt: false };
    if (!this.projection.appliesOutOfOrder) {
      await this.rebuild();
      await this.catchUp(120_000);
      const stillParked = await this.parked();
      const again = new Set(stillParked.map((p) => p.seq));
      return { retried: parked.filter((p) => !again.has(p.seq)).length, stillParked, rebuilt: true };
    }
    const stillParked: ParkedMessage[] = [];
    let retried = 0;
    for (const message of parked) {
      try {
        const events = this.read(message.subject, message.seq, new TextEncoder().encode(message.payload));
        const effects: (() => void)[] = [];
        const after: AfterCommit = { defer: (e) => effects.push(e) };
        const applied = await this.db.transaction().execute(async (trx) => {
          if (!(await this.consumer.bookkeeping.unpark(trx, message.seq))) return false;
          for (const [index, event] of events.entries()) {
            await this.projection.apply(trx, event, message.seq, after, index);
          }
          return true;
        });
        this.runEffects(effects);
        if (applied) retried++;
      } catch (err) {
        stillParked.push({ ...message, error: errorText(err) });
      }
    }
    return { retried, stillParked, rebuilt: false };
  }

  async take(batch: readonly JsMsg[]): Promise<void> {
    try {
      await this.commit(batch);
    } catch (err) {
      if (err instanceof CheckpointMovedError) throw err;
      this.consumer.logger.warn(
        { err: String(err), projection: this.projection.name, from: batch[0]!.seq, to: batch.at(-1)!.seq },
        'batch failed; applying its messages one by one',
      );
      for (const msg of batch) {
        if (msg.seq <= this.consumer.position) continue;
        try {
          await this.commit([msg]);
        } catch (one) {
          if (one instanceof CheckpointMovedError) throw one;
          if (!(await this.consumer.bookkeeping.isPoison(one))) throw one;
          await this.park(msg, one);
        }
      }
    }
  }

  async settle(): Promise<void> {}

  private async commit(msgs: readonly JsMsg[]): Promise<void> {
    const items: AppliedEvent[] = msgs.flatMap((msg) => {
      const traceparent = traceparentOf(() => msg.headers);
      return this.read(msg.subject, msg.seq, msg.data).map((event, index) =>
        traceparent === undefined ? { event, seq: msg.seq, index } : { event, seq: msg.seq, index, traceparent },
      );
    });
    const last = msgs.at(-1)!.seq;
    const effects: (() => void)[] = [];
    const after: AfterCommit = { defer: (effect) => effects.push(effect) };
    const from = this.consumer.position;
    if (this.projection.writeBatch) {
      const moved = await this.projection.writeBatch(
        this.db,
        items,
        this.consumer.bookkeeping.moveStatement(from, last),
        after,
      );
      if (!moved) throw new CheckpointMovedError(this.projection.name, from);
      // Applied and committed at once: a crash here is one after the commit.
      this.consumer.crash('applied', last);
    } else {
      await this.db.transaction().execute(async (trx) => {
        await this.consumer.bookkeeping.move(trx, from, last);
        if (this.projection.applyBatch && items.length > 1) {
          await this.projection.applyBatch(trx, items, after);
        } else {
          for (const { event, seq, index, traceparent } of items) {
            await inTraceOf(traceparent, () => this.projection.apply(trx, event, seq, after, index));
            this.consumer.crash('event', seq);
          }
        }
        this.consumer.crash('applied', last);
      });
    }
    this.consumer.advance(last);
    this.runEffects(effects);
  }

  private runEffects(effects: readonly (() => void)[]): void {
    if (!this.opts.withoutEffects) this.consumer.runEffects(effects);
  }

  private async park(msg: JsMsg, err: unknown): Promise<void> {
    const reason = errorText(err);
    await this.db.transaction().execute(async (trx) => {
      await this.consumer.bookkeeping.move(trx, this.consumer.position, msg.seq);
      await this.consumer.bookkeeping.park(trx, msg, reason);
    });
    this.consumer.advance(msg.seq);
    this.consumer.logger.error(
      { projection: this.projection.name, seq: msg.seq, subject: msg.subject, err: reason },
      'message parked: it could not be applied and was stored in parked_messages',
    );
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
