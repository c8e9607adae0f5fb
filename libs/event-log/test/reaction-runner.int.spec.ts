import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Kysely } from 'kysely';
import { aggregateSubject, contextFilter, envelope, type OrmuzEvent } from '@ormuz/contracts';
import { migrateSchema, openDatabase } from '@ormuz/postgres';
import {
  counter,
  createTestDatabase,
  type Incremented,
  isIncremented,
  NOTED,
  randomNamespace,
  type TestDatabase,
  testEnv,
  waitFor,
} from '@ormuz/testing';
import {
  connectNats,
  EventStore,
  ensureStreams,
  projectionBookkeepingMigration,
  ReactionRunner,
  runCommand,
  streamName,
  type Reaction,
} from '../src/index.js';

describe('reaction runner', () => {
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
  const reaction = (name: string, handle: Reaction['handle']): Reaction => ({
    name,
    schema: 'reactions',
    stream,
    filterSubject: contextFilter(ns, 'calls'),
    handle,
  });
  const head = async () => (await jsm.streams.info(stream)).state.last_seq;

  beforeAll(async () => {
    nc = await connectNats({ url: testEnv().natsUrl, name: 'reaction-test' });
    js = jetstream(nc);
    jsm = await jetstreamManager(nc);
    await ensureStreams(jsm, ns, ['calls']);
    store = new EventStore(js, jsm);
    database = await createTestDatabase();
    db = await openDatabase({ url: database.url });
    await migrateSchema(db, 'reactions', { '001_bookkeeping': projectionBookkeepingMigration });
  });
  afterAll(async () => {
    await db.destroy();
    await database.drop();
    await jsm.streams.delete(stream);
    await nc.close();
  });

  it('handles every event, one aggregate in stream order, and moves the checkpoint over what is finished', async () => {
    for (let i = 0; i < 30; i++) await increment(`a${i % 3}`);
    const seen = new Map<string, number[]>();
    const runner = new ReactionRunner(
      js,
      jsm,
      db,
      reaction('ordered', async (event: OrmuzEvent) => {
        const totals = seen.get(event.subject) ?? [];
        totals.push((event.data as { total: number }).total);
        seen.set(event.subject, totals);
      }),
      { batchSize: 4, window: 8 },
    );
    await runner.start();
    await runner.waitFor(await head());
    await runner.stop();
    for (const id of ['a0', 'a1', 'a2']) expect(seen.get(id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('retries a failing event with backoff, parks it after its attempts, and handles it on retry once fixed', async () => {
    await increment('b1', 13);
    let broken = true;
    const attempts: number[] = [];
    const runner = new ReactionRunner(
      js,
      jsm,
      db,
      reaction('parking', async (event, delivery) => {
        if ((event.data as { by: number }).by !== 13) return;
        attempts.push(delivery.attempt);
        if (broken) throw new Error('downstream refused');
      }),
      { maxAttempts: 3, retryDelayMs: 5 },
    );
    await runner.start();
    await runner.waitFor(await head());
    expect(attempts).toEqual([1, 2, 3]);
    const status = await runner.status();
    expect(status).toMatchObject({ kind: 'reaction', parked: 1, oldest_parked: { error: 'downstream refused' } });
    broken = false;
    expect(await runner.retryParked()).toMatchObject({ retried: 1, stillParked: [], rebuilt: false });
    expect((await runner.status()).parked).toBe(0);
    await runner.stop();
  });

  it("handles a message's events in order, and retries a failing one alone before the message counts as done", async () => {
    const subject = aggregateSubject(ns, 'calls', 'acme', 'm1');
    const r = await runCommand(store, stream, subject, counter, { type: 'Increment', by: 1, times: 3 }, ctx('m1'));
    const calls: string[] = [];
    let failures = 1;
    const runner = new ReactionRunner(
      js,
      jsm,
      db,
      reaction('several', async (event, delivery) => {
        if (event.subject !== 'm1') return;
        calls.push(`${delivery.seq}/${delivery.index}#${delivery.attempt}`);
        if (delivery.index === 1 && failures-- > 0) throw new Error('not yet');
      }),
      { retryDelayMs: 5 },
    );
    await runner.start();
    await runner.waitFor(r.version);
    await runner.stop();
    const seq = r.version;
    expect(calls).toEqual([`${seq}/0#1`, `${seq}/1#1`, `${seq}/1#2`, `${seq}/2#1`]);
  });

  it('hands a reaction typed for one aggregate only its events, and parks another event at once', async () => {
    await increment('t1', 2);
    const foreign = envelope(
      { type: NOTED, data: { note: 'not a counter event' } },
      { source: '/test', tenant: 'acme', subject: 't2', correlationid: 'c', causationid: 'c', time: new Date() },
    );
    const { seq } = await store.record(aggregateSubject(ns, 'calls', 'acme', 't2'), foreign);
    await increment('t1', 3);
    const totals: number[] = [];
    const typed: Reaction<Incremented> = {
      ...reaction('typed', async () => undefined),
      accepts: isIncremented,
      // `event.data` is the counter's own type here: no cast.
      handle: async (event) => {
        if (event.subject === 't1') totals.push(event.data.total);
      },
    };
    const runner = new ReactionRunner(js, jsm, db, typed, { maxAttempts: 3, retryDelayMs: 5 });
    await runner.start();
    await runner.waitFor(await head());
    await runner.stop();
    expect(totals).toEqual([2, 5]);
    expect(await runner.parked()).toEqual([
      expect.objectContaining({
        seq,
        error: expect.stringMatching(/is ormuz\.test\.noted\.v1, which reaction typed does not read/),
      }),
    ]);
  });

  it('stops while a failing event holds the whole window', async () => {
    for (let i = 0; i < 12; i++) await increment('c1');
    let calls = 0;
    const runner = new ReactionRunner(
      js,
      jsm,
      db,
      reaction('stuck', async (event) => {
        if (!event.subject.endsWith('c1')) return;
        calls++;
        throw new Error('still down');
      }),
      { batchSize: 2, window: 4, retryDelayMs: 60_000 },
    );
    await runner.start();
    await waitFor(() => calls > 0, { message: 'the first attempt' });
    await runner.stop(); // resolves although every slot is taken and the stuck handler waits a minute to retry
    expect((await runner.status()).running).toBe(false);
    expect(await runner.parked()).toEqual([]);
  });
});
