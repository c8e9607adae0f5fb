import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { aggregateSubject, envelope, SchemaViolationError } from '@ormuz/contracts';
import { counter, INCREMENTED, LimitReachedError, randomNamespace, testEnv } from '@ormuz/testing';
import {
  AppendTimeoutError,
  CLOUDEVENTS_BATCH,
  ConcurrencyConflictError,
  connectNats,
  CONTENT_TYPE_HEADER,
  CorruptEventError,
  decodeEvent,
  decodeEvents,
  EventStore,
  ensureStreams,
  replay,
  runCommand,
  SNAPSHOT_HEADER,
  StreamMissingError,
  streamName,
} from '../src/index.js';

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

  describe('an append sent again after its acknowledgement was lost', () => {
    type Publish = JetStreamClient['publish'];
    const timeout = () => Object.assign(new Error('TimeoutError: timeout'), { name: 'TimeoutError' });
    /** A client on the real server whose n-th publish goes through `steps[n]` (the real publish after the last). */
    function scripted(...steps: Publish[]): JetStreamClient {
      let sent = 0;
      const publish: Publish = (subject, data, opts) => (steps[sent++] ?? js.publish.bind(js))(subject, data, opts);
      return new Proxy(js, { get: (target, key) => (key === 'publish' ? publish : Reflect.get(target, key)) });
    }
    /** Stored, and the acknowledgement lost with the stream's leader. */
    const storedAckLost: Publish = async (subject, data, opts) => {
      await js.publish(subject, data, opts);
      throw timeout();
    };
    /** The new leader checks the expected sequence before the message id (nats-cluster.int met it after a kill -9). */
    const refusedOnSequence: Publish = () =>
      Promise.reject(Object.assign(new Error('wrong last sequence: 1'), { code: 10071 }));

    it('is told stored when the message after its expected sequence is its own, not a conflict to re-decide', async () => {
      const subject = subjectOf('lost1');
      const e = envelope({ type: INCREMENTED, data: { by: 1, total: 1 } }, env('lost1'));
      const client = scripted(storedAckLost, refusedOnSequence);
      const result = await new EventStore(client, jsm).append(subject, [e], 0);
      const stored = await store.history(stream, subject);
      expect(stored.map((s) => s.event.id)).toEqual([e.id]);
      expect(result).toEqual({ sequences: [stored[0]!.seq], version: stored[0]!.seq, duplicate: true });
    });

    it('is still unacknowledged when the stream cannot say which message followed', async () => {
      const subject = subjectOf('lost3');
      const e = envelope({ type: INCREMENTED, data: { by: 1, total: 1 } }, env('lost3'));
      const client = scripted(storedAckLost, refusedOnSequence);
      // The stream's leader is gone again when the append asks what was stored.
      const streams = new Proxy(jsm.streams, {
        get: (target, key) =>
          key === 'getMessage' ? () => Promise.reject(new Error('no responders')) : Reflect.get(target, key),
      });
      const manager = new Proxy(jsm, {
        get: (target, key) => (key === 'streams' ? streams : Reflect.get(target, key)),
      });
      await expect(new EventStore(client, manager).append(subject, [e], 0)).rejects.toBeInstanceOf(AppendTimeoutError);
    });

    it("is a conflict when the message after its expected sequence is another writer's", async () => {
      const subject = subjectOf('lost2');
      const mine = envelope({ type: INCREMENTED, data: { by: 1, total: 1 } }, env('lost2'));
      // Lost on the way while another writer appended; sent again, the server refuses it on its sequence.
      const client = scripted(async () => {
        await store.append(subject, [envelope({ type: INCREMENTED, data: { by: 5, total: 5 } }, env('lost2'))], 0);
        throw timeout();
      });
      await expect(new EventStore(client, jsm).append(subject, [mine], 0)).rejects.toBeInstanceOf(
        ConcurrencyConflictError,
      );
      expect((await store.history(stream, subject)).map((s) => s.event.data)).toEqual([{ by: 5, total: 5 }]);
    });
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

  describe('a decision of several events', () => {
    const increments = (id: string, from: number, n: number) =>
      Array.from({ length: n }, (_, i) =>
        envelope({ type: INCREMENTED, data: { by: 1, total: from + i + 1 } }, env(id)),
      );
    const messagesOn = async (subject: string) =>
      (await jsm.streams.info(stream, { subjects_filter: subject })).state.subjects?.[subject] ?? 0;

    it('is one message with one sequence, in the CloudEvents batch format, with the snapshot after the last', async () => {
      const subject = subjectOf('b1');
      await runCommand(store, stream, subject, counter, { type: 'Increment', by: 1 }, ctx('b1'));
      const r = await runCommand(store, stream, subject, counter, { type: 'Increment', by: 2, times: 2 }, ctx('b1'));
      expect(r.events).toHaveLength(2);
      expect(r.state).toEqual({ total: 5, count: 3 });
      expect(await messagesOn(subject)).toBe(2);
      const last = await jsm.direct.getMessage(stream, { last_by_subj: subject });
      expect(last?.seq).toBe(r.version);
      expect(last?.header?.get(CONTENT_TYPE_HEADER)).toBe(CLOUDEVENTS_BATCH);
      expect(last?.header?.get(SNAPSHOT_HEADER)).toBe(JSON.stringify({ total: 5, count: 3 }));
      expect(JSON.parse(new TextDecoder().decode(last!.data))).toEqual(r.events);
      // A single event stays a single CloudEvent, as every message written before batches was.
      const first = await jsm.direct.getMessage(stream, { seq: 1, next_by_subj: subject });
      expect(first?.header?.get(CONTENT_TYPE_HEADER)).toBe('');
      expect(Array.isArray(JSON.parse(new TextDecoder().decode(first!.data)))).toBe(false);
    });

    it('reports the message sequence for each event, and names the message by the first event', async () => {
      const subject = subjectOf('b2');
      const events = increments('b2', 0, 3);
      const appended = await store.append(subject, events, 0);
      expect(appended).toEqual({
        sequences: [appended.version, appended.version, appended.version],
        version: appended.version,
        duplicate: false,
      });
      // A retried append of the same decision: the server keeps the first message.
      const again = await new EventStore(js, jsm).append(subject, events, 0);
      expect(again).toEqual({ ...appended, duplicate: true });
      expect(await messagesOn(subject)).toBe(1);
    });

    it('is refused whole on a stale expected sequence: none of its events is stored', async () => {
      const subject = subjectOf('b3');
      await store.append(subject, increments('b3', 0, 1), 0);
      await expect(store.append(subject, increments('b3', 1, 2), 0)).rejects.toBeInstanceOf(ConcurrencyConflictError);
      expect(await messagesOn(subject)).toBe(1);
      expect((await store.history(stream, subject)).map((e) => (e.event.data as { total: number }).total)).toEqual([1]);
    });

    it('loads from the snapshot after the message, and folds every event when the snapshot cannot be used', async () => {
      const subject = subjectOf('b4');
      await runCommand(store, stream, subject, counter, { type: 'Increment', by: 3, times: 2 }, ctx('b4'));
      const r = await runCommand(store, stream, subject, counter, { type: 'Increment', by: 1, times: 3 }, ctx('b4'));
      const expected = { state: { total: 9, count: 5 }, version: r.version };
      expect(await new EventStore(js, jsm).load(stream, subject, counter)).toEqual(expected);
      expect(await new EventStore(js, jsm).load(stream, subject, { ...counter, stateVersion: 2 })).toEqual(expected);
    });

    it('reads back as every event with the message sequence and its index, in history and in a replay', async () => {
      const subject = subjectOf('b5');
      const one = await store.append(subject, increments('b5', 0, 1), 0);
      const two = await store.append(subject, increments('b5', 1, 2), one.version);
      const expected = [
        { seq: one.version, index: 0, total: 1 },
        { seq: two.version, index: 0, total: 2 },
        { seq: two.version, index: 1, total: 3 },
      ];
      const history = await store.history(stream, subject);
      expect(
        history.map((e) => ({ seq: e.seq, index: e.index, total: (e.event.data as { total: number }).total })),
      ).toEqual(expected);
      const replayed = [];
      for await (const item of replay(js, { stream, filterSubject: subject })) {
        replayed.push({ seq: item.seq, index: item.index, total: (item.event?.data as { total: number }).total });
      }
      expect(replayed).toEqual(expected);
    });

    it('decodes a message of one event or of a batch, and names what is wrong with a bad one', () => {
      const [a, b] = increments('b6', 0, 2);
      const bytes = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
      expect(decodeEvents('s', 1, bytes(a))).toEqual([a]);
      expect(decodeEvents('s', 1, bytes([a, b]))).toEqual([a, b]);
      expect(decodeEvent('s', 1, bytes(a))).toEqual(a);
      expect(() => decodeEvent('s', 1, bytes([a, b]))).toThrow(CorruptEventError);
      expect(() => decodeEvents('s', 1, bytes([]))).toThrow(/empty batch/);
      expect(() => decodeEvents('s', 1, bytes([a, { ...b, type: 'nope' }]))).toThrow(/event 1 of the batch/);
    });
  });
});
