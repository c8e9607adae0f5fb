/**
 * The executions read model takes every event of a message: a decision's events are one message on the log and share
 * its sequence (a request with the gate's decision, an approval with its authorisation), so the row's `last_seq`
 * guard must let the second one through, or a call authorised with its request would never be `ready` to send.
 */
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Kysely } from 'kysely';
import { canonicalPayload } from '@ormuz/contracts';
import { connectNats, ensureStreams, EventStore, ProjectionRunner, streamName } from '@ormuz/event-log';
import { migrateSchema, openDatabase } from '@ormuz/postgres';
import { ToolCalls } from '@ormuz/service-kit';
import { createTestDatabase, randomNamespace, testEnv, type TestDatabase } from '@ormuz/testing';
import type { SubmitDecision } from '@ormuz/tool-call';
import { DEVICE_BRIDGE_SCHEMA, deviceBridgeMigrations } from '../src/index.js';
import type { DeviceBridgeDB } from '../src/persistence/executions.repository.js';
import { executionsProjection } from '../src/projections/executions.projection.js';

describe('executions: messages of several events', () => {
  const ns = randomNamespace();
  const tenant = 'acme';
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let database: TestDatabase;
  let db: Kysely<DeviceBridgeDB>;
  let calls: ToolCalls;

  beforeAll(async () => {
    nc = await connectNats({ url: testEnv().natsUrl, name: 'executions-messages-test' });
    jsm = await jetstreamManager(nc);
    await ensureStreams(jsm, ns, ['calls']);
    calls = new ToolCalls(new EventStore(jetstream(nc), jsm), ns, '/test/policy');
    database = await createTestDatabase();
    db = await openDatabase({ url: database.url });
    await migrateSchema(db, DEVICE_BRIDGE_SCHEMA, deviceBridgeMigrations);
  });
  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
    await jsm?.streams.delete(streamName(ns, 'calls')).catch(() => false);
    await nc?.close();
  });

  const submit = (n: number, decision: SubmitDecision) => {
    const callId = `call_${String(n).padStart(32, '0')}`;
    const { payload, sha256 } = canonicalPayload({ n });
    return calls.execute(
      tenant,
      callId,
      {
        type: 'SubmitCall',
        data: {
          call_id: callId,
          tool: 'device.send_message',
          contract_version: '1',
          payload,
          payload_sha256: sha256,
          origin: { kind: 'operation', operation_id: `op-${n}` },
          agent_id: 'agent-1',
          target: { device_id: 'phone-1' },
          decision,
        },
      },
      { correlationid: callId, causationid: 'test' },
    );
  };

  it('makes a call ready when its authorisation arrives in the message that requested it, or that approved it', async () => {
    const direct = await submit(1, { kind: 'authorize', verdict: { level: 'low', reasons: ['a read'] } });
    const approvalId = 'apr_0000000000000002';
    const staged = await submit(2, {
      kind: 'stage',
      approval_id: approvalId,
      summary: 'Send a message',
      expires_at: new Date(Date.now() + 60_000).toISOString(),
      verdict: { level: 'high', reasons: ['sends a message'] },
    });
    const stagedCall = staged.events[0]!.subject;
    const approved = await calls.execute(
      tenant,
      stagedCall,
      {
        type: 'ApproveCall',
        data: {
          call_id: stagedCall,
          approval_id: approvalId,
          decided_by: 'owner-1',
          payload_sha256: canonicalPayload({ n: 2 }).sha256,
          contract_version: '1',
        },
      },
      { correlationid: stagedCall, causationid: 'test' },
    );
    expect(approved.events.map((e) => e.type.split('.')[2])).toEqual(['approved', 'authorized']);

    // One message per batch: each batch is the two events of one decision.
    const runner = new ProjectionRunner(jetstream(nc), jsm, db, executionsProjection(ns), { batchSize: 1 });
    await runner.start();
    await runner.waitFor(approved.version);
    await runner.stop();

    const rows = await db
      .withSchema(DEVICE_BRIDGE_SCHEMA)
      .selectFrom('executions')
      .select(['call_id', 'status', 'verdict', 'last_seq'])
      .orderBy('call_id')
      .execute();
    expect(rows).toEqual([
      {
        call_id: direct.events[0]!.subject,
        status: 'ready',
        verdict: { level: 'low', reasons: ['a read'] },
        last_seq: direct.version,
      },
      {
        call_id: stagedCall,
        status: 'ready',
        verdict: { level: 'high', reasons: ['sends a message'] },
        last_seq: approved.version,
      },
    ]);
  });
});
