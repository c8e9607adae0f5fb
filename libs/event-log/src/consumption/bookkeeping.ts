/**
 * The two tables every schema with consumers of the log holds: the checkpoint of each consumer (the only truth about
 * how far it has got) and the messages it parked. Every read and write of them goes through this file.
 */
import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { Migration } from 'kysely/migration';
import { OrmuzError } from '@ormuz/contracts';

/** Tables every schema with projections or reactors needs. Add to the schema's migrations. */
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

interface BookkeepingDB {
  projection_checkpoints: { projection: string; stream: string; seq: string | number; updated_at?: Date };
  parked_messages: {
    projection: string;
    stream: string;
    seq: string | number;
    subject: string;
    payload: string;
    error: string;
    parked_at?: Date;
  };
}

/** Another process moved this consumer's checkpoint: this one's view is stale, so it starts again from the table. */
export class CheckpointMovedError extends OrmuzError {
  readonly code = 'checkpoint_moved';
  constructor(
    readonly consumer: string,
    readonly expected: number,
  ) {
    super(
      `The checkpoint of ${consumer} is no longer at ${expected}: another process is consuming for it. ` +
        'This one reads the checkpoint again and resumes after it.',
    );
  }
}

/** A message that could not be handled, as stored in `parked_messages`. */
export interface ParkedMessage {
  readonly seq: number;
  readonly subject: string;
  readonly payload: string;
  readonly error: string;
  readonly parkedAt: Date;
}

/** One consumer's rows in one schema. */
export class Bookkeeping {
  constructor(
    readonly db: Kysely<any>,
    readonly schema: string,
    readonly consumer: string,
    readonly stream: string,
  ) {}

  private tables(db: Kysely<any> | Transaction<any>): Kysely<BookkeepingDB> {
    return (db as Kysely<BookkeepingDB>).withSchema(this.schema);
  }

  /** The checkpoint, creating its row at 0 the first time, so that every later move is a conditional update. */
  async checkpoint(): Promise<number> {
    await this.tables(this.db)
      .insertInto('projection_checkpoints')
      .values({ projection: this.consumer, stream: this.stream, seq: 0 })
      .onConflict((oc) => oc.columns(['projection', 'stream']).doNothing())
      .execute();
    const row = await this.tables(this.db)
      .selectFrom('projection_checkpoints')
      .select('seq')
      .where('projection', '=', this.consumer)
      .where('stream', '=', this.stream)
      .executeTakeFirstOrThrow();
    return Number(row.seq);
  }

  /**
   * Moves the checkpoint from `from` to `to` inside `trx`, or throws {@link CheckpointMovedError} when it is not at
   * `from` (another process consumed meanwhile). The row lock it takes serialises concurrent consumers, so an event is
   * applied once even if two processes run the same consumer. The transaction may commit without waiting for the WAL
   * flush: a commit lost in a crash only moves the checkpoint back, and consumption resumes after it. The setting rides
   * on this statement (what counts is its value at COMMIT), which saves a round trip per batch.
   */
  async move(trx: Transaction<any>, from: number, to: number): Promise<void> {
    const moved = await this.tables(trx)
      .updateTable('projection_checkpoints')
      .set({ seq: to, updated_at: sql`now()` })
      .where('projection', '=', this.consumer)
      .where('stream', '=', this.stream)
      .where('seq', '=', from)
      .returning(sql<string>`set_config('synchronous_commit', 'off', true)`.as('synchronous_commit'))
      .execute();
    if (moved.length !== 1) throw new CheckpointMovedError(this.consumer, from);
  }

  /**
   * The same move as {@link move}, as a statement for a projection to embed in its own single-statement write (as the
   * common table expression every write is conditioned on, see `Projection.writeBatch`): it returns one row when the
   * checkpoint was at `from` and is now at `to`, none otherwise. The statement commits on its own, and like a batch's
   * transaction without waiting for the WAL flush.
   */
  moveStatement(from: number, to: number): RawBuilder<unknown> {
    return sql`update ${sql.table(`${this.schema}.projection_checkpoints`)} set seq = ${to}, updated_at = now()
      where projection = ${this.consumer} and stream = ${this.stream} and seq = ${from}
      returning set_config('synchronous_commit', 'off', true) as synchronous_commit`;
  }

  /** Stores a message that could not be handled, inside `trx`. Parking it again keeps the first row. */
  async park(
    trx: Transaction<any>,
    msg: { seq: number; subject: string; data: Uint8Array },
    error: string,
  ): Promise<void> {
    await this.tables(trx)
      .insertInto('parked_messages')
      .values({
        projection: this.consumer,
        stream: this.stream,
        seq: msg.seq,
        subject: msg.subject,
        payload: new TextDecoder().decode(msg.data),
        error,
      })
      .onConflict((oc) => oc.columns(['projection', 'stream', 'seq']).doNothing())
      .execute();
  }

  async parked(): Promise<ParkedMessage[]> {
    const rows = await this.tables(this.db)
      .selectFrom('parked_messages')
      .selectAll()
      .where('projection', '=', this.consumer)
      .where('stream', '=', this.stream)
      .orderBy('seq')
      .execute();
    return rows.map((r) => ({
      seq: Number(r.seq),
      subject: r.subject,
      payload: r.payload,
      error: r.error,
      parkedAt: r.parked_at!,
    }));
  }

  /**
   * Removes a parked message inside `trx`, which a retry then applies in the same transaction; false when it is no
   * longer parked (another retry, or a rebuild, took it first). The row lock makes concurrent retries wait.
   */
  async unpark(trx: Transaction<any>, seq: number): Promise<boolean> {
    const removed = await this.tables(trx)
      .deleteFrom('parked_messages')
      .where('projection', '=', this.consumer)
      .where('stream', '=', this.stream)
      .where('seq', '=', seq)
      .returning('seq')
      .execute();
    return removed.length > 0;
  }

  /** Empties the checkpoint and the parked messages, inside `trx` (a rebuild from sequence 1). */
  async reset(trx: Transaction<any>): Promise<void> {
    for (const table of ['projection_checkpoints', 'parked_messages'] as const) {
      await this.tables(trx)
        .deleteFrom(table)
        .where('projection', '=', this.consumer)
        .where('stream', '=', this.stream)
        .execute();
    }
  }

  /**
   * True when `err` is the message's fault, so parking it is right: anything the projection's own code threw, and the
   * database's verdicts on the data (SQLSTATE classes 22 data exception, 23 integrity violation, 42 syntax or access
   * rule). Connection failures, deadlocks, serialization failures, timeouts, a server starting up or out of resources
   * are the database's: consumption restarts from the checkpoint instead.
   */
  async isPoison(err: unknown): Promise<boolean> {
    const code = (err as { code?: unknown } | null)?.code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return /^(22|23|42)/.test(code);
    return this.databaseAnswers();
  }

  /** True when the database answers a trivial query: a failure then is the message's, not the database's. */
  async databaseAnswers(): Promise<boolean> {
    try {
      await sql`select 1`.execute(this.db);
      return true;
    } catch {
      return false;
    }
  }
}
