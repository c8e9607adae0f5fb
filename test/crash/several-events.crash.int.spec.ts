/**
 * A message of several events (one decision) under kill -9. The consumer is killed right after it applied (a
 * projection, inside its transaction) or handled (a reaction) the first event of a two-event message, before the
 * message counted as done; after a restart both events are applied exactly once (the projection equals a rebuild
 * from sequence 1), and the reaction handled both, with exactly one effect each.
 */
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Kysely } from 'kysely';
import { aggregateSubject, contextFilter } from '@ormuz/contracts';
import {
  connectNats,
  EventStore,
  ensureStreams,
  projectionBookkeepingMigration,
  runCommand,
  streamName,
} from '@ormuz/event-log';
import { migrateSchema, openDatabase } from '@ormuz/postgres';
import { counter, createTestDatabase, randomNamespace, testEnv, type TestDatabase } from '@ormuz/testing';
import { crashAt, dumpReadModels, parkedIn, runToHead, type ChildSpec } from './support/crash-trial.js';

const FIXTURE = new URL('./fixtures/counter.mjs', import.meta.url).href;
/**
 * Two-event messages appended, all to one aggregate: a reaction handles one aggregate's messages one at a time, so
 * the first event it handles is the first event of the first message.
 */
const MESSAGES = 6;

describe('a message of several events under kill -9', () => {
  const ns = randomNamespace();
  const stream = streamName(ns, 'calls');
  const effects = `${ns}_crash_effects`;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let live: TestDatabase;
  let fresh: TestDatabase;
  let liveDb: Kysely<any>;
  let freshDb: Kysely<any>;
  /** The stream sequence of each message, in order. */
  const sequences: number[] = [];

  const spec = (databaseUrl: string, kind: 'projection' | 'reaction'): ChildSpec => ({
    natsUrl: testEnv().natsUrl,
    databaseUrl,
    // One message per batch, so a batch commits exactly one decision.
    batchSize: 1,
    consumers: [
      kind === 'projection'
        ? { module: FIXTURE, export: 'counterProjection', args: [stream, contextFilter(ns, 'calls')], kind }
        : {
            module: FIXTURE,
            export: 'counterReaction',
            args: [stream, contextFilter(ns, 'calls'), `${ns}.effects`],
            kind,
          },
    ],
  });
  const checkpoint = async (name: string) =>
    Number(
      (
        await liveDb
          .withSchema('crash')
          .selectFrom('projection_checkpoints')
          .select('seq')
          .where('projection', '=', name)
          .executeTakeFirst()
      )?.seq ?? 0,
    );
  const counters = () =>
    liveDb.withSchema('crash').selectFrom('counters').select(['id', 'total', 'events']).orderBy('id').execute();

  beforeAll(async () => {
    nc = await connectNats({ url: testEnv().natsUrl, name: 'crash-several-test' });
    const js = jetstream(nc);
    jsm = await jetstreamManager(nc);
    await ensureStreams(jsm, ns, ['calls']);
    await jsm.streams.add({ name: effects, subjects: [`${ns}.effects.>`] });
    [live, fresh] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    liveDb = await openDatabase({ url: live.url });
    freshDb = await openDatabase({ url: fresh.url });
    const { counterMigrations } = (await import(FIXTURE)) as { counterMigrations: never };
    for (const db of [liveDb, freshDb]) {
      await migrateSchema(db, 'crash', {
        '001_bookkeeping': projectionBookkeepingMigration,
        '002_counters': counterMigrations,
      });
    }
    const store = new EventStore(js, jsm);
    const id = 'k0';
    for (let i = 0; i < MESSAGES; i++) {
      const r = await runCommand(
        store,
        stream,
        aggregateSubject(ns, 'calls', 'acme', id),
        counter,
        { type: 'Increment', by: 1 + i, times: 2 },
        { source: '/crash', tenant: 'acme', aggregateId: id, correlationid: 'c', causationid: 'c' },
      );
      sequences.push(r.version);
    }
  });
  afterAll(async () => {
    await Promise.all([liveDb?.destroy(), freshDb?.destroy()]);
    await Promise.all([live?.drop(), fresh?.drop()]);
    await jsm?.streams.delete(stream).catch(() => false);
    await jsm?.streams.delete(effects).catch(() => false);
    await nc?.close();
  });

  it('a projection killed between the two events of a message applies both exactly once after a restart', async () => {
    // Killed after the first event of the first message: nothing is committed, not even that event.
    await crashAt(spec(live.url, 'projection'), { point: 'event', after: 1 });
    expect(await checkpoint('crash_counters')).toBe(0);
    expect(await counters()).toEqual([]);
    // Killed after the first event of the third message: the two messages before it are committed whole.
    await crashAt(spec(live.url, 'projection'), { point: 'event', after: 5 });
    expect(await checkpoint('crash_counters')).toBe(sequences[1]);
    expect(await counters()).toEqual([{ id: 'k0', total: 6, events: 4 }]);

    const head = sequences.at(-1)!;
    const target = [{ schema: 'crash', name: 'crash_counters', stream, seq: head }];
    await runToHead(spec(live.url, 'projection'), liveDb, target);
    await runToHead(spec(fresh.url, 'projection'), freshDb, target);
    // Every event once: message i incremented by i twice, 2 × (1 + … + 6) = 42.
    expect(await counters()).toEqual([{ id: 'k0', total: 42, events: 12 }]);
    expect((await dumpReadModels(liveDb, ['crash']))['crash.counters']).toEqual(
      (await dumpReadModels(freshDb, ['crash']))['crash.counters'],
    );
    expect(await parkedIn(liveDb, ['crash'])).toEqual([]);
  }, 120_000);

  it('a reaction killed between the two events of a message handles both after a restart, one effect each', async () => {
    await crashAt(spec(live.url, 'reaction'), { point: 'event', after: 1 });
    expect(await checkpoint('crash_effects')).toBe(0);
    const handled = () =>
      liveDb
        .withSchema('crash')
        .selectFrom('handled')
        .select(['seq', 'idx', 'times'])
        .orderBy('seq')
        .orderBy('idx')
        .execute();
    expect(await handled()).toEqual([{ seq: sequences[0], idx: 0, times: 1 }]);

    await runToHead(spec(live.url, 'reaction'), liveDb, [
      { schema: 'crash', name: 'crash_effects', stream, seq: sequences.at(-1)! },
    ]);
    // The first event was handled again (handlers are idempotent), the second once; every event of every message was.
    const all = await handled();
    expect(all.map((h) => [h.seq, h.idx])).toEqual(
      sequences.flatMap((seq) => [
        [seq, 0],
        [seq, 1],
      ]),
    );
    expect(all[0]).toEqual({ seq: sequences[0], idx: 0, times: 2 });
    expect(all.slice(1).every((h) => h.times === 1)).toBe(true);
    expect((await jsm.streams.info(effects)).state.messages).toBe(MESSAGES * 2);
    expect(await parkedIn(liveDb, ['crash'])).toEqual([]);
  }, 120_000);
});
