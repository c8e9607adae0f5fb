/**
 * The consumption core under kill -9: a projection and a reaction run in a child process under a steady load and are
 * killed at random points (from outside, and at each step inside: received, event, applied, committed,
 * acknowledged), then restarted. Afterwards the projection equals a rebuild from sequence 1, and the reaction produced exactly one effect
 * per event and handled every event at least once.
 */
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
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
import {
  crashRepeatedly,
  dumpReadModels,
  parkedIn,
  runToHead,
  steadyLoad,
  type ChildSpec,
} from './support/crash-trial.js';

const FIXTURE = new URL('./fixtures/counter.mjs', import.meta.url).href;
const KILLS = 24;

describe('log consumers under kill -9', () => {
  const ns = randomNamespace();
  const stream = streamName(ns, 'calls');
  const effects = `${ns}_crash_effects`;
  let nc: NatsConnection;
  let js: JetStreamClient;
  let jsm: JetStreamManager;
  let store: EventStore;
  let live: TestDatabase;
  let fresh: TestDatabase;
  let liveDb: Kysely<any>;
  let freshDb: Kysely<any>;

  beforeAll(async () => {
    nc = await connectNats({ url: testEnv().natsUrl, name: 'crash-test' });
    js = jetstream(nc);
    jsm = await jetstreamManager(nc);
    await ensureStreams(jsm, ns, ['calls']);
    await jsm.streams.add({ name: effects, subjects: [`${ns}.effects.>`] });
    store = new EventStore(js, jsm);
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
  });
  afterAll(async () => {
    await Promise.all([liveDb.destroy(), freshDb.destroy()]);
    await Promise.all([live.drop(), fresh.drop()]);
    await jsm.streams.delete(stream);
    await jsm.streams.delete(effects);
    await nc.close();
  });

  it(`applies every event exactly once, in order, across ${KILLS} kills`, async () => {
    const spec = (databaseUrl: string, withReaction: boolean): ChildSpec => ({
      natsUrl: testEnv().natsUrl,
      databaseUrl,
      batchSize: 8,
      consumers: [
        {
          module: FIXTURE,
          export: 'counterProjection',
          args: [stream, contextFilter(ns, 'calls')],
          kind: 'projection',
        },
        ...(withReaction
          ? [
              {
                module: FIXTURE,
                export: 'counterReaction',
                args: [stream, contextFilter(ns, 'calls'), `${ns}.effects`],
                kind: 'reaction' as const,
              },
            ]
          : []),
      ],
    });
    const ctx = (id: string) => ({
      source: '/crash',
      tenant: 'acme',
      aggregateId: id,
      correlationid: 'c',
      causationid: 'c',
    });
    const load = steadyLoad(200, async (i) => {
      const id = `k${i % 37}`;
      await runCommand(
        store,
        stream,
        aggregateSubject(ns, 'calls', 'acme', id),
        counter,
        { type: 'Increment', by: 1 + (i % 3) },
        ctx(id),
      );
    });

    const report = await crashRepeatedly(spec(live.url, true), KILLS);
    const { steps, errors } = await load.stop();
    expect(errors).toEqual([]);
    const head = (await jsm.streams.info(stream)).state.last_seq;
    expect(head).toBe(steps);

    const checkpoint = (name: string) => ({ schema: 'crash', name, stream, seq: head });
    await runToHead(spec(live.url, true), liveDb, [checkpoint('crash_counters'), checkpoint('crash_effects')]);
    await runToHead(spec(fresh.url, false), freshDb, [checkpoint('crash_counters')]);

    // The projection: exactly the rebuild, and nothing parked.
    const rebuilt = await dumpReadModels(freshDb, ['crash']);
    const built = await dumpReadModels(liveDb, ['crash']);
    expect(built['crash.counters']).toEqual(rebuilt['crash.counters']);
    expect(await parkedIn(liveDb, ['crash'])).toEqual([]);

    // The reaction: every event handled at least once, and exactly one effect per event.
    const handled = await liveDb.withSchema('crash').selectFrom('handled').select('seq').execute();
    expect(handled).toHaveLength(head);
    const effectsInfo = await jsm.streams.info(effects);
    expect(effectsInfo.state.messages).toBe(head);

    // Every kind of kill happened.
    expect(Object.values(report.kills).reduce((a, b) => a + b, 0)).toBe(KILLS);
    expect(Object.keys(report.kills).length).toBeGreaterThanOrEqual(3);
  }, 300_000);
});
