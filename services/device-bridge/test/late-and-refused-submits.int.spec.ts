/**
 * What the bridge does with a claim that comes after the call's deadline, a device's refusal of a submit, and
 * progress. The deadline sweeper is slowed down here so the claim, not the sweep, meets the deadline first.
 */
import type { ToolCalls } from '@ormuz/service-kit';
import { waitFor } from '@ormuz/testing';
import { authorizeCall, startBridge, type BridgeUnderTest } from './bridge.fixture.js';
import { RawDevice } from './raw-device.fixture.js';

const TENANT = 'acme';

describe('late claims, refused submits and progress', () => {
  let bridge: BridgeUnderTest;
  let calls: ToolCalls;
  const devices: RawDevice[] = [];

  beforeAll(async () => {
    bridge = await startBridge(
      { DEVICE_TOKENS: `${TENANT}:phone-1:secret-1`, EXECUTION_TIMEOUT_MS: '300', DEVICE_SWEEP_INTERVAL_MS: '3600000' },
      'ormuz-late-',
    );
    calls = bridge.calls;
  });
  afterEach(async () => {
    for (const d of devices.splice(0)) await d.close();
  });
  afterAll(() => bridge.close());

  const status = async (callId: string) => (await calls.load(TENANT, callId)).state.status;
  const seal = async (callId: string) => ((await calls.load(TENANT, callId)).state as unknown as { seal: { sealed_by: string; reason: string } }).seal;

  async function connectedDevice(): Promise<RawDevice> {
    const device = await RawDevice.connect(bridge.url);
    devices.push(device);
    device.hello(TENANT, 'phone-1', 'secret-1');
    await waitFor(() => device.frame('welcome'), { message: 'welcome' });
    return device;
  }

  async function submitted(device: RawDevice, operation: string) {
    const { callId } = await authorizeCall(calls, TENANT, operation, 'device.screen_observe', {}, 'phone-1');
    return { callId, submit: await waitFor(() => device.frame('submit', callId), { message: `the submit of ${operation}` }) };
  }

  it('refuses a claim after the deadline as expired and seals the call; nothing starts', async () => {
    const device = await connectedDevice();
    const { callId, submit } = await submitted(device, 'op-late');
    await waitFor(() => Date.now() > Date.parse(submit.deadline) + 5, { message: 'the deadline passed', intervalMs: 10 });
    device.send({ type: 'start_claim', request_id: callId });
    const refusal = await waitFor(() => device.frame('start_refused', callId), { message: 'the refusal' });
    expect(refusal.reason).toBe('expired');
    expect(device.frame('start_granted', callId)).toBeUndefined();
    expect(await status(callId)).toBe('sealed');
    expect((await seal(callId)).reason).toContain('deadline');
  });

  it("seals a dispatched call whose submit the device refused, with the device's reason", async () => {
    const device = await connectedDevice();
    const { callId } = await submitted(device, 'op-mismatch');
    device.send({ type: 'error', code: 'payload_mismatch', message: 'the bytes do not match their SHA-256', fatal: false, request_id: callId });
    await waitFor(async () => (await status(callId)) === 'sealed', { message: 'the seal' });
    expect(await seal(callId)).toMatchObject({ sealed_by: 'device-bridge', reason: expect.stringContaining('payload_mismatch') });
  });

  it('ignores an error frame that names no request or is not a refusal of a submit', async () => {
    const device = await connectedDevice();
    const { callId } = await submitted(device, 'op-noise');
    device.send({ type: 'error', code: 'internal', message: 'something else went wrong', fatal: false, request_id: callId });
    device.send({ type: 'error', code: 'payload_mismatch', message: 'no request named', fatal: false });
    // A later frame on the same connection is handled after both errors: the call can still start.
    device.send({ type: 'start_claim', request_id: callId });
    await waitFor(() => device.frame('start_refused', callId) ?? device.frame('start_granted', callId), { message: 'the claim answered' });
    expect(device.frame('start_granted', callId)).toBeDefined();
    expect(await status(callId)).toBe('started');
  });

  it('publishes progress of a running call for live observers', async () => {
    const device = await connectedDevice();
    const seen: { request_id: string; stage: string; fraction: number | null }[] = [];
    const sub = bridge.svc.infra.nc.subscribe(`${bridge.namespace}.bridge.progress.${TENANT}.>`, {
      callback: (_err, msg) => {
        seen.push(msg.json());
      },
    });
    try {
      const { callId } = await submitted(device, 'op-progress');
      device.send({ type: 'progress', request_id: callId, stage: 'reading the screen', fraction: 0.5 });
      await waitFor(() => seen.length > 0, { message: 'the progress message' });
      expect(seen[0]).toEqual({ device_id: 'phone-1', request_id: callId, stage: 'reading the screen', fraction: 0.5 });
    } finally {
      sub.unsubscribe();
    }
  });
});
