/**
 * Policy's view of each device's latest observation (`policy.device_screens`), fed by the log: the steps a bridge
 * records (dispatch, start, outcome) are appended here as the bridge would, and taps are submitted to policy.
 */
import { envelope, ToolCallEventType, type JsonValue } from '@ormuz/contracts';
import { openDatabase, migrateSchema } from '@ormuz/postgres';
import { replay } from '@ormuz/event-log';
import { callRpc, ToolCalls, type RunningService } from '@ormuz/service-kit';
import { createTestDatabase, randomNamespace, waitFor, adminFor } from '@ormuz/testing';
import { POLICY_SCHEMA, policyMigrations } from '../src/index.js';
import { deviceScreensProjection, type DeviceScreensDB } from '../src/projections/device-screens.projection.js';
import { startPolicy, type TestPolicy } from './policy.fixture.js';

const MESSAGES = 'com.example.messages';
const row = (n: number, ref: string, role: string, text: string, clickable = true) => ({
  ref,
  role,
  text,
  clickable,
  depth: 0,
  bounds: { left: 40, top: 120 + n * 140, right: 1040, bottom: 240 + n * 140 },
});
/** The compose screen in two pages: the second holds the Send button. */
const PAGE_1 = [
  row(0, 'e1', 'header', 'New message', false),
  row(1, 'e2', 'input', 'Alice Martin'),
  row(2, 'e3', 'input', 'On my way'),
];
const PAGE_2 = [row(3, 'e4', 'button', 'Send'), row(4, 'e5', 'button', 'Back')];
const observation = (elements: ReturnType<typeof row>[], partial: boolean): JsonValue => ({
  foreground_package: MESSAGES,
  screen: 'compose',
  elements,
  total_elements: 5,
  partial,
  ...(partial ? { continuation: 'page-2' } : {}),
});

describe('policy: device screens read model', () => {
  let policy: TestPolicy;
  let svc: RunningService;
  let bridge: ToolCalls;
  const namespace = randomNamespace();
  const cause = { correlationid: 'test', causationid: 'test' };
  let n = 0;

  const submit = (tool: string, args: Record<string, unknown>, device = 'phone-1') =>
    adminFor({
      tenant: 'acme',
      agent_id: 'agent-1',
      tool,
      arguments: args,
      origin: { kind: 'operation', operation_id: `op-${++n}` },
      device_id: device,
    }).then((credential) =>
      callRpc(
        svc.infra.nc,
        namespace,
        'policy.submit',
        {
          tenant: 'acme',
          agent_id: 'agent-1',
          tool,
          arguments: args,
          origin: { kind: 'operation', operation_id: `op-${++n}` },
          device_id: device,
        },
        { credential, checkReply: true },
      ),
    );
  /** Dispatches and starts the call on the device, as the bridge records it. */
  async function start(callId: string, device = 'phone-1') {
    const requestId = `req-${callId.slice(5)}`;
    const deadline = new Date(Date.now() + 60_000).toISOString();
    await bridge.execute(
      'acme',
      callId,
      {
        type: 'DispatchCall',
        data: { call_id: callId, request_id: requestId, executor: { kind: 'device', device_id: device }, deadline },
      },
      cause,
    );
    await bridge.execute(
      'acme',
      callId,
      { type: 'ClaimStart', data: { call_id: callId, request_id: requestId, executor_id: device, boot_id: 'boot-1' } },
      cause,
    );
    return requestId;
  }
  async function run(tool: string, args: Record<string, unknown>, result: JsonValue, device = 'phone-1') {
    const r = await submit(tool, args, device);
    expect(r.status).toBe('authorized');
    const requestId = await start(r.call_id, device);
    await bridge.execute(
      'acme',
      r.call_id,
      {
        type: 'RecordOutcome',
        data: { call_id: r.call_id, request_id: requestId, outcome: { kind: 'succeeded', result } },
      },
      cause,
    );
  }

  beforeAll(async () => {
    policy = await startPolicy(namespace);
    svc = policy.svc;
    bridge = new ToolCalls(svc.infra.store, namespace, '/test/device-bridge');
  });
  afterAll(async () => {
    await policy.stop();
  });

  it('judges a tap by ref without text on an element of a later page of the latest observation', async () => {
    await run('device.screen_observe', { max_elements: 3 }, observation(PAGE_1, true));
    await run('device.screen_observe', { continuation: 'page-2' }, observation(PAGE_2, false));
    const tap = await submit('device.tap', { ref: 'e4', foreground_package: MESSAGES });
    expect(tap).toMatchObject({ status: 'staged', summary: 'Tap "Send" in com.example.messages' });
    const field = await submit('device.tap', { ref: 'e3', foreground_package: MESSAGES });
    expect(field.status).toBe('authorized');
  });

  it('keeps devices apart: another device with no observation gets the next step, not a guess', async () => {
    const tap = await submit('device.tap', { x: 540, y: 600, foreground_package: MESSAGES }, 'phone-2');
    expect(tap.status).toBe('refused');
    expect(tap.message).toMatch(
      /this device has no observation on record; nothing was done\. Call device\.screen_observe/,
    );
  });

  it('treats the observation as stale once a screen action has started after it', async () => {
    const field = await submit('device.tap', { x: 540, y: 460, foreground_package: MESSAGES });
    expect(field.status).toBe('authorized');
    await start(field.call_id);
    const blind = await submit('device.tap', { x: 540, y: 600, foreground_package: MESSAGES });
    expect(blind).toMatchObject({ status: 'refused', message: expect.stringMatching(/device\.tap ran after it/) });
    // A fresh observation makes it judgeable again.
    await run('device.screen_observe', {}, observation([...PAGE_1, ...PAGE_2], false));
    expect((await submit('device.tap', { x: 540, y: 600, foreground_package: MESSAGES })).status).toBe('staged');
  });

  it('rebuilt from sequence 1 into a fresh database, equals the live table', async () => {
    const live = await svc.infra.db
      .withSchema(POLICY_SCHEMA)
      .selectFrom('device_screens')
      .selectAll()
      .orderBy('device_id')
      .execute();
    expect(live).toHaveLength(1);
    const fresh = await createTestDatabase();
    const other = await openDatabase<DeviceScreensDB>({ url: fresh.url });
    try {
      await migrateSchema(other, POLICY_SCHEMA, policyMigrations);
      const projection = deviceScreensProjection(namespace);
      const head = (await svc.infra.jsm.streams.info(projection.stream)).state.last_seq;
      for await (const item of replay(svc.infra.js, {
        stream: projection.stream,
        filterSubject: projection.filterSubject,
      })) {
        if (!item.event) throw new Error(item.error);
        if (item.seq > head) break;
        await other
          .transaction()
          .execute((trx) => projection.apply(trx, item.event, item.seq, { defer: () => undefined }, item.index));
      }
      const rebuilt = await other
        .withSchema(POLICY_SCHEMA)
        .selectFrom('device_screens')
        .selectAll()
        .orderBy('device_id')
        .execute();
      expect(rebuilt).toEqual(live);
    } finally {
      await other.destroy();
      await fresh.drop();
    }
  });

  it('applies both events of one message: a start and its outcome appended together', async () => {
    // The events of one decision are one message and share its sequence; the read model applies both, in order.
    const device = 'phone-3';
    async function startAndFinish(callId: string, result: JsonValue): Promise<number> {
      const requestId = `req-${callId.slice(5)}`;
      const deadline = new Date(Date.now() + 60_000).toISOString();
      await bridge.execute(
        'acme',
        callId,
        {
          type: 'DispatchCall',
          data: { call_id: callId, request_id: requestId, executor: { kind: 'device', device_id: device }, deadline },
        },
        cause,
      );
      const { version } = await bridge.load('acme', callId);
      const at = { source: '/test/device-bridge', tenant: 'acme', subject: callId, ...cause, time: new Date() };
      const appended = await svc.infra.store.append(
        bridge.subject('acme', callId),
        [
          envelope(
            {
              type: ToolCallEventType.Started,
              data: { call_id: callId, request_id: requestId, executor_id: device, boot_id: 'boot-1' },
            },
            at,
          ),
          envelope({ type: ToolCallEventType.Succeeded, data: { call_id: callId, request_id: requestId, result } }, at),
        ],
        version,
      );
      return appended.version;
    }
    /** The device's row once the projection has applied the message at `seq`. */
    const screenAt = (seq: number) =>
      waitFor(async () => {
        const row = await svc.infra.db
          .withSchema(POLICY_SCHEMA)
          .selectFrom('device_screens')
          .selectAll()
          .where('device_id', '=', device)
          .executeTakeFirst();
        return row?.last_seq === seq && row;
      });
    const open = (callId: string) =>
      svc.infra.db.withSchema(POLICY_SCHEMA).selectFrom('screen_calls').select('call_id').where('call_id', '=', callId);

    const observe = await submit('device.screen_observe', { max_elements: 3 }, device);
    const observed = await startAndFinish(observe.call_id, observation(PAGE_1, false));
    expect(await screenAt(observed)).toMatchObject({
      screen: 'compose',
      observed_call_id: observe.call_id,
      changed_by: null,
    });
    expect(await open(observe.call_id).execute()).toEqual([]);

    const tap = await submit('device.tap', { ref: 'e3', foreground_package: MESSAGES }, device);
    expect(tap.status).toBe('authorized');
    const tapped = await startAndFinish(tap.call_id, { tapped: true });
    expect(await screenAt(tapped)).toMatchObject({ observed_call_id: observe.call_id, changed_by: 'device.tap' });
    expect(await open(tap.call_id).execute()).toEqual([]);
  });
});
