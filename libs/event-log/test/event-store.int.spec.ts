import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { aggregateSubject, envelope, SchemaViolationError } from '@ormuz/contracts';
import { randomNamespace, testEnv } from '@ormuz/testing';
import {
  ConcurrencyConflictError,
  connectNats,
  EventStore,
  ensureStreams,
  runCommand,
  SNAPSHOT_HEADER,
  StreamMissingError,
  streamName,
} from '../src/index.js';
import { counter, INCREMENTED, LimitReachedError } from './counter.fixture.js';

describe('event store', () => {
  let nc: NatsConnection;
  let js: JetStreamClient;
  let jsm: JetStreamManager;
  let store: EventStore;
  const ns = randomNamespace();
  const stream = streamName(ns, 'calls');
  const ctx = (id: string) => ({
    source: '/test',
    tenant: 'acme',
    aggregateId: id,
    correlationid: 'c',
    causationid: 'c',
  });
  const env = (id: string) => ({
    source: '/test',
    tenant: 'acme',
    subject: id,
    correlationid: 'c',
    causationid: 'c',
    time: new Date(),
  });
  const subjectOf = (id: string) => aggregateSubject(ns, 'calls', 'acme', id);

  beforeAll(async () => {
    nc = await connectNats({ url: testEnv().natsUrl, name: 'event-store-test' });
    js = jetstream(nc);
    jsm = await jetstreamManager(nc);
    await ensureStreams(jsm, ns, ['calls']);
    store = new EventStore(js, jsm);
  });
  afterAll(async () => {
    await jsm.streams.delete(stream);
    await nc.close();
  });

  it('declares streams idempotently', async () => {
    await ensureStreams(jsm, ns, ['calls']);
    const info = await jsm.streams.info(stream);
    expect(info.config.allow_direct).toBe(true);
    expect(info.config.deny_delete).toBe(true);
  });

  it('appends, then loads the state from the snapshot on the last message', async () => {
    await runCommand(store, stream, subjectOf('a1'), counter, { type: 'Increment', by: 2 }, ctx('a1'));
    const r = await runCommand(store, stream, subjectOf('a1'), counter, { type: 'Increment', by: 3 }, ctx('a1'));
    expect(r.state).toEqual({ total: 5, count: 2 });
    const cold = new EventStore(js, jsm);
    expect(await cold.load(stream, subjectOf('a1'), counter)).toEqual({
      state: { total: 5, count: 2 },
      version: r.version,
    });
    const last = await jsm.direct.getMessage(stream, { last_by_subj: subjectOf('a1') });
    expect(last?.header?.get(SNAPSHOT_HEADER)).toBe(JSON.stringify({ total: 5, count: 2 }));
  });

  it('rebuilds from the events when the snapshot has another state version', async () => {
    await runCommand(store, stream, subjectOf('a2'), counter, { type: 'Increment', by: 1 }, ctx('a2'));
    await runCommand(store, stream, subjectOf('a2'), counter, { type: 'Increment', by: 4 }, ctx('a2'));
    const v2 = { ...counter, stateVersion: 2 };
    const loaded = await new EventStore(js, jsm).load(stream, subjectOf('a2'), v2);
    expect(loaded.state).toEqual({ total: 5, count: 2 });
  });

  it('refuses an append on a stale expected sequence with a concurrency conflict', async () => {
    const subject = subjectOf('a3');
    const e = envelope({ type: INCREMENTED, data: { by: 1, total: 1 } }, env('a3'));
    await store.append(subject, [e], 0);
    const e2 = envelope({ type: INCREMENTED, data: { by: 1, total: 2 } }, env('a3'));
    await expect(store.append(subject, [e2], 0)).rejects.toBeInstanceOf(ConcurrencyConflictError);
  });

  it('records a fact without an expected sequence, once per event id, and validates it', async () => {
    const subject = subjectOf('f1');
    await store.append(subject, [envelope({ type: INCREMENTED, data: { by: 1, total: 1 } }, env('f1'))], 0);
    const fact = envelope({ type: INCREMENTED, data: { by: 2, total: 3 } }, env('f1'));
    const first = await store.record(subject, fact);
    expect(first.duplicate).toBe(false);
    expect(await store.record(subject, fact)).toEqual({ seq: first.seq, duplicate: true });
    const stored = [];
    for await (const item of store.readSubject(stream, subject)) stored.push(item.event.data);
    expect(stored).toEqual([
      { by: 1, total: 1 },
      { by: 2, total: 3 },
    ]);
    const invalid = envelope({ type: INCREMENTED, data: { by: 'two' } }, env('f1'));
    await expect(store.record(subject, invalid)).rejects.toBeInstanceOf(SchemaViolationError);
    await expect(store.record(aggregateSubject(`${ns}x`, 'calls', 'acme', 'f1'), fact)).rejects.toBeInstanceOf(
      StreamMissingError,
    );
  });

  it('treats a republished event id as a duplicate, storing it once', async () => {
    const subject = subjectOf('a4');
    const e = envelope({ type: INCREMENTED, data: { by: 1, total: 1 } }, env('a4'));
    const first = await store.append(subject, [e], 0);
    const again = await js.publish(subject, JSON.stringify(e), { msgID: e.id });
    expect(again.duplicate).toBe(true);
    expect(again.seq).toBe(first.version);
  });

  it('retries on conflict: concurrent writers all land, none is lost', async () => {
    const subject = subjectOf('a5');
    const writers = Array.from({ length: 8 }, () => new EventStore(js, jsm));
    await Promise.all(
      writers.map((w) =>
        runCommand(w, stream, subject, counter, { type: 'Increment', by: 1 }, ctx('a5'), { maxAttempts: 20 }),
      ),
    );
    const loaded = await new EventStore(js, jsm).load(stream, subject, counter);
    expect(loaded.state).toEqual({ total: 8, count: 8 });
  });

  it('re-decides after a conflict, so a rule checked against stale state still holds', async () => {
    const subject = subjectOf('a6');
    const stale = new EventStore(js, jsm);
    await stale.load(stream, subject, counter);
    await runCommand(store, stream, subject, counter, { type: 'Increment', by: 5 }, ctx('a6'));
    await expect(
      runCommand(stale, stream, subject, counter, { type: 'Increment', by: 1, limit: 5 }, ctx('a6')),
    ).rejects.toBeInstanceOf(LimitReachedError);
  });

  it('refuses event data that fails its schema and publishes nothing', async () => {
    const subject = subjectOf('a7');
    const bad = envelope({ type: INCREMENTED, data: { by: 0, total: 1 } }, env('a7'));
    await expect(store.append(subject, [bad], 0)).rejects.toBeInstanceOf(SchemaViolationError);
    expect(await jsm.direct.getMessage(stream, { last_by_subj: subject }).catch(() => null)).toBeNull();
  });

  it('names the missing stream when nothing holds the subject', async () => {
    const other = randomNamespace();
    const e = envelope({ type: INCREMENTED, data: { by: 1, total: 1 } }, env('a8'));
    await expect(store.append(aggregateSubject(other, 'calls', 'acme', 'a8'), [e], 0)).rejects.toBeInstanceOf(
      StreamMissingError,
    );
  });

  it('reads every event of one subject without a consumer', async () => {
    const subject = subjectOf('a9');
    for (let i = 0; i < 3; i++)
      await runCommand(store, stream, subject, counter, { type: 'Increment', by: 1 }, ctx('a9'));
    const totals: number[] = [];
    for await (const { event } of store.readSubject(stream, subject))
      totals.push((event.data as { total: number }).total);
    expect(totals).toEqual([1, 2, 3]);
  });
});
