/**
 * Every service's read models under kill -9: policy's call status and device screens, the approvals inbox, the bridge's executions and
 * audit's call records and archives run in one child process while tool calls go through their lifecycles on the log
 * (written by the real tool-call decider). The child is killed at random points and restarted; afterwards each read
 * model equals a rebuild from sequence 1 in a fresh database, row for row, and nothing is parked.
 */
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Kysely } from 'kysely';
import { CONTEXTS, type ContextName } from '@ormuz/contracts';
import { connectNats, EventStore, ensureStreams, streamName } from '@ormuz/event-log';
import { migrateSchema, openDatabase } from '@ormuz/postgres';
import { callLifecycles, createTestDatabase, randomNamespace, testEnv } from '@ormuz/testing';
import type { LifecyclePath, LifecyclePlan, TestDatabase } from '@ormuz/testing';
import { approvalsMigrations, APPROVALS_SCHEMA } from '../../services/approvals/src/persistence/migrations.js';
import { auditMigrations, AUDIT_SCHEMA } from '../../services/audit/src/persistence/migrations.js';
import {
  deviceBridgeMigrations,
  DEVICE_BRIDGE_SCHEMA,
} from '../../services/device-bridge/src/persistence/migrations.js';
import { policyMigrations, POLICY_SCHEMA } from '../../services/policy/src/persistence/migrations.js';
import {
  compiled,
  crashRepeatedly,
  dumpReadModels,
  parkedIn,
  runToHead,
  steadyLoad,
  type ChildConsumer,
  type ChildSpec,
} from './support/crash-trial.js';

const KILLS = 20;
const SCHEMAS = [POLICY_SCHEMA, APPROVALS_SCHEMA, DEVICE_BRIDGE_SCHEMA, AUDIT_SCHEMA];
const CONTEXT_NAMES = Object.keys(CONTEXTS) as ContextName[];

/** The read models and the names their checkpoints go by. */
function consumers(ns: string): (ChildConsumer & { schema: string; name: string; stream: string })[] {
  const calls = streamName(ns, 'calls');
  return [
    {
      module: compiled('services/policy/src/projections/call-status.projection.ts'),
      export: 'callStatusProjection',
      args: [ns],
      kind: 'projection',
      schema: POLICY_SCHEMA,
      name: 'policy_call_status',
      stream: calls,
    },
    {
      module: compiled('services/policy/src/projections/device-screens.projection.ts'),
      export: 'deviceScreensProjection',
      args: [ns],
      kind: 'projection',
      schema: POLICY_SCHEMA,
      name: 'policy_device_screens',
      stream: calls,
    },
    {
      module: compiled('services/approvals/src/projections/inbox.projection.ts'),
      export: 'inboxProjection',
      args: [ns],
      kind: 'projection',
      schema: APPROVALS_SCHEMA,
      name: 'approvals_inbox',
      stream: calls,
    },
    {
      module: compiled('services/device-bridge/src/projections/executions.projection.ts'),
      export: 'executionsProjection',
      args: [ns],
      kind: 'projection',
      schema: DEVICE_BRIDGE_SCHEMA,
      name: 'device_bridge_executions',
      stream: calls,
    },
    {
      module: compiled('services/audit/src/projections/call-records.projection.ts'),
      export: 'callRecordsProjection',
      args: [ns],
      kind: 'projection',
      schema: AUDIT_SCHEMA,
      name: 'audit_call_records',
      stream: calls,
    },
    ...CONTEXT_NAMES.map((c) => ({
      module: compiled('services/audit/src/projections/event-archive.projection.ts'),
      export: 'eventArchiveProjection',
      args: [ns, c],
      kind: 'projection' as const,
      schema: AUDIT_SCHEMA,
      name: `audit_archive_${c}`,
      stream: streamName(ns, c),
    })),
  ];
}

describe('read models under kill -9', () => {
  const ns = randomNamespace();
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let store: EventStore;
  let live: TestDatabase;
  let fresh: TestDatabase;
  let liveDb: Kysely<any>;
  let freshDb: Kysely<any>;

  beforeAll(async () => {
    nc = await connectNats({ url: testEnv().natsUrl, name: 'read-model-crash-test' });
    jsm = await jetstreamManager(nc);
    await ensureStreams(jsm, ns, CONTEXT_NAMES);
    store = new EventStore(jetstream(nc), jsm);
    [live, fresh] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    liveDb = await openDatabase({ url: live.url });
    freshDb = await openDatabase({ url: fresh.url });
    for (const db of [liveDb, freshDb]) {
      await migrateSchema(db, POLICY_SCHEMA, policyMigrations);
      await migrateSchema(db, APPROVALS_SCHEMA, approvalsMigrations);
      await migrateSchema(db, DEVICE_BRIDGE_SCHEMA, deviceBridgeMigrations);
      await migrateSchema(db, AUDIT_SCHEMA, auditMigrations);
    }
  });
  afterAll(async () => {
    await Promise.all([liveDb.destroy(), freshDb.destroy()]);
    await Promise.all([live.drop(), fresh.drop()]);
    for (const c of CONTEXT_NAMES) await jsm.streams.delete(streamName(ns, c)).catch(() => false);
    await nc.close();
  });

  /** The paths calls take, one call at a time. */
  const PATHS: LifecyclePath[] = ['refused', 'approved', 'denied', 'sealed', 'lost', 'finished'];

  /** Call `i`: one of the lifecycles, as policy, approvals and the bridge would record it. */
  function plan(i: number): LifecyclePlan {
    // Some calls observe the screen (every other one reading a second page), so that policy's device screens hold
    // observations, pages merged, and the screen actions that ran after them.
    const observes = i % 5 === 1;
    return {
      tool: observes ? 'device.screen_observe' : 'device.tap',
      args: observes ? (i % 4 === 3 ? { continuation: 'page-2' } : { max_elements: 3 }) : { ref: `e${i % 9}`, n: i },
      device: i % 7 === 0 ? null : { device_id: `phone-${i % 3}` },
      agentId: `agent-${i % 4}`,
      path: PATHS[i % PATHS.length]!,
      // Half the calls are decided as policy decides them (the request and the decision in one message), half as
      // older versions did (the decision in a message of its own): logs hold both.
      together: Math.floor(i / PATHS.length) % 2 === 0,
      outcome:
        i % 2
          ? {
              kind: 'succeeded',
              result: observes
                ? {
                    foreground_package: 'com.example.messages',
                    screen: 'compose',
                    elements: [{ ref: `e${i % 9}`, role: 'button', text: `Send ${i}`, clickable: true, depth: 0 }],
                  }
                : { tapped: true },
            }
          : { kind: 'failed', error: { code: 'not_found', message: 'No such element.' } },
    };
  }

  it(`holds exactly what a rebuild from the log holds, across ${KILLS} kills`, async () => {
    const all = consumers(ns);
    const spec = (databaseUrl: string): ChildSpec => ({
      natsUrl: testEnv().natsUrl,
      databaseUrl,
      batchSize: 16,
      consumers: all,
    });
    const load = steadyLoad(40, callLifecycles({ store, ns, tenant: 'acme', source: '/crash-test' }, plan));
    const report = await crashRepeatedly(spec(live.url), KILLS);
    const { errors } = await load.stop();
    expect(errors).toEqual([]);

    const heads = new Map<string, number>();
    for (const c of CONTEXT_NAMES)
      heads.set(streamName(ns, c), (await jsm.streams.info(streamName(ns, c))).state.last_seq);
    const targets = all.map((c) => ({ schema: c.schema, name: c.name, stream: c.stream, seq: heads.get(c.stream)! }));
    expect(heads.get(streamName(ns, 'calls'))).toBeGreaterThan(100);
    await runToHead(spec(live.url), liveDb, targets);
    await runToHead(spec(fresh.url), freshDb, targets);

    expect(await parkedIn(liveDb, SCHEMAS)).toEqual([]);
    const built = await dumpReadModels(liveDb, SCHEMAS);
    const rebuilt = await dumpReadModels(freshDb, SCHEMAS);
    expect(Object.keys(built).sort()).toEqual(Object.keys(rebuilt).sort());
    for (const table of Object.keys(rebuilt))
      expect({ table, rows: built[table] }).toEqual({ table, rows: rebuilt[table] });
    expect(Object.values(report.kills).reduce((a, b) => a + b, 0)).toBe(KILLS);
  }, 600_000);
});
