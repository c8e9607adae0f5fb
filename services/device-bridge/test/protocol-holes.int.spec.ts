/**
 * The bridge's answers to a device that names requests it does not hold, sends ids that are not ids, announces a
 * window, or comes back holding a claim it never began: refused with a frame that says so and recorded, never
 * acknowledged; every frame answered; a call the device's journal proves it never began recorded as not run.
 */
import { DeviceEventType, type DeviceFrame, type ErrorFrameV1, type ReportRefusedV1 } from '@ormuz/contracts';
import type { ToolCalls } from '@ormuz/service-kit';
import { waitFor } from '@ormuz/testing';
import { sql } from 'kysely';
import { DEVICE_BRIDGE_SCHEMA, DeviceEventsRecorder } from '../src/index.js';
import { authorizeCall, startBridge, type BridgeUnderTest } from './bridge.fixture.js';
import { RawDevice } from './raw-device.fixture.js';

const TENANT = 'acme';
const OTHER_TENANT = 'globex';

describe('protocol holes', () => {
  let bridge: BridgeUnderTest;
  let calls: ToolCalls;
  const devices: RawDevice[] = [];
  let op = 0;

  beforeAll(async () => {
    bridge = await startBridge(
      {
        DEVICE_TOKENS: `${TENANT}:phone-1:secret-1,${TENANT}:phone-2:secret-2,${OTHER_TENANT}:phone-1:secret-3,${TENANT}:phone-w:secret-w`,
      },
      'ormuz-holes-',
    );
    calls = bridge.calls;
  });
  afterEach(async () => {
    for (const d of devices.splice(0)) await d.close();
  });
  afterAll(() => bridge.close());

  const state = async (tenant: string, callId: string) => (await calls.load(tenant, callId)).state;
  /** The call's status in the bridge's read model, once projected. */
  const projected = async (tenant: string, callId: string) => {
    const { rows } = await sql<{ status: string }>`
      select status from ${sql.table(`${DEVICE_BRIDGE_SCHEMA}.executions`)} where tenant = ${tenant} and call_id = ${callId}`.execute(
      bridge.svc.infra.db,
    );
    return rows[0]?.status;
  };

  async function connect(
    tenant: string,
    deviceId: string,
    token: string,
    extra: { bootId?: string; maxInFlight?: number } = {},
  ): Promise<RawDevice> {
    const device = await RawDevice.connect(bridge.url);
    devices.push(device);
    device.send({
      type: 'hello',
      device_id: deviceId,
      tenant,
      boot_id: extra.bootId ?? 'boot-1',
      protocol_version: 1,
      policy_version: null,
      token,
      ...(extra.maxInFlight === undefined ? {} : { max_in_flight: extra.maxInFlight }),
    });
    await waitFor(() => device.frame('welcome'), { message: `${deviceId} welcomed` });
    return device;
  }

  const authorize = (tenant: string, deviceId: string) =>
    authorizeCall(calls, tenant, `op-holes-${++op}`, 'device.screen_observe', {}, deviceId);

  async function refusals(deviceId: string): Promise<ReportRefusedV1[]> {
    return (await bridge.svc.app.get(DeviceEventsRecorder).history(TENANT, deviceId))
      .map((r) => r.event)
      .filter((e) => e.type === DeviceEventType.ReportRefused)
      .map((e) => e.data as ReportRefusedV1);
  }

  /**
   * The answers to what `send` sends: the frames that arrive until a probe (a second hello) is answered, which the
   * bridge answers only after everything sent before it. Commands the bridge sends on its own (submits of the
   * device's calls, status queries) are left out unless `all`.
   */
  async function answersTo(device: RawDevice, send: () => void, all = false): Promise<DeviceFrame[]> {
    const from = device.frames.length;
    send();
    device.send({
      type: 'hello',
      device_id: 'x',
      tenant: 'x',
      boot_id: 'x',
      protocol_version: 1,
      policy_version: null,
      token: 'x',
    });
    const isProbeAnswer = (f: DeviceFrame) =>
      f.type === 'error' && f.code === 'unexpected_frame' && f.message.includes('already said hello');
    await waitFor(() => device.frames.slice(from).some(isProbeAnswer), { message: 'the probe answered' });
    const commands = new Set(['submit', 'status_query', 'seal', 'cancel']);
    return device.frames.slice(from).filter((f) => !isProbeAnswer(f) && (all || !commands.has(f.type)));
  }

  describe('reports for requests the device does not hold', () => {
    it('refuses a claim and an outcome for an id nobody has, and records both', async () => {
      const device = await connect(TENANT, 'phone-1', 'secret-1');
      const claim = await answersTo(device, () => device.send({ type: 'start_claim', request_id: 'no-such-call' }));
      expect(claim).toEqual([
        expect.objectContaining({ type: 'start_refused', request_id: 'no-such-call', reason: 'unknown_request' }),
      ]);
      const outcome = await answersTo(device, () =>
        device.send({ type: 'outcome', request_id: 'no-such-call', status: 'succeeded', result: { ok: true } }),
      );
      expect(outcome).toEqual([
        expect.objectContaining({ type: 'error', code: 'unknown_request', request_id: 'no-such-call', fatal: false }),
      ]);
      await waitFor(
        async () => (await refusals('phone-1')).filter((r) => r.request_id === 'no-such-call').length === 2,
        {
          message: 'both refusals recorded',
        },
      );
      expect((await refusals('phone-1')).filter((r) => r.request_id === 'no-such-call')).toEqual([
        expect.objectContaining({ frame_type: 'start_claim', reason: 'unknown_request', assigned_device_id: null }),
        expect.objectContaining({ frame_type: 'outcome', reason: 'unknown_request', assigned_device_id: null }),
      ]);
    });

    it("refuses an outcome for another tenant's call as unknown and leaves that call alone", async () => {
      const { callId } = await authorize(OTHER_TENANT, 'phone-1');
      const device = await connect(TENANT, 'phone-1', 'secret-1');
      const answers = await answersTo(device, () =>
        device.send({ type: 'outcome', request_id: callId, status: 'succeeded', result: {} }),
      );
      expect(answers).toEqual([
        expect.objectContaining({ type: 'error', code: 'unknown_request', request_id: callId }),
      ]);
      expect(answers.some((f) => f.type === 'outcome_ack')).toBe(false);
      expect((await state(OTHER_TENANT, callId)).status).toBe('authorized');
    });

    it("refuses another device's call as not assigned, claim and outcome alike", async () => {
      const { callId } = await authorize(TENANT, 'phone-2');
      await waitFor(async () => (await projected(TENANT, callId)) === 'ready', { message: 'the call projected' });
      const device = await connect(TENANT, 'phone-1', 'secret-1');
      const answers = await answersTo(device, () => {
        device.send({ type: 'start_claim', request_id: callId });
        device.send({
          type: 'outcome',
          request_id: callId,
          status: 'failed',
          error: { code: 'x', message: 'made up' },
        });
      });
      expect(answers).toEqual([
        expect.objectContaining({ type: 'start_refused', request_id: callId, reason: 'not_assigned' }),
        expect.objectContaining({ type: 'error', code: 'not_assigned', request_id: callId }),
      ]);
      expect((await state(TENANT, callId)).status).toBe('authorized');
    });

    it('refuses the outcome of its own call that was never granted a start, and records it', async () => {
      const device = await connect(TENANT, 'phone-1', 'secret-1');
      const { callId } = await authorize(TENANT, 'phone-1');
      await waitFor(() => device.frame('submit', callId), { message: 'the submit' });
      const answers = await answersTo(device, () =>
        device.send({ type: 'outcome', request_id: callId, status: 'succeeded', result: {} }),
      );
      expect(answers).toEqual([expect.objectContaining({ type: 'error', code: 'not_started', request_id: callId })]);
      expect((await state(TENANT, callId)).status).toBe('dispatched');
      await waitFor(
        async () => (await refusals('phone-1')).some((r) => r.request_id === callId && r.reason === 'not_started'),
        {
          message: 'the not_started refusal recorded',
        },
      );
    });
  });

  describe('frames that are not what they claim', () => {
    it('answers a frame whose request id is not an id, without echoing it as one', async () => {
      const device = await connect(TENANT, 'phone-1', 'secret-1');
      for (const bad of ['a.b>', '', 'x'.repeat(300), 'ok\u0000', '*']) {
        const answers = await answersTo(device, () => {
          device.ws.send(
            JSON.stringify({
              v: 1,
              seq: device.codec.lastSentSeq + 1,
              type: 'outcome',
              request_id: bad,
              status: 'succeeded',
              result: 1,
            }),
          );
          // The raw send bypassed the codec's numbering; keep it ahead for the probe.
          device.codec.encode({ type: 'heartbeat' });
        });
        expect(answers).toHaveLength(1);
        const error = answers[0] as ErrorFrameV1;
        expect(error).toMatchObject({ type: 'error', code: 'schema', fatal: false });
        expect(error.request_id).toBeUndefined();
      }
    });

    it('answers a frame of an unknown, enormous type with a message that still fits its frame', async () => {
      const device = await connect(TENANT, 'phone-1', 'secret-1');
      const answers = await answersTo(device, () => {
        device.ws.send(JSON.stringify({ v: 1, seq: device.codec.lastSentSeq + 1, type: 't'.repeat(100_000) }));
        device.codec.encode({ type: 'heartbeat' });
      });
      expect(answers).toEqual([expect.objectContaining({ type: 'error', code: 'unknown_type' })]);
      expect((answers[0] as ErrorFrameV1).message.length).toBeLessThanOrEqual(4096);
    });
  });

  describe('flow control', () => {
    it('keeps to the window a device announces and sends the next call as one finishes', async () => {
      const ids = [];
      for (let i = 0; i < 5; i++) ids.push((await authorize(TENANT, 'phone-w')).callId);
      const device = await connect(TENANT, 'phone-w', 'secret-w', { maxInFlight: 2 });
      expect(device.frame('welcome')?.max_in_flight).toBe(2);
      const submits = () =>
        device.frames.filter((f) => f.type === 'submit').map((f) => (f as { request_id: string }).request_id);
      await waitFor(() => submits().length === 2, { message: 'two submits' });
      // Status queries and resends would go through the same window; nothing more arrives while both are held.
      const held = await answersTo(device, () => undefined, true);
      expect(held.filter((f) => f.type === 'submit')).toEqual([]);
      expect(submits()).toHaveLength(2);

      const first = submits()[0]!;
      device.send({ type: 'start_claim', request_id: first });
      await waitFor(() => device.frame('start_granted', first), { message: 'the grant' });
      expect(submits()).toHaveLength(2);
      device.send({ type: 'outcome', request_id: first, status: 'succeeded', result: { done: true } });
      await waitFor(() => device.frame('outcome_ack', first), { message: 'the ack' });
      await waitFor(() => submits().length === 3, { message: 'the third submit once a slot freed' });
      // A refused submit frees its slot too.
      const second = submits()[1]!;
      device.send({
        type: 'error',
        code: 'payload_mismatch',
        message: 'bytes differ',
        fatal: false,
        request_id: second,
      });
      await waitFor(() => submits().length === 4, { message: 'the fourth submit' });
      expect(new Set(submits()).size).toBe(4);
      expect(ids).toEqual(expect.arrayContaining(submits()));
    });

    it('gives a device that announces nothing the default window and a welcome it can read', async () => {
      const device = await connect(TENANT, 'phone-2', 'secret-2');
      expect(device.frame('welcome')).not.toHaveProperty('max_in_flight');
      expect(bridge.svc.app.get(DeviceEventsRecorder)).toBeDefined();
    });
  });

  describe('a claim the device never began', () => {
    async function startedThenLost(bootId: string) {
      const device = await connect(TENANT, 'phone-1', 'secret-1', { bootId });
      const { callId, sha256 } = await authorize(TENANT, 'phone-1');
      await waitFor(() => device.frame('submit', callId), { message: 'the submit' });
      device.send({ type: 'start_claim', request_id: callId });
      await waitFor(() => device.frame('start_granted', callId), { message: 'the grant' });
      await device.close();
      await waitFor(async () => (await state(TENANT, callId)).status === 'outcome_unknown', {
        message: 'outcome unknown after the drop',
      });
      return { callId, sha256 };
    }

    it('records not_run when the journal proves the claimed call was sealed before it began', async () => {
      const { callId, sha256 } = await startedThenLost('boot-nr');
      const back = await connect(TENANT, 'phone-1', 'secret-1', { bootId: 'boot-nr' });
      await waitFor(() => back.frame('status_query', callId), { message: 'the status query' });
      // The journal holds the claim but no grant: the bridge asks it to seal, and it does.
      back.send({ type: 'status_report', request_id: callId, state: 'claimed', payload_sha256: sha256 });
      await waitFor(() => back.frame('seal', callId), { message: 'the seal request' });
      back.send({ type: 'status_report', request_id: callId, state: 'sealed', payload_sha256: sha256 });
      await waitFor(async () => (await state(TENANT, callId)).status === 'failed', { message: 'the not_run outcome' });
      const final = (await state(TENANT, callId)) as unknown as {
        outcome: { error: { code: string; message: string } };
        unknown: { cause: string };
      };
      expect(final.outcome.error.code).toBe('not_run');
      expect(final.outcome.error.message).toMatch(/Nothing was done/);
      // The unknown mark stays beside the outcome: the record shows both what was uncertain and what settled it.
      expect(final.unknown.cause).toBe('connection_lost');
    });

    it('asks only once per connection, and records nothing on a report without the payload it claimed', async () => {
      const { callId } = await startedThenLost('boot-nr2');
      const back = await connect(TENANT, 'phone-1', 'secret-1', { bootId: 'boot-nr2' });
      await waitFor(() => back.frame('status_query', callId), { message: 'the status query' });
      back.send({ type: 'status_report', request_id: callId, state: 'claimed' });
      await waitFor(() => back.frame('seal', callId), { message: 'the seal request' });
      back.send({ type: 'status_report', request_id: callId, state: 'claimed' });
      // A journal that never held this request proves nothing about it (it may have been wiped).
      back.send({ type: 'status_report', request_id: callId, state: 'sealed' });
      await answersTo(back, () => undefined);
      expect(back.frames.filter((f) => f.type === 'seal')).toHaveLength(1);
      expect((await state(TENANT, callId)).status).toBe('outcome_unknown');
    });

    it('records not_run when the journal shows the claim refused', async () => {
      const { callId, sha256 } = await startedThenLost('boot-nr3');
      const back = await connect(TENANT, 'phone-1', 'secret-1', { bootId: 'boot-nr3' });
      // Claiming again after the loss is refused: the call may have run, so it never runs twice.
      const answers = await answersTo(back, () => back.send({ type: 'start_claim', request_id: callId }));
      expect(answers.find((f) => f.type === 'start_refused')).toMatchObject({ reason: 'already_started' });
      back.send({
        type: 'status_report',
        request_id: callId,
        state: 'refused',
        payload_sha256: sha256,
        reason: { code: 'already_started', message: 'refused' },
      });
      await waitFor(async () => (await state(TENANT, callId)).status === 'failed', { message: 'the not_run outcome' });
    });
  });
});
