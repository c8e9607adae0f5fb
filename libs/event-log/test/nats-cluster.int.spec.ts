/**
 * The log on a three-node JetStream cluster with its streams at replicas 3: appends, reads and expected-sequence
 * conflicts, and a projection that keeps consuming through the kill -9 of the stream's leader and its return, then
 * equals a rebuild. Every stream is checked for the expected-sequence race of nats-server < 2.9.21 at the end.
 */
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Kysely } from 'kysely';
import { aggregateSubject, contextFilter, envelope } from '@ormuz/contracts';
import { migrateSchema, openDatabase } from '@ormuz/postgres';
import {
  counter,
  countersTableMigration,
  countIncrement,
  type CountersDB,
  createTestDatabase,
  INCREMENTED,
  randomNamespace,
  resetCounters,
  startNatsCluster,
  waitFor,
  type NatsClusterHandle,
  type TestDatabase,
} from '@ormuz/testing';
import {
  checkStreamSequences,
  ConcurrencyConflictError,
  connectNats,
  describeAnomaly,
  ensureStreams,
  EventStore,
  projectionBookkeepingMigration,
  ProjectionRunner,
  runCommand,
  streamName,
  type Projection,
} from '../src/index.js';

describe('the log on a three-node NATS cluster, streams at replicas 3', () => {
  let cluster: NatsClusterHandle;
  let nc: NatsConnection;
  let js: JetStreamClient;
  let jsm: JetStreamManager;
  let store: EventStore;
  let database: TestDatabase;
  let db: Kysely<CountersDB>;
  const runners: ProjectionRunner[] = [];
  const ns = randomNamespace();
  const stream = streamName(ns, 'calls');
  const subject = (id: string) => aggregateSubject(ns, 'calls', 'acme', id);
  const ctx = (id: string) => ({
    source: '/test',
    tenant: 'acme',
    aggregateId: id,
    correlationid: 'c',
    causationid: 'c',
  });
  const increment = (id: string, on = store) =>
    runCommand(on, stream, subject(id), counter, { type: 'Increment', by: 1 }, ctx(id));

  const projection = (name: string): Projection => ({
    name,
    schema: 'readmodels',
    stream,
    filterSubject: contextFilter(ns, 'calls'),
    apply: (trx, event, seq) => countIncrement(trx, 'readmodels', name, event, seq),
    reset: (trx) => resetCounters(trx, 'readmodels', name),
  });
  const rows = (name: string) =>
    db
      .withSchema('readmodels')
      .selectFrom('counters')
      .select(['id', 'total', 'events', 'last_seq'])
      .where('projection', '=', name)
      .orderBy('id')
      .execute();

  beforeAll(async () => {
    cluster = await startNatsCluster({ nodes: 3 });
    nc = await connectNats({ url: cluster.url, name: 'cluster-test' });
    js = jetstream(nc);
    jsm = await jetstreamManager(nc);
    await ensureStreams(jsm, ns, ['calls'], { replicas: 3 });
    store = new EventStore(js, jsm);
    database = await createTestDatabase();
    db = await openDatabase({ url: database.url });
    await migrateSchema(db, 'readmodels', {
      '001_bookkeeping': projectionBookkeepingMigration,
      '002_counters': countersTableMigration,
    });
  });
  afterAll(async () => {
    for (const runner of runners) await runner.stop();
    await db?.destroy();
    await database?.drop();
    await nc?.close();
    await cluster?.stop();
  });

  it('keeps each stream on all three servers, and appends, loads and refuses stale appends as on one', async () => {
    const info = await jsm.streams.info(stream);
    expect(info.config.num_replicas).toBe(3);
    expect([info.cluster?.leader, ...(info.cluster?.replicas ?? []).map((r) => r.name)].sort()).toEqual([
      'n1',
      'n2',
      'n3',
    ]);

    for (let i = 0; i < 3; i++) await increment('c1');
    expect(await store.load(stream, subject('c1'), counter, { fresh: true })).toMatchObject({
      state: { total: 3, count: 3 },
    });
    expect((await store.history(stream, subject('c1'))).map((e) => (e.event.data as { total: number }).total)).toEqual([
      1, 2, 3,
    ]);

    // Two writers decide from the same state at once, through different servers: one wins, the other is told it lost
    // and appends after it on reloading.
    const other = await connectNats({ url: cluster.nodes[2]!.url, name: 'cluster-test-other' });
    try {
      const otherStore = new EventStore(jetstream(other), await jetstreamManager(other));
      await Promise.all([increment('c2'), increment('c2', otherStore)]);
      expect((await store.load(stream, subject('c2'), counter, { fresh: true })).state.total).toBe(2);
      // An append on a version the subject has moved past is refused, whichever server receives it.
      const stale = envelope(
        { type: INCREMENTED, data: { by: 1, total: 2 } },
        { ...ctx('c2'), subject: 'c2', time: new Date() },
      );
      await expect(otherStore.append(subject('c2'), [stale], 1)).rejects.toThrow(ConcurrencyConflictError);
    } finally {
      await other.close();
    }
    expect((await store.history(stream, subject('c2'))).length).toBe(2);
  });

  it('projects through the kill -9 of the stream leader and its return, equal to a rebuild, no ack lost', async () => {
    const live = new ProjectionRunner(js, jsm, db, projection('live'), { batchSize: 32 });
    runners.push(live);
    await live.start();
    const ids = ['k1', 'k2', 'k3', 'k4'];
    const acked: { id: string; seq: number }[] = [];
    // No append may fail: one that meets the leaderless stream waits for the new leader (EventStore.append).
    const failures: string[] = [];
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        const id = ids[i % ids.length]!;
        try {
          const result = await increment(id);
          acked.push({ id, seq: result.version });
        } catch (err) {
          failures.push(String(err));
        }
      }
    })();
    const ackedBy = (n: number, message: string) => waitFor(() => acked.length >= n, { message, timeoutMs: 60_000 });

    await ackedBy(50, 'appends before the kill');
    const leader = (await jsm.streams.info(stream)).cluster!.leader!;
    await cluster.node(leader).kill();
    const atKill = acked.length;
    await ackedBy(atKill + 50, 'appends after the leader was killed');
    const newLeader = (await jsm.streams.info(stream)).cluster!.leader!;
    expect(newLeader).not.toBe(leader);

    await cluster.node(leader).restart();
    const atReturn = acked.length;
    await ackedBy(atReturn + 50, 'appends after the old leader returned');
    writing = false;
    await writer;
    await waitFor(async () => ((await jsm.streams.info(stream)).cluster?.replicas ?? []).every((r) => r.current), {
      message: 'the returned server to catch up',
      timeoutMs: 30_000,
    });

    // Every acknowledged append is on the log, on its subject, at its sequence.
    for (const id of ids) {
      const seqs = new Set((await store.history(stream, subject(id))).map((e) => e.seq));
      expect(acked.filter((a) => a.id === id && !seqs.has(a.seq))).toEqual([]);
    }
    await live.catchUp(60_000);
    const rebuilt = new ProjectionRunner(js, jsm, db, projection('rebuilt'), { batchSize: 32 });
    runners.push(rebuilt);
    await rebuilt.start();
    await rebuilt.catchUp(60_000);
    const strip = (r: { id: string; total: number; events: number; last_seq: number }[]) =>
      r.map(({ id, total, events, last_seq }) => ({ id, total, events, last_seq: Number(last_seq) }));
    const liveRows = strip(await rows('live'));
    expect(liveRows).toEqual(strip(await rows('rebuilt')));
    expect(failures).toEqual([]);
    expect(liveRows.filter((r) => ids.includes(r.id)).map((r) => [r.id, r.events])).toEqual(
      ids.map((id) => [id, acked.filter((a) => a.id === id).length]),
    );

    const anomalies = await checkStreamSequences(js, stream);
    expect(anomalies.map(describeAnomaly)).toEqual([]);
  });
});
