import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { sql, type Kysely } from 'kysely';
import { aggregateSubject, contextFilter, envelope, type OrmuzEvent } from '@ormuz/contracts';
import { migrateSchema, openDatabase } from '@ormuz/postgres';
import {
  counter,
  countersTableMigration,
  countIncrement,
  createTestDatabase,
  type Incremented,
  isIncremented,
  NOTED,
  randomNamespace,
  resetCounters,
  type TestDatabase,
  testEnv,
  waitFor,
} from '@ormuz/testing';
import {
  connectNats,
  EventStore,
  ensureStreams,
  projectionBookkeepingMigration,
  ProjectionRunner,
  runCommand,
  streamName,
  type Projection,
} from '../src/index.js';

describe('projection runner', () => {
  let nc: NatsConnection;
  let js: JetStreamClient;
  let jsm: JetStreamManager;
  let store: EventStore;
  let database: TestDatabase;
  let db: Kysely<any>;
  const ns = randomNamespace();
  const stream = streamName(ns, 'calls');
  const ctx = (id: string) => ({
    source: '/test',
    tenant: 'acme',
    aggregateId: id,
    correlationid: 'c',
    causationid: 'c',
  });
  const increment = (id: string, by = 1) =>
    runCommand(store, stream, aggregateSubject(ns, 'calls', 'acme', id), counter, { type: 'Increment', by }, ctx(id));

  /** While true, an increment by 13 is poison and makes apply throw. */
  let unlucky = true;
  /** Increments by 7 that fail once each with a database error of the database's own (a deadlock), not the event's. */
  let deadlocks = 0;

  /** Counts per aggregate. */
  const projection = (name: string, extra: Partial<Projection> = {}): Projection => ({
    name,
    schema: 'readmodels',
    stream,
    filterSubject: contextFilter(ns, 'calls'),
    ...extra,
    async apply(trx, event: OrmuzEvent, seq) {
      const { by } = event.data as { by: number };
      if (by === 13 && unlucky) throw new Error('unlucky increment');
      if (by === 7 && deadlocks > 0) {
        deadlocks--;
        throw Object.assign(new Error('deadlock detected'), { code: '40P01' });
      }
      await countIncrement(trx, 'readmodels', name, event, seq);
    },
    async reset(trx) {
      await resetCounters(trx, 'readmodels', name);
    },
  });

  const rows = (name: string) =>
    db
      .withSchema('readmodels')
      .selectFrom('counters')
      .select(['id', 'total', 'events'])
      .where('projection', '=', name)
      .orderBy('id')
      .execute();

  beforeAll(async () => {
    nc = await connectNats({ url: testEnv().natsUrl, name: 'projection-test' });
    js = jetstream(nc);
    jsm = await jetstreamManager(nc);
    await ensureStreams(jsm, ns, ['calls']);
    store = new EventStore(js, jsm);
    database = await createTestDatabase();
    db = await openDatabase({ url: database.url });
    await migrateSchema(db, 'readmodels', {
      '001_bookkeeping': projectionBookkeepingMigration,
      '002_counters': countersTableMigration,
    });
  });
  afterAll(async () => {
    await db.destroy();
    await database.drop();
    await jsm.streams.delete(stream);
    await nc.close();
  });

  it('applies events in batches with the checkpoint, and rebuilding from 1 gives exactly the live table', async () => {
    for (let i = 0; i < 40; i++) await increment(`p${i % 4}`);
    const runner = new ProjectionRunner(js, jsm, db, projection('live'), { batchSize: 16 });
    await runner.start();
    await runner.catchUp();
    const live = await rows('live');
    expect(live).toEqual(['p0', 'p1', 'p2', 'p3'].map((id) => ({ id, total: 10, events: 10 })));
    await runner.rebuild();
    await runner.catchUp();
    expect(await rows('live')).toEqual(live);
    await runner.stop();
  });

  it('applies every message once after a process died holding deliveries it never acknowledged', async () => {
    // The crash the issue reported: a durable consumer delivered messages to a process that died before applying
    // them. A new process must not take later messages first and acknowledge over the unapplied ones.
    for (let i = 0; i < 12; i++) await increment(`d${i % 3}`);
    const filter = contextFilter(ns, 'calls');
    await jsm.consumers.add(stream, {
      durable_name: 'died',
      ack_policy: 'all' as never,
      filter_subject: filter,
      ack_wait: 60_000_000_000,
    });
    const held = await (await js.consumers.get(stream, 'died')).fetch({ max_messages: 5, expires: 2000 });
    let taken = 0;
    for await (const m of held) {
      void m; // delivered to the "dead" process, never acknowledged
      if (++taken === 5) break;
    }
    const runner = new ProjectionRunner(js, jsm, db, projection('died'), { batchSize: 4 });
    await runner.start();
    await runner.catchUp();
    await runner.stop();
    expect((await rows('died')).filter((r) => r.id.startsWith('d'))).toEqual(
      ['d0', 'd1', 'd2'].map((id) => ({ id, total: 4, events: 4 })),
    );
  });

  it('applies each message once when two processes run the same projection at once', async () => {
    for (let i = 0; i < 60; i++) await increment(`z${i % 5}`);
    const a = new ProjectionRunner(js, jsm, db, projection('zombie'), { batchSize: 8 });
    const b = new ProjectionRunner(js, jsm, db, projection('zombie'), { batchSize: 8 });
    await a.start();
    await b.start(); // replaces a's server consumer; a's batches then find the checkpoint moved
    for (let i = 0; i < 60; i++) await increment(`z${i % 5}`);
    // Both run and replace each other's server consumer, so progress is slow while both live; what matters is that
    // nothing is applied twice. Once some of the second half is in, the zombie dies and the other finishes alone.
    const applied = async () =>
      (await rows('zombie')).filter((r) => r.id.startsWith('z')).reduce((n, r) => n + r.events, 0);
    await waitFor(async () => (await applied()) > 60, { message: 'events applied while both run', timeoutMs: 30_000 });
    await a.stop();
    await b.catchUp(30_000);
    await b.stop();
    expect((await rows('zombie')).filter((r) => r.id.startsWith('z'))).toEqual(
      ['z0', 'z1', 'z2', 'z3', 'z4'].map((id) => ({ id, total: 24, events: 24 })),
    );
  });

  it('writes a batch with its checkpoint in one statement when the projection can: each message once, two processes or not', async () => {
    /** Counts per aggregate like `projection`, a batch at a time: one upsert gated on the checkpoint's move. */
    const oneStatement = (name: string): Projection =>
      projection(name, {
        async writeBatch(d, items, moved) {
          const byId = new Map<string, { total: number; events: number; seq: number }>();
          for (const { event, seq } of items) {
            const { total } = event.data as { total: number };
            byId.set(event.subject, { total, events: (byId.get(event.subject)?.events ?? 0) + 1, seq });
          }
          const ids = [...byId.keys()];
          const of = <K extends 'total' | 'events' | 'seq'>(k: K) => ids.map((id) => byId.get(id)![k]);
          const { rows: result } = await sql<{ moved: number }>`
            with moved as (${moved}), written as (
              insert into readmodels.counters (projection, id, total, events, last_seq)
              select ${name}, u.id, u.total, u.events, u.last_seq
              from unnest(${ids}::text[], ${of('total')}::int[], ${of('events')}::int[], ${of('seq')}::bigint[])
                as u(id, total, events, last_seq)
              where exists (select from moved)
              on conflict (projection, id) do update
                set total = excluded.total, events = counters.events + excluded.events, last_seq = excluded.last_seq
              returning 1)
            select (select count(*) from moved)::int as moved, (select count(*) from written) as written`.execute(d);
          return result[0]?.moved === 1;
        },
      });
    for (let i = 0; i < 60; i++) await increment(`s${i % 5}`);
    const a = new ProjectionRunner(js, jsm, db, oneStatement('one_statement'), { batchSize: 8 });
    const b = new ProjectionRunner(js, jsm, db, oneStatement('one_statement'), { batchSize: 8 });
    await a.start();
    await b.start(); // replaces a's server consumer; a's statements then find the checkpoint moved and write nothing
    for (let i = 0; i < 60; i++) await increment(`s${i % 5}`);
    const applied = async () =>
      (await rows('one_statement')).filter((r) => r.id.startsWith('s')).reduce((n, r) => n + r.events, 0);
    await waitFor(async () => (await applied()) >= 120, { message: '120 events applied' });
    await Promise.all([a.catchUp(), b.catchUp()]).catch(() => undefined);
    await a.stop();
    const live = (await rows('one_statement')).filter((r) => r.id.startsWith('s'));
    expect(live).toEqual(['s0', 's1', 's2', 's3', 's4'].map((id) => ({ id, total: 24, events: 24 })));
    await b.rebuild();
    await b.catchUp();
    await b.stop();
    expect((await rows('one_statement')).filter((r) => r.id.startsWith('s'))).toEqual(live);
  });

  it('parks a poison message, reports it, and carries on with the rest', async () => {
    await increment('x1', 13);
    await increment('x2', 1);
    const runner = new ProjectionRunner(js, jsm, db, projection('poison'));
    await runner.start();
    await runner.catchUp();
    await runner.stop();
    const parked = await runner.parked();
    expect(parked).toHaveLength(1);
    expect(parked[0]).toMatchObject({ error: 'unlucky increment' });
    expect((await rows('poison')).map((r) => r.id)).toContain('x2');
  });

  it('retries parked messages once their cause is fixed: in stream order, by a rebuild', async () => {
    unlucky = true;
    await increment('q1', 13);
    await increment('q1', 1);
    const runner = new ProjectionRunner(js, jsm, db, projection('retry'));
    await runner.start();
    await runner.catchUp();
    const parked = await runner.parked(); // this stream's earlier increments by 13 too
    expect(parked.map((p) => p.subject)).toContainEqual(expect.stringMatching(/\.q1$/));
    unlucky = false;
    const result = await runner.retryParked();
    await runner.stop();
    expect(result).toMatchObject({ retried: parked.length, stillParked: [], rebuilt: true });
    expect((await rows('retry')).find((r) => r.id.endsWith('q1'))).toEqual(
      expect.objectContaining({ total: 14, events: 2 }),
    );
  });

  it('retries a parked message where it stands when the projection applies events in any order', async () => {
    unlucky = true;
    await increment('o1', 13);
    const runner = new ProjectionRunner(js, jsm, db, projection('in_place', { appliesOutOfOrder: true }));
    await runner.start();
    await runner.catchUp();
    const parked = await runner.parked();
    unlucky = false;
    const [first, second] = await Promise.all([runner.retryParked(), runner.retryParked()]);
    await runner.stop();
    // Two retries at once apply each parked event once: the one that takes it off the parked list applies it.
    expect(first.retried + second.retried).toBe(parked.length);
    expect([first.rebuilt, second.rebuilt]).toEqual([false, false]);
    expect(await runner.parked()).toEqual([]);
    expect((await rows('in_place')).find((r) => r.id.endsWith('o1'))).toEqual(expect.objectContaining({ events: 1 }));
  });

  it('parks nothing when the database fails for its own reasons: it resumes from the checkpoint instead', async () => {
    unlucky = false;
    deadlocks = 2;
    await increment('w1', 7);
    await increment('w1', 1);
    const runner = new ProjectionRunner(js, jsm, db, projection('deadlocks'));
    await runner.start();
    await runner.catchUp(20_000);
    await runner.stop();
    expect(deadlocks).toBe(0);
    expect(await runner.parked()).toEqual([]);
    expect((await rows('deadlocks')).find((r) => r.id.endsWith('w1'))).toEqual(
      expect.objectContaining({ total: 8, events: 2 }),
    );
  });

  it('hands a projection typed for one aggregate only its events, and parks another event on the stream', async () => {
    await increment('t1', 2);
    const foreign = envelope(
      { type: NOTED, data: { note: 'not a counter event' } },
      { source: '/test', tenant: 'acme', subject: 't2', correlationid: 'c', causationid: 'c', time: new Date() },
    );
    const { seq } = await store.record(aggregateSubject(ns, 'calls', 'acme', 't2'), foreign);
    await increment('t1', 3);
    const typed: Projection<any, Incremented> = {
      ...projection('typed'),
      accepts: isIncremented,
      async apply(trx, event, at) {
        // `event.data` is the counter's own type here: no cast.
        const { total } = event.data;
        await trx
          .withSchema('readmodels')
          .insertInto('counters')
          .values({ projection: 'typed', id: event.subject, total, events: 1, last_seq: at })
          .onConflict((oc) =>
            oc.columns(['projection', 'id']).doUpdateSet({ total, events: sql`counters.events + 1`, last_seq: at }),
          )
          .execute();
      },
    };
    const runner = new ProjectionRunner(js, jsm, db, typed);
    await runner.start();
    await runner.catchUp();
    await runner.stop();
    const parked = await runner.parked();
    expect(parked).toEqual([
      expect.objectContaining({
        seq,
        error: expect.stringMatching(/is ormuz\.test\.noted\.v1, which projection typed does not read/),
      }),
    ]);
    const typedRows = await rows('typed');
    expect(typedRows.find((r) => r.id === 't1')).toEqual({ id: 't1', total: 5, events: 2 });
    expect(typedRows.find((r) => r.id === 't2')).toBeUndefined();
  });

  it('applies every event of a message of several in its batch, in order, each with the message sequence and its index', async () => {
    unlucky = false;
    const subject = aggregateSubject(ns, 'calls', 'acme', 'm1');
    const one = await runCommand(store, stream, subject, counter, { type: 'Increment', by: 1 }, ctx('m1'));
    const two = await runCommand(store, stream, subject, counter, { type: 'Increment', by: 2, times: 2 }, ctx('m1'));
    const applied: [number, number, number][] = [];
    const batches: [number, number][][] = [];
    const recording = (name: string, batched: boolean): Projection => ({
      ...projection(name),
      async apply(trx, event, seq, after, index) {
        if (seq >= one.version) applied.push([seq, index, (event.data as { total: number }).total]);
        await projection(name).apply(trx, event, seq, after, index);
      },
      ...(batched
        ? {
            async applyBatch(trx, items, after) {
              batches.push(items.filter((i) => i.seq >= one.version).map((i) => [i.seq, i.index]));
              for (const i of items) await this.apply(trx, i.event, i.seq, after, i.index);
            },
          }
        : {}),
    });
    for (const batched of [false, true]) {
      applied.length = 0;
      const runner = new ProjectionRunner(js, jsm, db, recording(`several_${batched}`, batched), { batchSize: 4 });
      await runner.start();
      await runner.waitFor(two.version);
      await runner.stop();
      expect(applied).toEqual([
        [one.version, 0, 1],
        [two.version, 0, 3],
        [two.version, 1, 5],
      ]);
      expect((await rows(`several_${batched}`)).find((r) => r.id.endsWith('m1'))).toEqual({
        id: 'm1',
        total: 5,
        events: 3,
      });
    }
    // The batched projection was handed both events of the message in the batch that held it.
    expect(batches.flat()).toEqual(
      expect.arrayContaining([
        [two.version, 0],
        [two.version, 1],
      ]),
    );
  });

  it('parks a message of several events whole when one is poison, and applies it whole on retry', async () => {
    unlucky = true;
    const subject = aggregateSubject(ns, 'calls', 'acme', 'm2');
    await runCommand(store, stream, subject, counter, { type: 'Increment', by: 1 }, ctx('m2'));
    const poison = await runCommand(
      store,
      stream,
      subject,
      counter,
      { type: 'Increment', by: 13, times: 2 },
      ctx('m2'),
    );
    const runner = new ProjectionRunner(js, jsm, db, projection('several_parked', { appliesOutOfOrder: true }));
    await runner.start();
    await runner.waitFor(poison.version);
    const parked = (await runner.parked()).filter((p) => p.subject === subject);
    expect(parked.map((p) => p.seq)).toEqual([poison.version]);
    expect((await rows('several_parked')).find((r) => r.id === 'm2')).toEqual({ id: 'm2', total: 1, events: 1 });
    unlucky = false;
    await runner.retryParked();
    await runner.stop();
    expect((await rows('several_parked')).find((r) => r.id === 'm2')).toEqual({ id: 'm2', total: 27, events: 3 });
  });

  it('stops for good when stop() comes while start() is still opening the consumer', async () => {
    const runner = new ProjectionRunner(js, jsm, db, projection('early_stop'));
    const starting = runner.start();
    await runner.stop();
    await starting;
    expect((await runner.status()).running).toBe(false);
  });
});
