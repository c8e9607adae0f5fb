/**
 * Builds a Postgres read model from one stream through one durable consumer.
 *
 * Messages are applied in batches; each batch runs in one transaction together with the checkpoint of its highest
 * stream sequence, and is acknowledged (ack-all, one ack per batch) only after the commit. A redelivered message at
 * or below the checkpoint is skipped, so a crash between commit and ack applies nothing twice. When a batch fails,
 * its messages are applied one transaction each; a message that still fails is parked (stored with its error, the
 * checkpoint moved past it, and reported) rather than blocking the projection or being dropped silently.
 */
import { AckPolicy, DeliverPolicy, type Consumer, type ConsumerMessages, type JetStreamClient, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { OrmuzEvent } from '@ormuz/contracts';
import { decodeEvent } from './event-store.js';

/** A read model: how one event changes its tables. `apply` must only use `trx`. */
export interface Projection<DB = any> {
  /** Durable consumer name and checkpoint key; unique per read model. */
  readonly name: string;
  /** Postgres schema holding the read model and its checkpoint. */
  readonly schema: string;
  /** Stream to read. */
  readonly stream: string;
  /** One subject filter (NATS 2.9 accepts only one per consumer). */
  readonly filterSubject: string;
  apply(trx: Transaction<DB>, event: OrmuzEvent, seq: number): Promise<void>;
  /**
   * Optional: applies a whole batch at once (e.g. one multi-row upsert), in stream order. Used for healthy batches;
   * when a batch fails, its messages go through `apply` one by one so a poison message can be parked.
   */
  applyBatch?(trx: Transaction<DB>, items: readonly { event: OrmuzEvent; seq: number }[]): Promise<void>;
  /** Empties the read model's tables, for a rebuild from sequence 1. */
  reset(trx: Transaction<DB>): Promise<void>;
}

/** Tables every schema with projections needs: checkpoints and parked messages. Add to the schema's migrations. */
export const projectionBookkeepingMigration: Migration = {
  async up(db) {
    await db.schema
      .createTable('projection_checkpoints')
      .addColumn('projection', 'text', (c) => c.notNull())
      .addColumn('stream', 'text', (c) => c.notNull())
      .addColumn('seq', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      // Keyed by stream too: a stream recreated under another namespace must not inherit a checkpoint.
      .addPrimaryKeyConstraint('projection_checkpoints_pk', ['projection', 'stream'])
      .execute();
    await db.schema
      .createTable('parked_messages')
      .addColumn('projection', 'text', (c) => c.notNull())
      .addColumn('stream', 'text', (c) => c.notNull())
      .addColumn('seq', 'bigint', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('error', 'text', (c) => c.notNull())
      .addColumn('parked_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addPrimaryKeyConstraint('parked_messages_pk', ['projection', 'stream', 'seq'])
      .execute();
  },
};

export interface ProjectionLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface ProjectionRunnerOptions {
  /** Messages per batch (and per transaction). Default 256. */
  readonly batchSize?: number;
  /** How long one pull waits for messages, in milliseconds. Default 1000. */
  readonly pullExpiresMs?: number;
  readonly logger?: ProjectionLogger;
  /** Called after each committed batch with the checkpoint reached, e.g. to wake a dispatcher that reads the table. */
  readonly onCommitted?: (checkpoint: number) => void;
}

interface BookkeepingDB {
  projection_checkpoints: { projection: string; stream: string; seq: number; updated_at?: Date };
  parked_messages: { projection: string; stream: string; seq: number; subject: string; payload: string; error: string };
}

const silent: ProjectionLogger = { info() {}, warn() {}, error() {} };

export class ProjectionRunner {
  private running = false;
  private loop: Promise<void> | undefined;
  private consumer: Consumer | undefined;
  private messages: ConsumerMessages | undefined;
  private checkpoint = 0;
  private readonly batchSize: number;
  private readonly pullExpiresMs: number;
  private readonly logger: ProjectionLogger;
  private readonly onCommitted: ((checkpoint: number) => void) | undefined;
  /** Messages parked since start, for reporting. */
  parkedCount = 0;

  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly db: Kysely<any>,
    private readonly projection: Projection,
    opts: ProjectionRunnerOptions = {},
  ) {
    this.batchSize = opts.batchSize ?? 256;
    this.pullExpiresMs = opts.pullExpiresMs ?? 1000;
    this.logger = opts.logger ?? silent;
    this.onCommitted = opts.onCommitted;
  }

  /** Highest stream sequence applied (committed). */
  get position(): number {
    return this.checkpoint;
  }

  /** Creates the durable consumer if needed and starts applying in the background. */
  async start(): Promise<void> {
    this.checkpoint = await this.readCheckpoint();
    await this.ensureConsumer(this.checkpoint + 1);
    this.running = true;
    this.loop = this.run();
  }

  /** Stops after the batch in flight; committed work is kept and the rest is redelivered next start. */
  async stop(): Promise<void> {
    this.running = false;
    await this.messages?.close().catch(() => undefined);
    await this.loop;
  }

  /**
   * Empties the read model and its checkpoint, recreates the consumer from sequence 1 and starts again. The rebuilt
   * table equals the live one because the same `apply` runs over the same events in the same order.
   */
  async rebuild(): Promise<void> {
    await this.stop();
    await this.jsm.consumers.delete(this.projection.stream, this.projection.name).catch(() => false);
    await this.db.transaction().execute(async (trx) => {
      await this.projection.reset(trx);
      for (const table of ['projection_checkpoints', 'parked_messages'] as const) {
        await this.tables(trx)
          .deleteFrom(table)
          .where('projection', '=', this.projection.name)
          .where('stream', '=', this.projection.stream)
          .execute();
      }
    });
    await this.start();
  }

  /** Resolves once the checkpoint reaches `seq` (polling), or rejects after `timeoutMs`. */
  async waitFor(seq: number, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.checkpoint < seq) {
      if (Date.now() > deadline) {
        throw new Error(`projection ${this.projection.name} reached ${this.checkpoint}, not ${seq}, within ${timeoutMs} ms`);
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /** Resolves once every message currently in the stream's filter has been applied. */
  async catchUp(timeoutMs = 10_000): Promise<void> {
    // Acks are sent only after commit, so an empty consumer (nothing undelivered, nothing unacknowledged) means every
    // message in the filter is applied, whatever else the stream holds. Consumer info takes the consumer's lock on
    // the server and slows its deliveries (by ~20x on NATS 2.9 when asked every few ms), so it is only asked once
    // the checkpoint has stopped moving.
    const deadline = Date.now() + timeoutMs;
    let seen = -1;
    for (;;) {
      if (this.checkpoint === seen) {
        const info = await this.jsm.consumers.info(this.projection.stream, this.projection.name);
        if (info.num_pending === 0 && info.num_ack_pending === 0) return;
        if (Date.now() > deadline) {
          throw new Error(
            `projection ${this.projection.name} did not catch up within ${timeoutMs} ms ` +
              `(${info.num_pending} undelivered, ${info.num_ack_pending} unacknowledged, checkpoint ${this.checkpoint})`,
          );
        }
      }
      seen = this.checkpoint;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  private tables(db: Kysely<any> | Transaction<any>): Kysely<BookkeepingDB> {
    return (db as Kysely<BookkeepingDB>).withSchema(this.projection.schema);
  }

  private async readCheckpoint(): Promise<number> {
    const row = await this.tables(this.db)
      .selectFrom('projection_checkpoints')
      .select('seq')
      .where('projection', '=', this.projection.name)
      .where('stream', '=', this.projection.stream)
      .executeTakeFirst();
    return row?.seq ?? 0;
  }

  private async ensureConsumer(startSeq: number): Promise<void> {
    const { stream, name, filterSubject } = this.projection;
    const existing = await this.jsm.consumers.info(stream, name).catch(() => undefined);
    // The checkpoint is the truth. A consumer that acknowledged past it (a transaction lost after its ack, which
    // asynchronous commit allows) is recreated from the checkpoint, so nothing is skipped.
    if (existing && existing.ack_floor.stream_seq > startSeq - 1) {
      await this.jsm.consumers.delete(stream, name);
    }
    if (!existing || existing.ack_floor.stream_seq > startSeq - 1) {
      await this.jsm.consumers.add(stream, {
        durable_name: name,
        ack_policy: AckPolicy.All,
        deliver_policy: startSeq > 1 ? DeliverPolicy.StartSequence : DeliverPolicy.All,
        ...(startSeq > 1 ? { opt_start_seq: startSeq } : {}),
        filter_subject: filterSubject,
        max_ack_pending: this.batchSize * 4,
        ack_wait: 30_000_000_000,
      });
    }
    this.consumer = await this.js.consumers.get(stream, name);
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        // Delivery and applying are decoupled: the client's callback only buffers, and this loop applies whatever
        // has arrived (up to batchSize) as one transaction. While a batch commits the next one accumulates, so
        // batches are large under load and a lone message is applied at once. The buffer is bounded by the
        // consumer's max_ack_pending, since acks are sent only after commit.
        const buffer: JsMsg[] = [];
        let wake: (() => void) | undefined;
        let closed = false;
        const messages = await this.consumer!.consume({
          max_messages: this.batchSize * 2,
          expires: Math.max(1000, this.pullExpiresMs),
          callback: (m) => {
            buffer.push(m);
            wake?.();
          },
        });
        this.messages = messages;
        void messages.closed().then(() => {
          closed = true;
          wake?.();
        });
        while (this.running && !closed) {
          if (buffer.length === 0) {
            await new Promise<void>((resolve) => (wake = resolve));
            wake = undefined;
            continue;
          }
          await this.applyBatch(buffer.splice(0, this.batchSize));
        }
      } catch (err) {
        if (!this.running) break;
        this.logger.warn({ err: String(err), projection: this.projection.name }, 'projection consumer failed; restarting');
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }

  private async applyBatch(batch: JsMsg[]): Promise<void> {
    const fresh = batch.filter((m) => m.seq > this.checkpoint);
    const last = batch.at(-1)!;
    if (fresh.length === 0) {
      last.ack();
      return;
    }
    try {
      await this.commit(fresh, last.seq);
    } catch (err) {
      this.logger.warn(
        { err: String(err), projection: this.projection.name, from: fresh[0]!.seq, to: last.seq },
        'batch failed; applying its messages one by one',
      );
      for (const msg of fresh) {
        try {
          await this.commit([msg], msg.seq);
        } catch (one) {
          await this.park(msg, one);
        }
      }
    }
    this.checkpoint = Math.max(this.checkpoint, last.seq);
    last.ack();
    this.onCommitted?.(this.checkpoint);
  }

  private async commit(msgs: JsMsg[], upTo: number): Promise<void> {
    const items = msgs.map((msg) => ({ event: decodeEvent(msg.subject, msg.seq, msg.data), seq: msg.seq }));
    await this.db.transaction().execute(async (trx) => {
      if (this.projection.applyBatch && items.length > 1) {
        await this.projection.applyBatch(trx, items);
      } else {
        for (const { event, seq } of items) await this.projection.apply(trx, event, seq);
      }
      await this.saveCheckpoint(trx, upTo);
    });
  }

  private async park(msg: JsMsg, err: unknown): Promise<void> {
    const reason = err instanceof Error ? err.message : String(err);
    await this.db.transaction().execute(async (trx) => {
      await this.tables(trx)
        .insertInto('parked_messages')
        .values({
          projection: this.projection.name,
          stream: this.projection.stream,
          seq: msg.seq,
          subject: msg.subject,
          payload: new TextDecoder().decode(msg.data),
          error: reason,
        })
        .onConflict((oc) => oc.columns(['projection', 'stream', 'seq']).doNothing())
        .execute();
      await this.saveCheckpoint(trx, msg.seq);
    });
    this.parkedCount++;
    this.logger.error(
      { projection: this.projection.name, seq: msg.seq, subject: msg.subject, err: reason },
      'message parked: it could not be applied and was stored in parked_messages',
    );
  }

  /**
   * Saves the checkpoint in `trx`, and lets `trx` commit without waiting for the WAL flush: a read model is
   * rebuildable and its checkpoint commits with it, so a commit lost in a crash is applied again from the checkpoint
   * (see ensureConsumer). The setting rides on this statement (what counts is its value at COMMIT), which saves a
   * round trip per batch: at a few events per batch, bookkeeping is most of a projection's Postgres traffic.
   */
  private async saveCheckpoint(trx: Transaction<any>, seq: number): Promise<void> {
    await this.tables(trx)
      .insertInto('projection_checkpoints')
      .values({ projection: this.projection.name, stream: this.projection.stream, seq })
      .onConflict((oc) =>
        oc.columns(['projection', 'stream']).doUpdateSet({ seq: sql`greatest(projection_checkpoints.seq, excluded.seq)`, updated_at: sql`now()` }),
      )
      .returning(sql<string>`set_config('synchronous_commit', 'off', true)`.as('synchronous_commit'))
      .execute();
  }
}
