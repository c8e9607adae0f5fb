import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { sql, type Kysely } from 'kysely';
import { aggregateSubject, contextFilter, type OrmuzEvent } from '@ormuz/contracts';
import { migrateSchema, openDatabase } from '@ormuz/postgres';
import { createTestDatabase, randomNamespace, testEnv, waitFor, type TestDatabase } from '@ormuz/testing';
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
import { counter } from './counter.fixture.js';

describe('projection runner', () => {
  let nc: NatsConnection;
  let js: JetStreamClient;
  let jsm: JetStreamManager;
  let store: EventStore;
  let database: TestDatabase;
  let db: Kysely<any>;
  const ns = randomNamespace();
  const stream = streamName(ns, 'calls');
  const ctx = (id: string) => ({ source: '/test', tenant: 'acme', aggregateId: id, correlationid: 'c', causationid: 'c' });
  const increment = (id: string, by = 1) =>
    runCommand(store, stream, aggregateSubject(ns, 'calls', 'acme', id), counter, { type: 'Increment', by }, ctx(id));

  /** Counts per aggregate; an increment by 13 is poison and makes apply throw. */
  const projection = (name: string): Projection => ({
    name,
    schema: 'readmodels',
    stream,
    filterSubject: contextFilter(ns, 'calls'),
    async apply(trx, event: OrmuzEvent, seq) {
      const { by, total } = event.data as { by: number; total: number };
      if (by === 13) throw new Error('unlucky increment');
      await trx
        .withSchema('readmodels')
        .insertInto('counters')
        .values({ projection: name, id: event.subject, total, events: 1, last_seq: seq })
        .onConflict((oc) =>
          oc.columns(['projection', 'id']).doUpdateSet({ total, events: sql`counters.events + 1`, last_seq: seq }),
        )
        .execute();
    },
    async reset(trx) {
      await trx.withSchema('readmodels').deleteFrom('counters').where('projection', '=', name).execute();
    },
  });

  const rows = (name: string) =>
    db.withSchema('readmodels').selectFrom('counters').select(['id', 'total', 'events']).where('projection', '=', name).orderBy('id').execute();

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
      '002_counters': {
        async up(d) {
          await d.schema
            .createTable('counters')
            .addColumn('projection', 'text', (c) => c.notNull())
            .addColumn('id', 'text', (c) => c.notNull())
            .addColumn('total', 'integer', (c) => c.notNull())
            .addColumn('events', 'integer', (c) => c.notNull())
            .addColumn('last_seq', 'bigint', (c) => c.notNull())
            .addPrimaryKeyConstraint('counters_pk', ['projection', 'id'])
            .execute();
        },
      },
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
    await jsm.consumers.add(stream, { durable_name: 'died', ack_policy: 'all' as never, filter_subject: filter, ack_wait: 60_000_000_000 });
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
    expect((await rows('died')).filter((r) => r.id.startsWith('d'))).toEqual(['d0', 'd1', 'd2'].map((id) => ({ id, total: 4, events: 4 })));
  });

  it('applies each message once when two processes run the same projection at once', async () => {
    for (let i = 0; i < 60; i++) await increment(`z${i % 5}`);
    const a = new ProjectionRunner(js, jsm, db, projection('zombie'), { batchSize: 8 });
    const b = new ProjectionRunner(js, jsm, db, projection('zombie'), { batchSize: 8 });
    await a.start();
    await b.start(); // replaces a's server consumer; a's batches then find the checkpoint moved
    for (let i = 0; i < 60; i++) await increment(`z${i % 5}`);
    await waitFor(async () => (await rows('zombie')).filter((r) => r.id.startsWith('z')).reduce((n, r) => n + r.events, 0) >= 120, { message: '120 events applied' });
    await Promise.all([a.catchUp(), b.catchUp()]).catch(() => undefined);
    await a.stop();
    await b.stop();
    expect((await rows('zombie')).filter((r) => r.id.startsWith('z'))).toEqual(['z0', 'z1', 'z2', 'z3', 'z4'].map((id) => ({ id, total: 24, events: 24 })));
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
});
