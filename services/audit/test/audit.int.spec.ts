import { randomUUID } from 'node:crypto';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { pino } from 'pino';
import {
  aggregateSubject,
  canonicalPayload,
  contextFilter,
  envelope,
  ConversationEventType,
  ToolCallEventType,
  type AuditCallRecordV1,
  type AuditProjectionsReplyV1,
  type CallOriginV1,
  type JsonValue,
  type RpcName,
  type RpcRequestOf,
  EXPORT_COUNT_HEADER,
  EXPORT_LAST_HEADER,
  replayRowOf,
  type StreamPositionV1,
} from '@ormuz/contracts';
import { connectNats, EventStore, replay, streamName } from '@ormuz/event-log';
import { migrateSchema, openDatabase } from '@ormuz/postgres';
import {
  callRpc,
  RemoteError,
  startService,
  streamRpc,
  ToolCalls,
  waitUntilServing,
  type RunningService,
} from '@ormuz/service-kit';
import {
  adminFor,
  createTestDatabase,
  openTestDatabase,
  randomNamespace,
  submitSeededCall,
  testEnv,
  waitFor,
  type OpenTestDatabase,
  type TestDatabase,
} from '@ormuz/testing';
import { deriveCallId } from '@ormuz/tool-call';
import { AUDIT_SCHEMA, auditMigrations, loadAuditConfig, auditService } from '../src/index.js';
import { checkLink, EMPTY_CHAIN } from '../src/domain/archive-chain.js';
import { AuditRepository } from '../src/persistence/audit.repository.js';
import type { AuditDB } from '../src/persistence/audit.tables.js';

const RESUMED = ConversationEventType.Resumed;

describe('audit service', () => {
  const ns = randomNamespace('audit');
  const callsStream = streamName(ns, 'calls');
  const conversationsStream = streamName(ns, 'conversations');
  const logLines: string[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void logLines.push(line) });

  let database: TestDatabase;
  let running: RunningService;
  let nc: NatsConnection;
  let js: JetStreamClient;
  let jsm: JetStreamManager;
  let store: EventStore;
  let db: Kysely<AuditDB>;
  let policy: ToolCalls;
  let bridge: ToolCalls;
  let approvals: ToolCalls;

  const ask = <N extends RpcName>(name: N, body: NoInfer<RpcRequestOf<N>>) =>
    adminFor(body).then((credential) => callRpc(nc, ns, name, body, { credential, checkReply: true }));
  const canonicalPayloadFields = (args: unknown) => {
    const { payload, sha256 } = canonicalPayload(args);
    return { payload, payload_sha256: sha256 };
  };
  const inOneMinute = () => new Date(Date.now() + 60_000).toISOString();
  const cause = (correlationid = 'conv-1') => ({ correlationid, causationid: randomUUID() });

  async function startAudit(): Promise<RunningService> {
    const config = loadAuditConfig({
      NATS_URL: testEnv().natsUrl,
      DATABASE_URL: database.url,
      ORMUZ_NAMESPACE: ns,
    });
    const audit = await startService({ ...auditService(config), logger });
    await waitUntilServing(nc, ns, 'audit');
    return audit;
  }

  /** Polls audit.projections until every projection has applied everything in its stream. */
  async function settled(): Promise<AuditProjectionsReplyV1['projections']> {
    return waitFor(
      async () => {
        const { projections } = await ask('audit.projections', {});
        return projections.every((p) => p.checkpoint >= p.stream_last_seq && !p.rebuilding) && projections;
      },
      { message: 'every audit projection to reach the end of its stream' },
    );
  }

  async function submit(tenant: string, operationId: string, tool: string, args: unknown, deviceId: string | null) {
    const origin: CallOriginV1 = { kind: 'operation', operation_id: operationId };
    const callId = deriveCallId(tenant, origin);
    const { payload, sha256 } = await submitSeededCall(
      policy,
      { tenant, callId, tool, args, origin, agentId: 'agent-7', deviceId },
      cause(),
    );
    return { callId, payload, sha256, origin };
  }

  /** Authorises, dispatches and starts a low-risk call; returns its request id. */
  async function runUntilStarted(tenant: string, callId: string): Promise<string> {
    const requestId = `req-${callId.slice(5, 13)}`;
    await policy.execute(
      tenant,
      callId,
      { type: 'AuthorizeCall', data: { call_id: callId, verdict: { level: 'low', reasons: ['a low-risk read'] } } },
      cause(),
    );
    await bridge.execute(
      tenant,
      callId,
      {
        type: 'DispatchCall',
        data: {
          call_id: callId,
          request_id: requestId,
          executor: { kind: 'device', device_id: 'phone-1' },
          deadline: inOneMinute(),
        },
      },
      cause(),
    );
    await bridge.execute(
      tenant,
      callId,
      {
        type: 'ClaimStart',
        data: { call_id: callId, request_id: requestId, executor_id: 'phone-1', boot_id: 'boot-1' },
      },
      cause(),
    );
    return requestId;
  }

  const callRows = () =>
    db.withSchema(AUDIT_SCHEMA).selectFrom('call_records').selectAll().orderBy('tenant').orderBy('call_id').execute();
  const archiveRows = () =>
    db
      .withSchema(AUDIT_SCHEMA)
      .selectFrom('events')
      .selectAll()
      .orderBy('stream')
      .orderBy('seq')
      .orderBy('idx')
      .execute();
  /** Events on a context's stream: a message of several (one decision) counts each. */
  const eventsOn = async (context: 'calls' | 'conversations') => {
    let n = 0;
    for await (const item of replay(js, {
      stream: streamName(ns, context),
      filterSubject: contextFilter(ns, context),
    })) {
      if (item.event) n++;
    }
    return n;
  };

  // The calls the tests below look at.
  let refused: Awaited<ReturnType<typeof submit>>;
  let succeeded: Awaited<ReturnType<typeof submit>>;
  let lateFailure: Awaited<ReturnType<typeof submit>>;
  let nullResult: Awaited<ReturnType<typeof submit>>;
  let globexCall: Awaited<ReturnType<typeof submit>>;
  const result: JsonValue = { message_id: 'm-1', delivered: true, parts: [1, 2.5, null] };

  beforeAll(async () => {
    // NATS first, so afterAll can delete the streams even when a later step fails.
    nc = await connectNats({ url: testEnv().natsUrl, name: 'audit-test' });
    js = jetstream(nc);
    jsm = await jetstreamManager(nc);
    database = await createTestDatabase();
    running = await startAudit();
    store = new EventStore(js, jsm);
    policy = new ToolCalls(store, ns, '/ormuz/policy');
    approvals = new ToolCalls(store, ns, '/ormuz/approvals');
    bridge = new ToolCalls(store, ns, '/ormuz/device-bridge');
    db = await openDatabase({ url: database.url });

    // Refused at the gate.
    refused = await submit('acme', 'op-refused', 'device.teleport', { where: 'mars' }, 'phone-1');
    await policy.execute(
      'acme',
      refused.callId,
      {
        type: 'RefuseCall',
        data: {
          call_id: refused.callId,
          reason_code: 'unknown_tool',
          message: 'There is no tool named device.teleport; call device.open_app instead.',
        },
      },
      cause(),
    );

    // Low risk, run, succeeded. The arguments are not canonical as sent (key order, a decomposed é).
    succeeded = await submit(
      'acme',
      'op-ok',
      'device.open_app',
      { z: 1, package_name: 'com.example.cafe\u0301' },
      'phone-1',
    );
    const okRequest = await runUntilStarted('acme', succeeded.callId);
    await bridge.execute(
      'acme',
      succeeded.callId,
      {
        type: 'RecordOutcome',
        data: { call_id: succeeded.callId, request_id: okRequest, outcome: { kind: 'succeeded', result } },
      },
      cause(),
    );

    // High risk: staged, approved, started, lost sight of, then a late real failure.
    lateFailure = await submit(
      'acme',
      'op-send',
      'device.send_message',
      { recipient: 'Ana', message_body: 'On my way' },
      'phone-1',
    );
    const approvalId = `apr_${lateFailure.callId.slice(5)}`;
    await policy.execute(
      'acme',
      lateFailure.callId,
      {
        type: 'StageCall',
        data: {
          call_id: lateFailure.callId,
          approval_id: approvalId,
          summary: 'Send a text message to Ana: "On my way"',
          expires_at: new Date(Date.now() + 15 * 60_000).toISOString(),
          verdict: { level: 'high', reasons: ['device.send_message is a high-risk tool'] },
        },
      },
      cause(),
    );
    await approvals.execute(
      'acme',
      lateFailure.callId,
      {
        type: 'ApproveCall',
        data: {
          call_id: lateFailure.callId,
          approval_id: approvalId,
          decided_by: 'owner-1',
          payload_sha256: lateFailure.sha256,
          contract_version: '1',
        },
      },
      cause(),
    );
    const sendRequest = 'req-send-1';
    await bridge.execute(
      'acme',
      lateFailure.callId,
      {
        type: 'DispatchCall',
        data: {
          call_id: lateFailure.callId,
          request_id: sendRequest,
          executor: { kind: 'device', device_id: 'phone-1' },
          deadline: inOneMinute(),
        },
      },
      cause(),
    );
    await bridge.execute(
      'acme',
      lateFailure.callId,
      {
        type: 'ClaimStart',
        data: { call_id: lateFailure.callId, request_id: sendRequest, executor_id: 'phone-1', boot_id: 'boot-1' },
      },
      cause(),
    );
    await bridge.execute(
      'acme',
      lateFailure.callId,
      {
        type: 'MarkOutcomeUnknown',
        data: { call_id: lateFailure.callId, request_id: sendRequest, cause: 'connection_lost', detail: '' },
      },
      cause(),
    );
    await bridge.execute(
      'acme',
      lateFailure.callId,
      {
        type: 'RecordOutcome',
        data: {
          call_id: lateFailure.callId,
          request_id: sendRequest,
          outcome: { kind: 'failed', error: { code: 'recipient_unknown', message: 'No contact named Ana.' } },
        },
      },
      cause(),
    );

    // A tool that answered JSON null: a result, not a missing one.
    nullResult = await submit('acme', 'op-null', 'device.screen_observe', {}, 'phone-1');
    const nullRequest = await runUntilStarted('acme', nullResult.callId);
    await bridge.execute(
      'acme',
      nullResult.callId,
      {
        type: 'RecordOutcome',
        data: { call_id: nullResult.callId, request_id: nullRequest, outcome: { kind: 'succeeded', result: null } },
      },
      cause(),
    );

    // Another tenant.
    globexCall = await submit('globex', 'op-g', 'device.screen_observe', {}, 'phone-9');

    // Conversation-stream events of both tenants.
    for (const tenant of ['acme', 'globex']) {
      const event = envelope(
        { type: RESUMED, data: { reason: `owner of ${tenant} decided` } },
        {
          source: '/ormuz/model-loop',
          tenant,
          subject: 'conv-1',
          correlationid: 'conv-1',
          causationid: 'turn-0',
          time: new Date(),
        },
      );
      await store.append(aggregateSubject(ns, 'conversations', tenant, 'conv-1'), [event], 0);
    }
    await settled();
  }, 60_000);

  afterAll(async () => {
    await running?.close();
    await db?.destroy();
    for (const stream of [callsStream, conversationsStream, streamName(ns, 'devices')])
      await jsm?.streams.delete(stream).catch(() => false);
    await nc?.close();
    await database?.drop();
  }, 30_000);

  describe('archive', () => {
    it('holds every event of every stream exactly as it was on the log', async () => {
      for (const [tenant, callId] of [
        ['acme', refused.callId],
        ['acme', succeeded.callId],
        ['acme', lateFailure.callId],
        ['acme', nullResult.callId],
        ['globex', globexCall.callId],
      ] as const) {
        const onLog = await policy.timeline(tenant, callId);
        const archived = await ask('audit.events', { tenant, call_id: callId });
        expect(archived).toEqual({
          events: onLog.map(({ seq, event }) => ({ stream: callsStream, seq, event })),
          partial: false,
          next_from_seq: null,
        });
      }
      const rows = await archiveRows();
      expect(rows.filter((r) => r.stream === callsStream)).toHaveLength(await eventsOn('calls'));
      expect(rows.filter((r) => r.stream === conversationsStream)).toHaveLength(await eventsOn('conversations'));
    });

    it('archives the events of one message as one row each, by their index in it', async () => {
      // An approval authorises in the same decision; a submit carrying the gate's decision records both at once.
      const decided = await policy.execute(
        'acme',
        deriveCallId('acme', { kind: 'operation', operation_id: 'op-decided' }),
        {
          type: 'SubmitCall',
          data: {
            call_id: deriveCallId('acme', { kind: 'operation', operation_id: 'op-decided' }),
            tool: 'device.teleport',
            contract_version: '1',
            ...canonicalPayloadFields({ where: 'venus' }),
            origin: { kind: 'operation', operation_id: 'op-decided' },
            agent_id: 'agent-7',
            target: null,
            decision: {
              kind: 'refuse',
              reason_code: 'unknown_tool',
              message: 'There is no tool named device.teleport.',
            },
          },
        },
        cause(),
      );
      await settled();
      const callId = decided.events[0]!.subject;
      const place = (r: { seq: number; idx: number; type: string }) => [r.seq, r.idx, r.type.split('.')[2]];
      const rows = await archiveRows();
      const submitted = rows.filter((r) => r.subject === callId).map(place);
      expect(submitted).toEqual([
        [decided.version, 0, 'requested'],
        [decided.version, 1, 'refused'],
      ]);
      const approval = rows.filter((r) => r.subject === lateFailure.callId && /approved|authorized/.test(r.type));
      expect(approval.map(place)).toEqual([
        [approval[0]!.seq, 0, 'approved'],
        [approval[0]!.seq, 1, 'authorized'],
      ]);
      const record = await ask('audit.call', { tenant: 'acme', call_id: callId });
      expect(record).toMatchObject({ status: 'refused', decision: 'refused', last_seq: decided.version });
      const page = await ask('audit.events', { tenant: 'acme', call_id: callId, limit: 1 });
      expect(page).toMatchObject({ partial: false, next_from_seq: null });
      expect(page.events.map((e) => [e.seq, e.event.type.split('.')[2]])).toEqual([
        [decided.version, 'requested'],
        [decided.version, 'refused'],
      ]);
    });

    it('archives the conversations stream too', async () => {
      const page = await ask('audit.events', { tenant: 'acme', context: 'conversations' });
      expect(page.events.map((e) => [e.stream, e.event.type, e.event.data])).toEqual([
        [conversationsStream, RESUMED, { reason: 'owner of acme decided' }],
      ]);
    });

    it('archives a message delivered twice once', async () => {
      const before = await archiveRows();
      const records = await callRows();
      // A retried append: the same event published again with its id as msgID.
      const { event } = (await policy.timeline('acme', succeeded.callId)).at(-1)!;
      const ack = await js.publish(aggregateSubject(ns, 'calls', 'acme', succeeded.callId), JSON.stringify(event), {
        msgID: event.id,
      });
      expect(ack.duplicate).toBe(true);

      // A redelivery of everything: the checkpoints and consumers are lost, so every message is applied again.
      await running.close();
      for (const name of ['audit_archive_calls', 'audit_archive_conversations', 'audit_call_records']) {
        const stream = name.endsWith('conversations') ? conversationsStream : callsStream;
        await jsm.consumers.delete(stream, name);
      }
      await db.withSchema(AUDIT_SCHEMA).deleteFrom('projection_checkpoints').execute();
      running = await startAudit();
      const projections = await settled();

      expect(await archiveRows()).toEqual(before);
      expect(await callRows()).toEqual(records);
      expect(projections.every((p) => p.parked === 0)).toBe(true);
    }, 30_000);
  });

  describe('call records', () => {
    it('keeps what was sent and decided for a call that ran', async () => {
      const r = await ask('audit.call', { tenant: 'acme', call_id: succeeded.callId });
      expect(r.payload).toBe('{"package_name":"com.example.café","z":1}');
      expect(r.payload).toBe(succeeded.payload);
      expect(r.payload_sha256).toBe(succeeded.sha256);
      expect(r).toMatchObject({
        tenant: 'acme',
        call_id: succeeded.callId,
        tool: 'device.open_app',
        contract_version: '1',
        agent_id: 'agent-7',
        correlation_id: 'conv-1',
        origin: succeeded.origin,
        target_device_id: 'phone-1',
        status: 'succeeded',
        decision: 'authorized',
        risk_level: 'low',
        risk_reasons: ['a low-risk read'],
        approval_id: null,
        decided_by: null,
        executor: { kind: 'device', device_id: 'phone-1' },
        executor_id: 'phone-1',
        boot_id: 'boot-1',
        result,
        error: null,
        unknown_cause: null,
      });
      for (const key of [
        'decided_at',
        'authorized_at',
        'dispatched_at',
        'started_at',
        'finished_at',
        'deadline',
      ] as const) {
        expect(typeof r[key]).toBe('string');
      }
      expect(r.request_id).toMatch(/^req-/);
      expect(r.last_seq).toBe((await policy.timeline('acme', succeeded.callId)).at(-1)!.seq);
    });

    it('keeps the approval and the unknown mark of a call whose real outcome arrived late', async () => {
      const r = await ask('audit.call', { tenant: 'acme', call_id: lateFailure.callId });
      expect(r).toMatchObject({
        status: 'failed',
        decision: 'staged',
        risk_level: 'high',
        risk_reasons: ['device.send_message is a high-risk tool'],
        approval_id: `apr_${lateFailure.callId.slice(5)}`,
        approval_summary: 'Send a text message to Ana: "On my way"',
        approval_outcome: 'approved',
        decided_by: 'owner-1',
        denial_reason: null,
        request_id: 'req-send-1',
        unknown_cause: 'connection_lost',
        unknown_detail: '',
        result: null,
        error: { code: 'recipient_unknown', message: 'No contact named Ana.' },
        sealed_by: null,
      });
      expect(r.approval_expires_at).not.toBeNull();
      expect(r.approval_decided_at).not.toBeNull();
      expect(r.unknown_at).not.toBeNull();
      expect(r.finished_at).not.toBeNull();
    });

    it('stores NULL, never a plausible default, for everything a refused call never reached', async () => {
      const nullColumns = [
        'risk_level',
        'risk_reasons',
        'approval_id',
        'approval_summary',
        'approval_expires_at',
        'approval_outcome',
        'decided_by',
        'approval_decided_at',
        'denial_reason',
        'authorized_at',
        'request_id',
        'executor',
        'deadline',
        'dispatched_at',
        'executor_id',
        'boot_id',
        'started_at',
        'result',
        'error',
        'unknown_cause',
        'unknown_detail',
        'unknown_at',
        'sealed_by',
        'seal_reason',
        'sealed_at',
      ];
      const row = await db
        .withSchema(AUDIT_SCHEMA)
        .selectFrom('call_records')
        .select(nullColumns.map((c) => sql<boolean>`${sql.ref(c)} is null`.as(c)))
        .where('tenant', '=', 'acme')
        .where('call_id', '=', refused.callId)
        .executeTakeFirstOrThrow();
      expect(row).toEqual(Object.fromEntries(nullColumns.map((c) => [c, true])));

      const r = await ask('audit.call', { tenant: 'acme', call_id: refused.callId });
      expect(r).toMatchObject({
        status: 'refused',
        decision: 'refused',
        refusal_code: 'unknown_tool',
        refusal_message: 'There is no tool named device.teleport; call device.open_app instead.',
        payload: '{"where":"mars"}',
      });
      for (const c of nullColumns) expect(r[c as keyof AuditCallRecordV1]).toBeNull();
      expect(r.decided_at).toBe(r.finished_at);
    });

    it('tells a JSON null result apart from a missing one', async () => {
      const rows = await db
        .withSchema(AUDIT_SCHEMA)
        .selectFrom('call_records')
        .select([
          'call_id',
          sql<boolean>`result is null`.as('missing'),
          sql<boolean>`result = 'null'::jsonb`.as('json_null'),
        ])
        .where('call_id', 'in', [nullResult.callId, refused.callId])
        .execute();
      expect(Object.fromEntries(rows.map((r) => [r.call_id, [r.missing, r.json_null]]))).toEqual({
        [nullResult.callId]: [false, true],
        [refused.callId]: [true, null],
      });
      const r = await ask('audit.call', { tenant: 'acme', call_id: nullResult.callId });
      expect([r.status, r.result]).toEqual(['succeeded', null]);
    });
  });

  describe('queries', () => {
    it('answers call_not_found with what to do next', async () => {
      const err = await ask('audit.call', { tenant: 'acme', call_id: 'call_00000000000000000000000000000000' }).catch(
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(RemoteError);
      expect(err).toMatchObject({ code: 'call_not_found' });
      expect((err as Error).message).toMatch(/Check the id and the tenant/);
    });

    it("never returns another tenant's rows", async () => {
      const foreign = await ask('audit.call', { tenant: 'globex', call_id: succeeded.callId }).catch((e: unknown) => e);
      expect(foreign).toMatchObject({ code: 'call_not_found' });
      const own = await ask('audit.call', { tenant: 'globex', call_id: globexCall.callId });
      expect(own.tenant).toBe('globex');

      const globexEvents = await ask('audit.events', { tenant: 'globex' });
      expect(globexEvents.events.length).toBeGreaterThan(0);
      expect(globexEvents.events.every((e) => e.event.tenant === 'globex')).toBe(true);
      expect(await ask('audit.events', { tenant: 'globex', call_id: succeeded.callId })).toEqual({
        events: [],
        partial: false,
        next_from_seq: null,
      });
      const acmeEvents = await ask('audit.events', { tenant: 'acme', limit: 1000 });
      expect(acmeEvents.events.some((e) => e.event.subject === globexCall.callId)).toBe(false);
      const acmeConversation = await ask('audit.events', { tenant: 'acme', context: 'conversations' });
      expect(acmeConversation.events.map((e) => e.event.tenant)).toEqual(['acme']);
    });

    it('pages events in stream order with a continuation', async () => {
      const all = await ask('audit.events', { tenant: 'acme', call_id: lateFailure.callId });
      expect(all.events.map((e) => e.event.type.split('.')[2])).toEqual([
        'requested',
        'staged',
        'approved',
        'authorized',
        'dispatched',
        'started',
        'outcome_unknown',
        'failed',
      ]);
      const first = await ask('audit.events', { tenant: 'acme', call_id: lateFailure.callId, limit: 3 });
      expect(first.partial).toBe(true);
      expect(first.next_from_seq).toBe(all.events[3]!.seq);
      const rest = await ask('audit.events', {
        tenant: 'acme',
        call_id: lateFailure.callId,
        from_seq: first.next_from_seq!,
        limit: 1000,
      });
      expect([...first.events, ...rest.events]).toEqual(all.events);
      expect(rest).toMatchObject({ partial: false, next_from_seq: null });
    });

    it("replays the archive's events as they were appended, page after page, none lost or repeated", async () => {
      const archived = await ask('audit.events', { tenant: 'acme', limit: 1000 });
      const replayed = [];
      let after: StreamPositionV1 | undefined;
      do {
        const page = await ask('audit.replay', { tenant: 'acme', context: 'calls', limit: 3, ...(after && { after }) });
        expect(page.events.length).toBeLessThanOrEqual(3);
        replayed.push(...page.events);
        after = page.next ?? undefined;
      } while (after);
      expect(replayed.map((e) => [e.seq, e.event])).toEqual(archived.events.map((e) => [e.seq, e.event]));
      // The events of one message are told apart by their index in it.
      expect(new Set(replayed.map((e) => `${e.seq}/${e.idx}`)).size).toBe(replayed.length);
    });

    it('ends a replay page before it outgrows its size, always with one event, reading one row past it', async () => {
      const repo = running.app.get(AuditRepository);
      const filter = { tenant: 'acme', stream: callsStream, after: { seq: 0, idx: 0 }, limit: 1000 };
      const all = await repo.replayPage(filter, Number.MAX_SAFE_INTEGER);
      const sizes = all.map((r, i) => r.bytes - (all[i - 1]?.bytes ?? 0));
      expect(sizes.every((size, i) => size === Buffer.byteLength(all[i]!.json) + 48)).toBe(true);
      // Room for the first three: the fourth is read too, to say the page is cut short.
      expect(await repo.replayPage(filter, all[2]!.bytes)).toEqual(all.slice(0, 4));
      // Room for none: the first is read (a page always moves on) and the second says there is more.
      expect(await repo.replayPage(filter, 1)).toEqual(all.slice(0, 2));
    });

    /** `audit.export`, read whole: its parts' text and headers, and the final reply. */
    async function exported(body: RpcRequestOf<'audit.export'>) {
      const parts: { text: string; count: number; last: string }[] = [];
      const stream = streamRpc(nc, ns, 'audit.export', body, { credential: await adminFor(body) });
      for (;;) {
        const next = await stream.next();
        if (next.done) return { parts, end: next.value, text: parts.map((p) => p.text).join('') };
        const h = next.value.headers;
        const text = new TextDecoder().decode(next.value.body);
        parts.push({ text, count: Number(h.get(EXPORT_COUNT_HEADER)), last: h.get(EXPORT_LAST_HEADER) });
      }
    }
    const lines = (text: string) =>
      text
        .split('\n')
        .slice(0, -1)
        .map((line) => JSON.parse(line) as unknown);

    it('exports events as NDJSON lines: each row as replayRowOf makes it, each CloudEvent as it was appended', async () => {
      for (const context of ['calls', 'conversations'] as const) {
        const page = await ask('audit.replay', { tenant: 'acme', context, limit: 1000 });
        expect(page.events.length).toBeGreaterThan(0);
        const rows = await exported({ tenant: 'acme', context });
        expect(rows.end).toEqual({ count: page.events.length, next: null, high_seq: page.high_seq });
        expect(lines(rows.text)).toEqual(page.events.map((e) => replayRowOf(context, e)));
        const cloudEvents = await exported({ tenant: 'acme', context, as: 'cloudevents' });
        expect(lines(cloudEvents.text)).toEqual(page.events.map((e) => e.event));
      }
    });

    it('ends an export at its limit with the place to go on from, in the last part and the reply', async () => {
      const events = await ask('audit.replay', { tenant: 'acme', context: 'calls', limit: 1000 });
      const first = await exported({ tenant: 'acme', context: 'calls', limit: 3 });
      const third = events.events[2]!;
      expect(first.end).toEqual({ count: 3, next: { seq: third.seq, idx: third.idx }, high_seq: events.high_seq });
      expect(first.parts).toEqual([expect.objectContaining({ count: 3, last: `${third.seq}:${third.idx}` })]);
      const rest = await exported({ tenant: 'acme', context: 'calls', after: first.end.next! });
      expect(rest.end).toMatchObject({ count: events.events.length - 3, next: null });
      expect(lines(first.text + rest.text)).toEqual(events.events.map((e) => replayRowOf('calls', e)));
      // The filters are audit.replay's: the same events, in the same order.
      const filtered = {
        tenant: 'acme',
        context: 'calls' as const,
        agent_id: 'agent-7',
        types: [ToolCallEventType.Requested],
      };
      const page = await ask('audit.replay', filtered);
      expect(lines((await exported(filtered)).text)).toEqual(page.events.map((e) => replayRowOf('calls', e)));
    });

    it("exports only the tenant's own events, and refuses contradictory bounds before any part", async () => {
      const foreign = await exported({ tenant: 'globex', context: 'calls' });
      expect(foreign.end.count).toBeGreaterThan(0);
      expect(lines(foreign.text)).toEqual(Array(foreign.end.count).fill(expect.objectContaining({ tenant: 'globex' })));
      const contradictory = exported({ tenant: 'acme', context: 'calls', after: { seq: 9, idx: 0 }, to_seq: 3 });
      await expect(contradictory).rejects.toMatchObject({ code: 'invalid_query' });
      // No part goes to a caller without a credential, or with another tenant's.
      const acme = { tenant: 'acme', context: 'calls' } as const;
      for (const credential of [undefined, await adminFor({ tenant: 'globex' })]) {
        const stream = streamRpc(nc, ns, 'audit.export', acme, credential ? { credential } : {});
        await expect(stream.next()).rejects.toMatchObject({ code: credential ? 'forbidden' : 'unauthenticated' });
      }
    });

    it('refuses contradictory or oversized queries with the fix', async () => {
      await expect(
        ask('audit.events', { tenant: 'acme', context: 'conversations', call_id: refused.callId }),
      ).rejects.toMatchObject({
        code: 'invalid_query',
        message: expect.stringMatching(/Drop call_id/),
      });
      await expect(ask('audit.events', { tenant: 'acme', limit: 1001 })).rejects.toMatchObject({
        code: 'schema_violation',
      });
      await expect(ask('audit.call', { tenant: 'acme.*', call_id: refused.callId })).rejects.toMatchObject({
        code: 'schema_violation',
      });
    });
  });

  describe('poison messages', () => {
    it('parks and reports a message that is not an event, and keeps applying later events', async () => {
      const poison = await js.publish(aggregateSubject(ns, 'calls', 'acme', 'call_poison'), '{"not": "an event"');
      const after = await submit('acme', 'op-after-poison', 'device.screen_observe', {}, 'phone-1');
      const projections = await settled();

      const parked = await db
        .withSchema(AUDIT_SCHEMA)
        .selectFrom('parked_messages')
        .select(['projection', 'seq', 'payload'])
        .orderBy('projection')
        .execute();
      expect(parked).toEqual([
        { projection: 'audit_archive_calls', seq: poison.seq, payload: '{"not": "an event"' },
        { projection: 'audit_call_records', seq: poison.seq, payload: '{"not": "an event"' },
      ]);
      expect(Object.fromEntries(projections.map((p) => [p.projection, p.parked]))).toEqual({
        call_records: 1,
        archive_calls: 1,
        archive_conversations: 0,
        archive_devices: 0,
        archive_usage: 0,
      });
      expect(logLines.filter((l) => l.includes('message parked') && l.includes(`"seq":${poison.seq}`))).toHaveLength(2);

      const r = await ask('audit.call', { tenant: 'acme', call_id: after.callId });
      expect(r.status).toBe('requested');
      const archived = await ask('audit.events', { tenant: 'acme', call_id: after.callId });
      expect(archived.events).toHaveLength(1);
    }, 30_000);
  });

  describe('rebuild', () => {
    it.each(['call_records', 'archive_calls'])(
      'rebuilds %s from sequence 1 into exactly the live table',
      async (projection) => {
        const live = projection === 'call_records' ? await callRows() : await archiveRows();
        expect(live.length).toBeGreaterThan(0);
        const reply = await ask('audit.rebuild', { projection });
        expect(reply).toEqual({
          projection,
          stream: callsStream,
          target_seq: (await jsm.streams.info(callsStream)).state.last_seq,
        });
        await waitFor(
          async () => {
            const { projections } = await ask('audit.projections', {});
            const p = projections.find((x) => x.projection === projection)!;
            return !p.rebuilding && p.checkpoint >= reply.target_seq;
          },
          { message: `${projection} to be rebuilt up to sequence ${reply.target_seq}` },
        );
        expect(projection === 'call_records' ? await callRows() : await archiveRows()).toEqual(live);
      },
      30_000,
    );

    it('refuses an unknown projection name', async () => {
      await expect(ask('audit.rebuild', { projection: 'everything' })).rejects.toMatchObject({
        code: 'schema_violation',
      });
    });
  });
});

describe('audit migration 0004: events named by (stream, seq, idx)', () => {
  let database: OpenTestDatabase<AuditDB>;
  let db: Kysely<AuditDB>;
  beforeAll(async () => {
    database = await openTestDatabase();
    db = database.db;
  });
  afterAll(() => database?.drop());

  it('gives every archived event index 0 and keys the archive by (stream, seq, idx)', async () => {
    const before = Object.fromEntries(Object.entries(auditMigrations).filter(([name]) => name < '0004'));
    await migrateSchema(db, AUDIT_SCHEMA, before);
    const row = (seq: number, id: string) => ({
      stream: 'ORMUZ_CALLS',
      seq,
      id,
      type: 'ormuz.toolcall.requested.v1',
      tenant: 'acme',
      subject: 'call_1',
      time: new Date(),
      source: '/ormuz/policy',
      correlation_id: 'c',
      causation_id: 'c',
      schema_version: 1,
      data: '{}',
    });
    await sql`insert into audit.events (stream, seq, id, type, tenant, subject, time, source, correlation_id, causation_id, schema_version, data)
      values ${sql.join(
        [row(1, 'e-1'), row(2, 'e-2')].map(
          (r) =>
            sql`(${r.stream}, ${r.seq}, ${r.id}, ${r.type}, ${r.tenant}, ${r.subject}, ${r.time}, ${r.source}, ${r.correlation_id}, ${r.causation_id}, ${r.schema_version}, ${r.data}::jsonb)`,
        ),
      )}`.execute(db);

    const through0004 = Object.fromEntries(Object.entries(auditMigrations).filter(([name]) => name < '0005'));
    expect(await migrateSchema(db, AUDIT_SCHEMA, through0004)).toEqual(['0004_event_index']);
    const t = db.withSchema(AUDIT_SCHEMA);
    expect(await t.selectFrom('events').select(['seq', 'idx', 'id']).orderBy('seq').execute()).toEqual([
      { seq: 1, idx: 0, id: 'e-1' },
      { seq: 2, idx: 0, id: 'e-2' },
    ]);
    const pk = await sql<{ column_name: string }>`
      select a.attname as column_name from pg_index i
      join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
      where i.indrelid = 'audit.events'::regclass and i.indisprimary
      order by array_position(i.indkey, a.attnum)`.execute(db);
    expect(pk.rows.map((r) => r.column_name)).toEqual(['stream', 'seq', 'idx']);
    // A second event of message 2 is a row of its own; the same place again is not.
    await t
      .insertInto('events')
      // The archive before 0005 has no chain columns.
      .values({ ...row(2, 'e-3'), idx: 1 } as never)
      .execute();
    await expect(
      t
        .insertInto('events')
        .values({ ...row(2, 'e-4'), idx: 1 } as never)
        .execute(),
    ).rejects.toMatchObject({
      code: '23505',
    });
  });

  it("migration 0005 links the events archived before it into their tenant's chain", async () => {
    expect(await migrateSchema(db, AUDIT_SCHEMA, auditMigrations)).toEqual([
      '0005_archive_chain',
      '0006_archive_writer_role',
      '0007_call_record_erasure',
      '0008_replay_filters',
      '0009_event_parties',
      '0010_events_in_order',
    ]);
    const rows = await db.withSchema(AUDIT_SCHEMA).selectFrom('events').selectAll().orderBy('chain_pos').execute();
    expect(rows.map((r) => [r.chain_pos, r.id])).toEqual([
      [1, 'e-1'],
      [2, 'e-2'],
      [3, 'e-3'],
    ]);
    let head = EMPTY_CHAIN;
    for (const row of rows) {
      expect(checkLink(row, head)).toBeNull();
      head = { position: row.chain_pos, hash: row.row_hash };
    }
    expect(await db.withSchema(AUDIT_SCHEMA).selectFrom('chain_heads').selectAll().execute()).toEqual([
      { tenant: 'acme', ...head },
    ]);
  });
});

describe("audit migrations 0009 and 0010: each archived row carries its aggregate's agent and device", () => {
  it('fills in the rows archived before it from what each aggregate named first, and indexes them in stream order', async () => {
    // A database of its own, migrated here step by step.
    const database = await openTestDatabase<AuditDB>();
    const db = database.db;
    try {
      const through0008 = Object.fromEntries(Object.entries(auditMigrations).filter(([name]) => name < '0009'));
      await migrateSchema(db, AUDIT_SCHEMA, through0008);
      let seq = 0;
      const row = (tenant: string, subject: string, data: unknown) => {
        seq++;
        return sql`(${'ORMUZ_CALLS'}, ${seq}, 0, ${`e-${seq}`}, ${'t'}, ${tenant}, ${subject}, now(), ${'/s'}, ${'c'}, ${'c'}, 1,
          ${JSON.stringify(data)}::jsonb, ${seq}, ${''}, ${''}, ${''})`;
      };
      const rows = [
        // A device call: its request names the agent and the target; its outcome names neither.
        row('acme', 'call_1', { agent_id: 'agent-7', target: { device_id: 'phone-1' } }),
        row('acme', 'call_1', { request_id: 'r', executor: { kind: 'device', device_id: 'phone-1' } }),
        row('acme', 'call_1', { result: { ok: true } }),
        // A platform call, interleaved: an agent and no device.
        row('acme', 'call_2', { agent_id: 'agent-8', target: null }),
        row('acme', 'call_2', { result: 1 }),
        // Another tenant's aggregate with the same id is its own.
        row('globex', 'call_1', { agent_id: 'agent-9', target: { device_id: 'phone-9' } }),
        // A device's events; an aggregate that names nobody.
        row('acme', 'phone-1', { device_id: 'phone-1', boot_id: 'b' }),
        row('acme', 'op_3', { note: 'nobody' }),
      ];
      await sql`insert into audit.events (stream, seq, idx, id, type, tenant, subject, time, source, correlation_id,
        causation_id, schema_version, data, chain_pos, data_sha256, prev_hash, row_hash) values ${sql.join(rows)}`.execute(
        db,
      );
      const through0009 = Object.fromEntries(Object.entries(auditMigrations).filter(([name]) => name < '0010'));
      expect(await migrateSchema(db, AUDIT_SCHEMA, through0009)).toEqual(['0009_event_parties']);
      const t = db.withSchema(AUDIT_SCHEMA);
      expect(
        await t.selectFrom('events').select(['tenant', 'subject', 'agent_id', 'device_id']).orderBy('seq').execute(),
      ).toEqual([
        { tenant: 'acme', subject: 'call_1', agent_id: 'agent-7', device_id: 'phone-1' },
        { tenant: 'acme', subject: 'call_1', agent_id: 'agent-7', device_id: 'phone-1' },
        { tenant: 'acme', subject: 'call_1', agent_id: 'agent-7', device_id: 'phone-1' },
        { tenant: 'acme', subject: 'call_2', agent_id: 'agent-8', device_id: null },
        { tenant: 'acme', subject: 'call_2', agent_id: 'agent-8', device_id: null },
        { tenant: 'globex', subject: 'call_1', agent_id: 'agent-9', device_id: 'phone-9' },
        { tenant: 'acme', subject: 'phone-1', agent_id: null, device_id: 'phone-1' },
        { tenant: 'acme', subject: 'op_3', agent_id: null, device_id: null },
      ]);
      const indexes = await sql<{ indexname: string }>`
        select indexname from pg_indexes where schemaname = ${AUDIT_SCHEMA} and tablename = 'events' order by 1`.execute(
        db,
      );
      const names = indexes.rows.map((r) => r.indexname);
      expect(names).toEqual(expect.arrayContaining(['events_of_agent', 'events_of_device']));
      expect(names).not.toEqual(expect.arrayContaining(['events_by_agent']));
      // A page for one agent is a range of its index, already in stream order (no sort of every event after the cursor).
      // As on a real archive, the agent's events are few among many agents' and other tenants' (on eight rows, walking
      // the primary key is as cheap), and the plans that would hide a missing index column are taken away: a scan of
      // the table and a bitmap scan (which sorts what it finds).
      await sql`insert into audit.events (stream, seq, idx, id, type, tenant, subject, time, source, correlation_id,
        causation_id, schema_version, data, chain_pos, data_sha256, prev_hash, row_hash, agent_id)
        select 'ORMUZ_CALLS', 100 + n, 0, 'filler-' || n, 't', case when n % 10 = 0 then 'acme' else 'globex' end,
          'call_f' || n, now(), '/s', 'c', 'c', 1, '{}'::jsonb, 100 + n, '', '', '',
          case when n % 300 = 0 then 'agent-7' else 'agent-x' || n % 97 end
        from generate_series(1, 50000) n`.execute(db);
      await sql`analyze audit.events`.execute(db);
      const planOf = (where: RawBuilder<boolean>) =>
        db.transaction().execute(async (trx) => {
          await sql`set local enable_seqscan = off`.execute(trx);
          await sql`set local enable_bitmapscan = off`.execute(trx);
          const { rows } = await sql<{ 'QUERY PLAN': string }>`explain select seq, idx, id from audit.events
            where tenant = 'acme' and stream = 'ORMUZ_CALLS' and ${where} and (seq, idx) > (0, 0)
            order by seq, idx limit 100`.execute(trx);
          return rows.map((r) => r['QUERY PLAN']).join('\n');
        });
      const ofAgent = await planOf(sql`agent_id = 'agent-7'`);
      expect(ofAgent).toMatch(/Index (Only )?Scan using events_of_agent/);
      expect(ofAgent).not.toContain('Sort');
      // 0010: a page of every event is a range of events_in_order, in stream order too.
      expect(await migrateSchema(db, AUDIT_SCHEMA, auditMigrations)).toEqual(['0010_events_in_order']);
      const ofAll = await planOf(sql`true`);
      expect(ofAll).toMatch(/Index (Only )?Scan using events_in_order/);
      expect(ofAll).not.toContain('Sort');
    } finally {
      await database.drop();
    }
  });
});
