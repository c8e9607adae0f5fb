/**
 * Policy's read models write a batch at a time (`writeBatch`: one statement with the checkpoint's move, after at most
 * one read for device screens). The rows must be what `apply`, one event at a time, leaves: the same log is projected
 * both ways, with batches of every size, into databases of their own, and the tables compared row for row. The log
 * holds every lifecycle the decider allows, observations of one and of two pages, screen actions that start after an
 * observation, and messages of several events (a request with its decision, a start with its outcome).
 */
import { createHash, randomUUID } from 'node:crypto';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Kysely } from 'kysely';
import { aggregateSubject, canonicalPayload, envelope, ToolCallEventType, type JsonValue } from '@ormuz/contracts';
import {
  connectNats,
  ensureStreams,
  EventStore,
  ProjectionRunner,
  runCommand,
  streamName,
  type Projection,
} from '@ormuz/event-log';
import { migrateSchema, openDatabase } from '@ormuz/postgres';
import { createTestDatabase, lifecycleCommands, randomNamespace, testEnv, type TestDatabase } from '@ormuz/testing';
import { decisionCommand, toolCallDecider, type SubmitDecision, type ToolCallCommand } from '@ormuz/tool-call';
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

  /** Call `i` through one of its lifecycles with the real decider, as policy, approvals and the bridge record it. */
  async function lifecycle(i: number): Promise<void> {
    const callId = `call_${createHash('sha256').update(`${ns}/${i}`).digest('hex').slice(0, 32)}`;
    const tool = TOOLS[i % TOOLS.length]!;
    const device = tool.startsWith('device.') ? { device_id: `phone-${i % 3}` } : null;
    // Every third observation reads the second page of the screen before it.
    const args = tool === 'device.screen_observe' && i % 3 === 0 ? { continuation: 'page-2' } : { n: i };
    const { payload, sha256 } = canonicalPayload(args);
    const step = lifecycleCommands(callId, sha256);
    const subject = aggregateSubject(ns, 'calls', tenant, callId);
    const cause = { source: '/test', tenant, aggregateId: callId, correlationid: callId, causationid: randomUUID() };
    const run = (command: ToolCallCommand) =>
      runCommand(store, streamName(ns, 'calls'), subject, toolCallDecider, command, cause);
    const inAMinute = new Date(Date.now() + 60_000).toISOString();
    const path = Math.floor(i / TOOLS.length) % 6;
    const approvalId = `apr_${callId.slice(5, 21)}`;
    const decision: SubmitDecision =
      path === 0
        ? { kind: 'refuse', reason_code: 'tool_not_granted', message: 'Not granted.' }
        : path === 1
          ? {
              kind: 'stage',
              approval_id: approvalId,
              summary: 'Tap.',
              expires_at: inAMinute,
              verdict: { level: 'high', reasons: ['taps'] },
            }
          : { kind: 'authorize', verdict: { level: 'low', reasons: [] } };
    const together = i % 2 === 0; // the request and its decision in one message, or in two
    await run({
      type: 'SubmitCall',
      data: {
        call_id: callId,
        tool,
        contract_version: 'v1-test',
        payload,
        payload_sha256: sha256,
        origin: { kind: 'operation', operation_id: `op-${i}` },
        agent_id: 'agent-1',
        target: device,
        ...(together ? { decision } : {}),
      },
    });
    if (!together) await run(decisionCommand(callId, decision));
    if (path === 0) return;
    if (path === 1) {
      await run(step.approve(approvalId));
    }
    if (path === 2) {
      await run(step.seal());
      return;
    }
    const requestId = `req-${i}`;
    const dispatched = await run(step.dispatch(requestId, device, inAMinute));
    const result = tool === 'device.screen_observe' ? observation(i, 'continuation' in args ? 2 : 1) : { done: true };
    if (path === 3) {
      // The start and its outcome in one message, as a bridge that learns both at once records them.
      const at = { source: '/test', tenant, subject: callId, correlationid: callId, causationid: 'x', time: new Date() };
      const executorId = device?.device_id ?? 'model-loop';
      await store.append(
        subject,
        [
          envelope(
            {
              type: ToolCallEventType.Started,
              data: { call_id: callId, request_id: requestId, executor_id: executorId, boot_id: 'boot-1' },
            },
            at,
          ),
          envelope({ type: ToolCallEventType.Succeeded, data: { call_id: callId, request_id: requestId, result } }, at),
        ],
        dispatched.version,
      );
      return;
    }
    await run(step.claimStart(requestId, device));
    if (path === 4) {
      await run(step.connectionLost(requestId));
      return;
    }
    await run({
      type: 'RecordOutcome',
      data: {
        call_id: callId,
        request_id: requestId,
        outcome:
          i % 4 === 1
            ? { kind: 'failed', error: { code: 'not_found', message: 'No such element.' } }
            : { kind: 'succeeded', result },
      },
    });
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
