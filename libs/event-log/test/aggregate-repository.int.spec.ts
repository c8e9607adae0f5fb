/**
 * The generic aggregate repository on the real NATS: load (snapshot header, fold, foreign events), decide, append
 * with the expected sequence, and a bounded retry on conflict.
 */
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { envelope, type EventDraft, type OrmuzEvent } from '@ormuz/contracts';
import {
  BelowMinimumError,
  counter,
  type CounterCommand,
  type CounterState,
  type Incremented,
  isIncremented,
  LimitReachedError,
  NOTED,
  randomNamespace,
  testEnv,
} from '@ormuz/testing';
import {
  AggregateRepository,
  connectNats,
  EventStore,
  ensureStreams,
  ForeignEventError,
  RetriesExhaustedError,
  SNAPSHOT_HEADER,
  SNAPSHOT_VERSION_HEADER,
  streamName,
  type AggregateType,
  type Decider,
} from '../src/index.js';

const TENANT = 'acme';
const cause = { correlationid: 'corr-1', causationid: 'cause-1' };
const increment = (by: number, limit?: number): CounterCommand => ({ type: 'Increment', by, limit });

type Counters = AggregateRepository<CounterState, CounterCommand, Incremented>;

describe('aggregate repository', () => {
  let nc: NatsConnection;
  let js: JetStreamClient;
  let jsm: JetStreamManager;
  const ns = randomNamespace();
  const stream = streamName(ns, 'calls');
  const counters: AggregateType<CounterState, CounterCommand, Incremented> = {
    context: 'calls',
    decider: { ...counter, isEvent: isIncremented },
  };
  /** A repository over its own store, so its cache is its own (another process, as far as caching goes). */
  const repository = (type: Partial<AggregateType<CounterState, CounterCommand, Incremented>> = {}): Counters =>
    new AggregateRepository(new EventStore(js, jsm), ns, '/test/counter', { ...counters, ...type });
  const total = async (id: string) => (await repository().load(TENANT, id)).state.total;

  beforeAll(async () => {
    nc = await connectNats({ url: testEnv().natsUrl, name: 'aggregate-repository-test' });
    js = jetstream(nc);
    jsm = await jetstreamManager(nc);
    await ensureStreams(jsm, ns, ['calls']);
  });
  afterAll(async () => {
    await jsm.streams.delete(stream);
    await nc.close();
  });

  it('appends what the decider decides, in an envelope, with the state after it in the snapshot header', async () => {
    const counts = repository();
    const first = await counts.execute(TENANT, 'r1', increment(2), cause);
    const second = await counts.execute(TENANT, 'r1', increment(3), cause);
    expect(second).toMatchObject({ state: { total: 5, count: 2 }, version: first.version + 1 });
    expect(second.events).toEqual([
      expect.objectContaining({
        type: 'ormuz.test.incremented.v1',
        data: { by: 3, total: 5 },
        source: '/test/counter',
        tenant: TENANT,
        subject: 'r1',
        ...cause,
      }),
    ]);
    const last = await jsm.direct.getMessage(stream, { last_by_subj: counts.subject(TENANT, 'r1') });
    expect(last?.seq).toBe(second.version);
    expect(last?.header?.get(SNAPSHOT_HEADER)).toBe(JSON.stringify({ total: 5, count: 2 }));
    expect(last?.header?.get(SNAPSHOT_VERSION_HEADER)).toBe('1');
  });

  it('loads fresh from the snapshot on the last message, and reads the whole record', async () => {
    await repository().execute(TENANT, 'r2', increment(1), cause);
    const { version } = await repository().execute(TENANT, 'r2', increment(4), cause);
    expect(await repository().load(TENANT, 'r2')).toEqual({ state: { total: 5, count: 2 }, version });
    const record = await repository().read(TENANT, 'r2');
    expect(record.state).toEqual({ total: 5, count: 2 });
    expect(record.version).toBe(version);
    expect(record.events.map((e) => e.data.by)).toEqual([1, 4]);
    expect((await repository().timeline(TENANT, 'r2')).map((t) => t.seq).at(-1)).toBe(version);
    expect(await repository().recordedAt(TENANT, 'r2', ['ormuz.test.incremented.v1'])).toBe(record.events[1]!.time);
    expect(await repository().recordedAt(TENANT, 'r2', [NOTED])).toBeNull();
  });

  it('folds the events when the snapshot was written under another state version', async () => {
    await repository().execute(TENANT, 'r3', increment(2), cause);
    await repository().execute(TENANT, 'r3', increment(2), cause);
    const v2 = repository({
      decider: { ...counters.decider, stateVersion: 2, evolve: (s, e) => ({ ...s, total: s.total + e.data.by * 10 }) },
    });
    // Only a fold through v2's evolve gives 40: the snapshot (4) was written under version 1.
    expect((await v2.load(TENANT, 'r3')).state.total).toBe(40);
    await v2.execute(TENANT, 'r3', increment(1), cause);
    expect((await v2.load(TENANT, 'r3')).state.total).toBe(50);
  });

  it('decides again against fresh state when another writer appended since its load', async () => {
    const stale = repository();
    await stale.execute(TENANT, 'r4', increment(1), cause);
    await repository().execute(TENANT, 'r4', increment(10), cause);
    // `stale` still holds total 1 in its cache: its first append is refused, the retry sees 11.
    const result = await stale.execute(TENANT, 'r4', increment(1, 12), cause);
    expect(result.state).toEqual({ total: 12, count: 3 });
    expect(result.events.map((e) => e.data)).toEqual([{ by: 1, total: 12 }]);
    await expect(stale.execute(TENANT, 'r4', increment(1, 12), cause)).rejects.toBeInstanceOf(LimitReachedError);
    expect(await total('r4')).toBe(12);
  });

  it('trusts a refusal or a no-op only when decided on the log, not on a cache another replica left behind', async () => {
    // `behind` holds total 1 in its cache; another process takes the total to 11 (a standby taking over a conversation
    // that its leader moved on while the standby's cache still held the start).
    const behind = repository();
    await behind.execute(TENANT, 'r9', increment(1), cause);
    await repository().execute(TENANT, 'r9', increment(10), cause);
    // On the cached total the command would be refused; on the log's it appends.
    const refusedOnCache = await behind.execute(TENANT, 'r9', { ...increment(1), atLeast: 10 }, cause);
    expect(refusedOnCache.state).toEqual({ total: 12, count: 3 });
    await repository().execute(TENANT, 'r9', increment(10), cause);
    // On the cached total (12) the command would do nothing; on the log's (22) it appends.
    const noOpOnCache = await behind.execute(TENANT, 'r9', { ...increment(1), skipBelow: 20 }, cause);
    expect(noOpOnCache.state).toEqual({ total: 23, count: 5 });
    // A refusal or a no-op the log itself gives is still the answer.
    await expect(behind.execute(TENANT, 'r9', { ...increment(1), atLeast: 100 }, cause)).rejects.toBeInstanceOf(
      BelowMinimumError,
    );
    expect((await behind.execute(TENANT, 'r9', { ...increment(1), skipBelow: 100 }, cause)).events).toEqual([]);
    expect(await total('r9')).toBe(23);
  });

  it('decides a known state that gets a refusal again against the log', async () => {
    const first = await repository().execute(TENANT, 'r10', increment(2), cause);
    await repository().execute(TENANT, 'r10', increment(8), cause);
    const known = { state: first.state, version: first.version };
    const result = await repository().execute(TENANT, 'r10', { ...increment(1), atLeast: 10 }, cause, { known });
    expect(result.state).toEqual({ total: 11, count: 3 });
  });

  it('decides a command that assumes a new aggregate again when the aggregate exists', async () => {
    await repository().execute(TENANT, 'r5', increment(3), cause);
    const result = await repository({ assumeNew: () => true }).execute(TENANT, 'r5', increment(1), cause);
    expect(result.state).toEqual({ total: 4, count: 2 });
  });

  it('decides against a known state without loading it, and against fresh state when the known one is stale', async () => {
    const first = await repository().execute(TENANT, 'r8', increment(2), cause);
    /** A store that counts its loads. */
    class Counting extends EventStore {
      loads = 0;
      override load<S, C, E extends EventDraft>(
        stream: string,
        subject: string,
        decider: Decider<S, C, E>,
        opts?: { fresh?: boolean },
      ) {
        this.loads++;
        return super.load(stream, subject, decider, opts);
      }
    }
    const store = new Counting(js, jsm);
    const counts = new AggregateRepository(store, ns, '/test/counter', counters);
    const known = { state: first.state, version: first.version };
    const second = await counts.execute(TENANT, 'r8', increment(3), cause, { known });
    expect(second.state).toEqual({ total: 5, count: 2 });
    expect(store.loads).toBe(0);
    // The same known state is stale now: its append is refused and the command is decided again on the log's state.
    const third = await counts.execute(TENANT, 'r8', increment(1), cause, { known });
    expect(third.state).toEqual({ total: 6, count: 3 });
    expect(store.loads).toBe(1);
    expect(await total('r8')).toBe(6);
  });

  it('gives up after maxAttempts conflicting attempts, appending nothing of its own', async () => {
    const rival = repository();
    await rival.execute(TENANT, 'r6', increment(1), cause);
    /** A store that lets the rival append just before each of its own appends: every attempt conflicts. */
    class Contended extends EventStore {
      attempts = 0;
      override async append(...args: Parameters<EventStore['append']>) {
        this.attempts++;
        await rival.execute(TENANT, 'r6', increment(1), cause);
        return super.append(...args);
      }
    }
    const store = new Contended(js, jsm);
    const contended = new AggregateRepository(store, ns, '/test/counter', { ...counters, maxAttempts: 3 });
    const refused = contended.execute(TENANT, 'r6', increment(100), cause);
    await expect(refused).rejects.toBeInstanceOf(RetriesExhaustedError);
    await expect(refused).rejects.toMatchObject({ attempts: 3, subject: contended.subject(TENANT, 'r6') });
    expect(store.attempts).toBe(3);
    expect(await total('r6')).toBe(4);
  });

  it('refuses an event on the subject that is not the aggregate’s, instead of folding it', async () => {
    const counts = repository();
    await counts.execute(TENANT, 'r7', increment(1), cause);
    const foreign: OrmuzEvent = envelope(
      { type: NOTED, data: { note: 'not a counter event' } },
      { source: '/test', tenant: TENANT, subject: 'r7', ...cause, time: new Date() },
    );
    const { seq } = await new EventStore(js, jsm).record(counts.subject(TENANT, 'r7'), foreign);
    // The last message has no snapshot, so the load folds, and the guard stops the foreign event.
    const refused = repository().load(TENANT, 'r7');
    await expect(refused).rejects.toBeInstanceOf(ForeignEventError);
    await expect(refused).rejects.toMatchObject({ sequence: seq, eventType: NOTED });
    await expect(repository().read(TENANT, 'r7')).rejects.toBeInstanceOf(ForeignEventError);
  });
});
