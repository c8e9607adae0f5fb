/**
 * A tiny aggregate and its read model, to exercise the log and its consumers without any real domain: the event-log
 * tests, the crash tests (whose child processes load it from the compiled package) and the event-log bench all count
 * the same increments into the same table.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import { hasSchema, OrmuzError, registerSchema, type EventDraft } from '@ormuz/contracts';
import type { Decider } from '@ormuz/event-log';

/** An increment of a counter, with the counter's new total. */
export const INCREMENTED = 'ormuz.test.incremented.v1';
if (!hasSchema(INCREMENTED)) {
  registerSchema(INCREMENTED, {
    type: 'object',
    additionalProperties: false,
    required: ['by', 'total'],
    properties: { by: { type: 'integer', minimum: 1 }, total: { type: 'integer' } },
  });
}

/** Another event type, which the counter does not read (a foreign event on a counter's subject). */
export const NOTED = 'ormuz.test.noted.v1';
if (!hasSchema(NOTED)) {
  registerSchema(NOTED, {
    type: 'object',
    additionalProperties: false,
    required: ['note'],
    properties: { note: { type: 'string' } },
  });
}

export type Incremented = EventDraft<typeof INCREMENTED, { by: number; total: number }>;
export const isIncremented = (event: EventDraft): event is Incremented => event.type === INCREMENTED;
export interface CounterState {
  total: number;
  count: number;
}
/**
 * `times` (default 1): increments decided at once, so appended as one message of that many events. `atLeast`: refused
 * (BelowMinimumError) while the total is below it; `skipBelow`: nothing is decided while the total is below it. Both
 * are answers that state behind the log gets wrong, as a decider refuses a result for a call it has not seen yet.
 */
export type CounterCommand = {
  type: 'Increment';
  by: number;
  limit?: number;
  times?: number;
  atLeast?: number;
  skipBelow?: number;
};

/** The counter refuses an increment that would take its total past the command's `limit`. */
export class LimitReachedError extends OrmuzError {
  readonly code = 'limit_reached';
}

/** The counter refuses an increment that needs a higher total than it has (`atLeast`). */
export class BelowMinimumError extends OrmuzError {
  readonly code = 'below_minimum';
}

export const counter: Decider<CounterState, CounterCommand, Incremented> = {
  initialState: { total: 0, count: 0 },
  stateVersion: 1,
  evolve: (s, e) => ({ total: e.data.total, count: s.count + 1 }),
  decide: (c, s) => {
    const times = c.times ?? 1;
    if (c.atLeast !== undefined && s.total < c.atLeast) {
      throw new BelowMinimumError(`total ${s.total} is below ${c.atLeast}`);
    }
    if (c.skipBelow !== undefined && s.total < c.skipBelow) return [];
    if (c.limit !== undefined && s.total + c.by * times > c.limit) {
      throw new LimitReachedError(`limit ${c.limit} reached`);
    }
    return Array.from({ length: times }, (_, i) => ({
      type: INCREMENTED,
      data: { by: c.by, total: s.total + c.by * (i + 1) },
    }));
  },
};

/** The counters' table, as {@link countersTableMigration} creates it. */
export interface CountersDB {
  counters: { projection: string; id: string; total: number; events: number; last_seq: number };
}

/**
 * The counters' read model: per projection and counter subject, the latest total, how many events were counted and
 * the sequence of the last. A migration for the schema the projections write to.
 */
export const countersTableMigration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('counters')
      .addColumn('projection', 'text', (c) => c.notNull())
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('total', 'integer', (c) => c.notNull())
      .addColumn('events', 'integer', (c) => c.notNull())
      .addColumn('last_seq', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('counters_pk', ['projection', 'id'])
      .execute();
  },
};

/**
 * Counts one increment (on counter `subject`, at log sequence `seq`) into `schema`'s counters for `projection`: an
 * increment applied twice, or skipped, changes the row.
 */
export async function countIncrement(
  trx: Transaction<CountersDB>,
  schema: string,
  projection: string,
  increment: { readonly subject: string; readonly data: unknown },
  seq: number,
): Promise<void> {
  const { total } = increment.data as Incremented['data'];
  await trx
    .withSchema(schema)
    .insertInto('counters')
    .values({ projection, id: increment.subject, total, events: 1, last_seq: seq })
    .onConflict((oc) =>
      oc.columns(['projection', 'id']).doUpdateSet({ total, events: sql`counters.events + 1`, last_seq: seq }),
    )
    .execute();
}

/** Forgets everything `projection` counted in `schema` (a rebuild starts from here). */
export async function resetCounters(trx: Transaction<CountersDB>, schema: string, projection: string): Promise<void> {
  await trx.withSchema(schema).deleteFrom('counters').where('projection', '=', projection).execute();
}
