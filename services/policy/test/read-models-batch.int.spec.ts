/**
 * Policy's read models write a batch at a time (`writeBatch`: one statement with the checkpoint's move, after at most
 * one read for device screens). The rows must be what `apply`, one event at a time, leaves: the same log is projected
 * both ways, with batches of every size, into databases of their own, and the tables compared row for row. The log
 * holds every lifecycle the decider allows, observations of one and of two pages, screen actions that start after an
 * observation, and messages of several events (a request with its decision, a start with its outcome).
 */
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Kysely } from 'kysely';
import type { JsonValue } from '@ormuz/contracts';
import {
  connectNats,
  ensureStreams,
  EventStore,
  ProjectionRunner,
  streamName,
  type Projection,
} from '@ormuz/event-log';
import { migrateSchema, openDatabase } from '@ormuz/postgres';
import { callLifecycles, createTestDatabase, randomNamespace, testEnv } from '@ormuz/testing';
import type { LifecyclePath, LifecyclePlan, TestDatabase } from '@ormuz/testing';
import { POLICY_SCHEMA, policyMigrations } from '../src/index.js';
import { callStatusProjection } from '../src/projections/call-status.projection.js';
import { deviceScreensProjection } from '../src/projections/device-screens.projection.js';

const CALLS = 90;
/** The policy tables, read whole to compare them. */
type Tables = Record<string, Record<string, unknown>>;
const TOOLS = ['device.screen_observe', 'device.tap', 'device.screen_observe', 'ormuz.note', 'device.swipe'];

describe('policy read models: a batch written at once equals its events applied one by one', () => {
  const ns = randomNamespace();
  const tenant = 'acme';
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let store: EventStore;
  const databases: TestDatabase[] = [];
  const handles: Kysely<Tables>[] = [];

  beforeAll(async () => {
    nc = await connectNats({ url: testEnv().natsUrl, name: 'policy-read-models-batch-test' });
    jsm = await jetstreamManager(nc);
    await ensureStreams(jsm, ns, ['calls']);
    store = new EventStore(jetstream(nc), jsm);
    const lifecycle = callLifecycles({ store, ns, tenant, source: '/test' }, plan);
    for (let i = 0; i < CALLS; i++) await lifecycle(i);
  });
  afterAll(async () => {
    await Promise.all(handles.map((h) => h.destroy()));
    await Promise.all(databases.map((d) => d.drop()));
    await jsm?.streams.delete(streamName(ns, 'calls')).catch(() => false);
    await nc?.close();
  });

  const observation = (i: number, page: number): JsonValue => ({
    foreground_package: `com.example.app${i % 2}`,
    screen: 'compose',
    elements: [{ ref: `e${page}`, role: 'button', text: `Button ${i}.${page}`, clickable: true, depth: 0 }],
    total_elements: 2,
    partial: page === 1,
  });

  /** The paths calls take, five calls (one of each tool) at a time. */
  const PATHS: LifecyclePath[] = ['refused', 'approved', 'sealed', 'finishedAtOnce', 'lost', 'finished'];

  /** Call `i`: one of the lifecycles, as policy, approvals and the bridge record it. */
  function plan(i: number): LifecyclePlan {
    const tool = TOOLS[i % TOOLS.length]!;
    // Every third observation reads the second page of the screen before it.
    const secondPage = tool === 'device.screen_observe' && i % 3 === 0;
    const path = PATHS[Math.floor(i / TOOLS.length) % PATHS.length]!;
    const result = tool === 'device.screen_observe' ? observation(i, secondPage ? 2 : 1) : { done: true };
    return {
      tool,
      args: secondPage ? { continuation: 'page-2' } : { n: i },
      device: tool.startsWith('device.') ? { device_id: `phone-${i % 3}` } : null,
      agentId: 'agent-1',
      path,
      together: i % 2 === 0, // the request and its decision in one message, or in two
      outcome:
        path !== 'finishedAtOnce' && i % 4 === 1
          ? { kind: 'failed', error: { code: 'not_found', message: 'No such element.' } }
          : { kind: 'succeeded', result },
    };
  }

  /** Projects the whole log into a database of its own, `batchSize` messages at a time; returns its tables. */
  async function project(make: (ns: string) => Projection, batchSize: number, oneByOne: boolean) {
    const database = await createTestDatabase();
    databases.push(database);
    const db = await openDatabase<Tables>({ url: database.url });
    handles.push(db);
    await migrateSchema(db, POLICY_SCHEMA, policyMigrations);
    const projection = make(ns);
    const runner = new ProjectionRunner(
      jetstream(nc),
      jsm,
      db,
      oneByOne ? { ...projection, writeBatch: undefined, applyBatch: undefined } : projection,
      { batchSize },
    );
    await runner.start();
    await runner.catchUp(30_000);
    await runner.stop();
    expect(await runner.parked()).toEqual([]);
    const table = (name: string, key: string) =>
      db.withSchema(POLICY_SCHEMA).selectFrom(name).selectAll().orderBy('tenant').orderBy(key).execute();
    return {
      call_status: await table('call_status', 'call_id'),
      screen_calls: await table('screen_calls', 'call_id'),
      device_screens: await table('device_screens', 'device_id'),
    };
  }

  it.each([
    ['call status', callStatusProjection],
    ['device screens', deviceScreensProjection],
  ])('%s: the same rows from batches of 1, 7 and the whole log as from one event at a time', async (_, make) => {
    const expected = await project(make, 1, true);
    if (make === callStatusProjection) expect(expected.call_status).toHaveLength(CALLS);
    else expect(expected.device_screens.length).toBeGreaterThan(0);
    for (const batchSize of [1, 7, 1024]) {
      expect({ batchSize, ...(await project(make, batchSize, false)) }).toEqual({ batchSize, ...expected });
    }
  });
});
