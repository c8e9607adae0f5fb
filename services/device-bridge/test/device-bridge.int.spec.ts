/**
 * The bridge wired to the log: the tracked execution protocol against real NATS, Postgres and WebSocket, with the
 * call's lifecycle appended through the same decider policy uses.
 */
import { join } from 'node:path';
import { runSimulatedDevice, type SimulatedDeviceHandle } from '@ormuz/device-sdk';
import type { RunningService, ToolCalls } from '@ormuz/service-kit';
import { waitFor } from '@ormuz/testing';
import { DeviceEventsRecorder } from '../src/index.js';
import { authorizeCall, startBridge, type BridgeUnderTest } from './bridge.fixture.js';
import { RawDevice } from './raw-device.fixture.js';

const TENANT = 'acme';

describe('device-bridge', () => {
  let bridge: BridgeUnderTest;
  let svc: RunningService;
  let calls: ToolCalls;
  let url: string;
  let dir: string;
  const cleanups: (() => Promise<void>)[] = [];
  const cause = { correlationid: 'test', causationid: 'test' };

  /** Records and authorizes a call for `deviceId`, as policy would. */
  const authorize = async (operation: string, tool: string, args: Record<string, unknown>, deviceId = 'phone-1') =>
    (await authorizeCall(calls, TENANT, operation, tool, args, deviceId)).callId;

  const status = async (callId: string) => (await calls.load(TENANT, callId)).state.status;

  beforeAll(async () => {
    bridge = await startBridge(
      { DEVICE_TOKENS: `${TENANT}:phone-1:secret-1,${TENANT}:phone-2:secret-2`, OFFLINE_DEADLINE_MS: '1500' },
      'ormuz-bridge-',
    );
    ({ svc, calls, url, dir } = bridge);
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  afterAll(() => bridge.close());

  function phone(deviceId = 'phone-1', token = 'secret-1'): SimulatedDeviceHandle {
    const handle = runSimulatedDevice({
      url,
      tenant: TENANT,
      deviceId,
      token,
      journalDir: join(dir, `${deviceId}-${Math.random().toString(36).slice(2)}`),
      backoff: { initialDelayMs: 20, maxDelayMs: 200 },
    });
    cleanups.push(() => handle.close());
    return handle;
  }

  async function raw(deviceId = 'phone-1', token = 'secret-1', bootId = 'boot-1'): Promise<RawDevice> {
    const device = await RawDevice.connect(url);
    cleanups.push(() => device.close());
    device.hello(TENANT, deviceId, token, bootId);
    await waitFor(() => device.frame('welcome') !== undefined, { message: 'welcome' });
    return device;
  }

  it('runs an authorized call once on the connected device and records the real outcome', async () => {
    const handle = phone();
    const callId = await authorize('op-run', 'device.list_contacts', { name_query: 'Alice' });
    await waitFor(async () => (await status(callId)) === 'succeeded', { message: 'the call to succeed' });
    const types = (await calls.timeline(TENANT, callId)).map((t) => t.event.type.split('.')[2]);
    expect(types).toEqual(['requested', 'authorized', 'dispatched', 'started', 'succeeded']);
    expect(handle.device.history.filter((h) => h.tool === 'device.list_contacts')).toHaveLength(1);
  });

  it('keeps a call for an offline device until it connects, then dispatches it', async () => {
    const callId = await authorize('op-offline', 'device.screen_observe', {}, 'phone-2');
    await new Promise((r) => setImmediate(r));
    expect(await status(callId)).toBe('authorized');
    phone('phone-2', 'secret-2');
    await waitFor(async () => (await status(callId)) === 'succeeded', { message: 'the call to run after connecting' });
  });

  it('refuses a start claim that arrives after a seal: the device is told, nothing runs', async () => {
    const device = await raw();
    const callId = await authorize('op-sealed', 'device.screen_observe', {});
    await waitFor(() => device.frame('submit', callId) !== undefined, { message: 'the submit frame' });
    await calls.execute(TENANT, callId, { type: 'SealCall', data: { call_id: callId, sealed_by: 'ops@acme', reason: 'test' } }, cause);
    device.send({ type: 'start_claim', request_id: callId });
    await waitFor(() => device.frame('start_refused', callId) !== undefined, { message: 'the refusal' });
    expect(device.frame('start_refused', callId)).toMatchObject({ reason: 'sealed' });
    expect(device.frame('start_granted', callId)).toBeUndefined();
    expect(await status(callId)).toBe('sealed');
  });

  it('tells the device when a call it holds is sealed before it started', async () => {
    const device = await raw();
    const callId = await authorize('op-sealed-told', 'device.screen_observe', {});
    await waitFor(() => device.frame('submit', callId) !== undefined, { message: 'the submit frame' });
    await calls.execute(TENANT, callId, { type: 'SealCall', data: { call_id: callId, sealed_by: 'ops@acme', reason: 'test' } }, cause);
    await waitFor(() => device.frame('seal', callId) !== undefined, { message: 'the seal frame' });
  });

  it('marks a started call outcome_unknown when the connection drops, and still records the late real outcome', async () => {
    const first = await raw();
    const callId = await authorize('op-drop', 'device.screen_observe', {});
    await waitFor(() => first.frame('submit', callId) !== undefined, { message: 'the submit frame' });
    first.send({ type: 'start_claim', request_id: callId });
    await waitFor(() => first.frame('start_granted', callId) !== undefined, { message: 'the grant' });
    await first.close();
    await waitFor(async () => (await status(callId)) === 'outcome_unknown', { message: 'outcome_unknown' });
    const unknown = (await calls.load(TENANT, callId)).state;
    expect(unknown).toMatchObject({ unknown: { cause: 'connection_lost' } });

    const again = await raw();
    again.send({ type: 'outcome', request_id: callId, status: 'succeeded', result: { screen: 'home' } } as never);
    await waitFor(() => again.frame('outcome_ack', callId) !== undefined, { message: 'the ack' });
    expect(await status(callId)).toBe('succeeded');
  });

  it('refuses, does not acknowledge and records a claim and an outcome a device reports for another device’s request', async () => {
    const owner = await raw('phone-1', 'secret-1');
    const callId = await authorize('op-other', 'device.screen_observe', {});
    await waitFor(() => owner.frame('submit', callId) !== undefined, { message: 'the submit frame' });
    owner.send({ type: 'start_claim', request_id: callId });
    await waitFor(() => owner.frame('start_granted', callId) !== undefined, { message: 'the grant' });
    const intruder = await raw('phone-2', 'secret-2');
    intruder.send({ type: 'start_claim', request_id: callId });
    await waitFor(() => intruder.frame('start_refused', callId) !== undefined, { message: 'the refusal' });
    expect(intruder.frame('start_refused', callId)).toMatchObject({ reason: 'not_assigned' });
    intruder.send({ type: 'outcome', request_id: callId, status: 'succeeded', result: { forged: true } } as never);
    await waitFor(() => intruder.frame('outcome_ack', callId) !== undefined || intruder.frame('error') !== undefined, {
      message: 'an answer to the forged outcome',
    });
    expect(intruder.frame('outcome_ack', callId)).toBeUndefined();
    expect(intruder.frame('error', callId)).toMatchObject({ code: 'not_assigned', fatal: false });
    expect(intruder.closed).toBe(false);
    expect(await status(callId)).toBe('started');
    // Recorded on the intruder's subject of the devices stream, which audit archives.
    const refused = (await svc.app.get(DeviceEventsRecorder).history(TENANT, 'phone-2'))
      .map((r) => r.event)
      .filter((e) => e.type === 'ormuz.device.report_refused.v1');
    expect(refused.map((e) => (e.data as { frame_type: string }).frame_type)).toEqual(['start_claim', 'outcome']);
    expect(refused[0]).toMatchObject({
      tenant: TENANT,
      correlationid: callId,
      data: { device_id: 'phone-2', request_id: callId, assigned_device_id: 'phone-1', reason: 'not_assigned' },
    });
  });

  it('asks a reconnecting device about its unsettled calls and records the late failure its journal reports', async () => {
    const first = await raw();
    const callId = await authorize('op-journal', 'device.screen_observe', {});
    await waitFor(() => first.frame('submit', callId) !== undefined, { message: 'the submit frame' });
    first.send({ type: 'start_claim', request_id: callId });
    await waitFor(() => first.frame('start_granted', callId) !== undefined, { message: 'the grant' });
    await first.close();
    await waitFor(async () => (await status(callId)) === 'outcome_unknown', { message: 'outcome_unknown' });

    const again = await raw();
    await waitFor(() => again.frame('status_query', callId) !== undefined, { message: 'the status query' });
    expect(again.frame('submit', callId)).toBeUndefined();
    again.send({ type: 'status_report', request_id: callId, state: 'failed', reason: { code: 'foreground_changed', message: 'nothing tapped' } });
    await waitFor(async () => (await status(callId)) === 'failed', { message: 'the late failure' });
    expect((await calls.load(TENANT, callId)).state).toMatchObject({
      outcome: { kind: 'failed', error: { code: 'foreground_changed' } },
      unknown: { cause: 'connection_lost' },
    });
  });

  it('seals a dispatched call the device rejected before claiming, with the device’s reason', async () => {
    const device = await raw();
    const callId = await authorize('op-rejected', 'device.screen_observe', {});
    await waitFor(() => device.frame('submit', callId) !== undefined, { message: 'the submit frame' });
    device.send({ type: 'status_report', request_id: callId, state: 'rejected', reason: { code: 'package_denied', message: 'banking app' } });
    await waitFor(async () => (await status(callId)) === 'sealed', { message: 'the seal' });
    const state = (await calls.load(TENANT, callId)).state as unknown as { seal: { sealed_by: string; reason: string } };
    expect(state.seal.sealed_by).toBe('device-bridge');
    expect(state.seal.reason).toContain('package_denied');
    const types = (await calls.timeline(TENANT, callId)).map((t) => t.event.type.split('.')[2]);
    expect(types).not.toContain('started');
  });

  it('records a run the journal reports interrupted as outcome_unknown (reboot), and a status report never runs anything', async () => {
    const device = await raw();
    const callId = await authorize('op-interrupted', 'device.screen_observe', {});
    await waitFor(() => device.frame('submit', callId) !== undefined, { message: 'the submit frame' });
    // A journal report for a call that is only dispatched changes nothing.
    device.send({ type: 'status_report', request_id: callId, state: 'succeeded' });
    device.send({ type: 'start_claim', request_id: callId });
    await waitFor(() => device.frame('start_granted', callId) !== undefined, { message: 'the grant' });
    expect(await status(callId)).toBe('started');
    device.send({ type: 'status_report', request_id: callId, state: 'interrupted' });
    await waitFor(async () => (await status(callId)) === 'outcome_unknown', { message: 'outcome_unknown' });
    expect((await calls.load(TENANT, callId)).state).toMatchObject({ unknown: { cause: 'reboot' } });
  });

  it('seals an authorized call whose device stays offline past its deadline', async () => {
    const callId = await authorize('op-never', 'device.screen_observe', {}, 'phone-never');
    expect(await status(callId)).toBe('authorized');
    await waitFor(async () => (await status(callId)) === 'sealed', { message: 'the offline seal', timeoutMs: 8000 });
    expect((await calls.load(TENANT, callId)).state).toMatchObject({
      seal: { sealed_by: 'device-bridge', reason: 'device offline past its deadline' },
    });
  });

  it('refuses a device with a wrong token', async () => {
    const device = await RawDevice.connect(url);
    cleanups.push(() => device.close());
    device.hello(TENANT, 'phone-1', 'wrong');
    await waitFor(() => device.closed, { message: 'the connection to close' });
    expect(device.frame('welcome')).toBeUndefined();
  });
});
