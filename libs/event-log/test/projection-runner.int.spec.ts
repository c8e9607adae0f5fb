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

  /** Counts per aggregate; an event whose total is 13 is poison and makes apply throw. */
  const projection = (name: string): Projection => ({
    name,
    schema: 'readmodels',
    stream,
    filterSubject: contextFilter(ns, 'calls'),
    async apply(trx, event: OrmuzEvent, seq) {
      const { total } = event.data as { total: number };
      if (total === 13) throw new Error('unlucky total');
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

  it('skips a message delivered again at or below the checkpoint', async () => {
    await increment('r1');
    await increment('r1');
    const runner = new ProjectionRunner(js, jsm, db, projection('redelivery'));
    await runner.start();
    await runner.catchUp();
    await runner.stop();
    // Lose the consumer's position but keep the checkpoint: the server redelivers everything from sequence 1.
    await jsm.consumers.delete(stream, 'redelivery');
    await jsm.consumers.add(stream, {
      durable_name: 'redelivery',
      ack_policy: 'all' as never,
      filter_subject: contextFilter(ns, 'calls'),
    });
    const again = new ProjectionRunner(js, jsm, db, projection('redelivery'));
    await again.start();
    const info = await jsm.streams.info(stream);
    await waitFor(async () => {
      const c = await jsm.consumers.info(stream, 'redelivery');
      return c.delivered.stream_seq === info.state.last_seq && c.num_ack_pending === 0;
    });
    await again.stop();
    const r1 = (await rows('redelivery')).find((r) => r.id === 'r1');
    expect(r1).toEqual({ id: 'r1', total: 2, events: 2 });
  });

  it('parks a poison message, reports it, and carries on with the rest', async () => {
    await increment('x1', 13);
    await increment('x2', 1);
    const runner = new ProjectionRunner(js, jsm, db, projection('poison'));
    await runner.start();
    await runner.catchUp();
    await runner.stop();
    expect(runner.parkedCount).toBe(1);
    const parked = await db.withSchema('readmodels').selectFrom('parked_messages').selectAll().where('projection', '=', 'poison').execute();
    expect(parked).toHaveLength(1);
    expect(parked[0]).toMatchObject({ error: 'unlucky total' });
    expect((await rows('poison')).map((r) => r.id)).toContain('x2');
  });
});
