/**
 * The dispatcher under a backlog: calls waiting for an offline device never hide a call for a connected one, and the
 * waiting calls go out as soon as their device connects.
 */
import { join } from 'node:path';
import { runSimulatedDevice, type SimulatedDeviceHandle } from '@ormuz/device-sdk';
import type { ToolCalls } from '@ormuz/service-kit';
import { waitFor } from '@ormuz/testing';
import { authorizeCall, startBridge, type BridgeUnderTest } from './bridge.fixture.js';

const TENANT = 'acme';
/** More than the dispatcher reads per query (500). */
const BACKLOG = 520;

describe('device-bridge dispatcher', () => {
  let bridge: BridgeUnderTest;
  let calls: ToolCalls;
  const handles: SimulatedDeviceHandle[] = [];

  beforeAll(async () => {
    bridge = await startBridge({ DEVICE_TOKENS: `${TENANT}:phone-on:secret-1,${TENANT}:phone-off:secret-2` }, 'ormuz-dispatcher-');
    calls = bridge.calls;
  });
  afterAll(async () => {
    await Promise.all(handles.map((h) => h.close()));
    await bridge.close();
  });

  function phone(deviceId: string, token: string): SimulatedDeviceHandle {
    const handle = runSimulatedDevice({
      url: bridge.url,
      tenant: TENANT,
      deviceId,
      token,
      journalDir: join(bridge.dir, deviceId),
      backoff: { initialDelayMs: 20, maxDelayMs: 200 },
    });
    handles.push(handle);
    return handle;
  }

  const status = async (callId: string) => (await calls.load(TENANT, callId)).state.status;

  it('dispatches a call for a connected device behind more waiting calls than one read returns, then the waiting ones', async () => {
    const waiting: string[] = [];
    for (let i = 0; i < BACKLOG; i += 40) {
      const batch = Array.from({ length: Math.min(40, BACKLOG - i) }, (_, j) =>
        authorizeCall(calls, TENANT, `op-waiting-${i + j}`, 'device.screen_observe', {}, 'phone-off'),
      );
      waiting.push(...(await Promise.all(batch)).map((c) => c.callId));
    }
    const online = phone('phone-on', 'secret-1');
    await waitFor(() => online.client.connected, { message: 'phone-on welcomed' });
    const { callId } = await authorizeCall(calls, TENANT, 'op-online', 'device.screen_observe', {}, 'phone-on');
    await waitFor(async () => (await status(callId)) === 'succeeded', { message: 'the call for the connected device to succeed' });
    expect(await status(waiting.at(-1)!)).toBe('authorized');

    phone('phone-off', 'secret-2');
    await waitFor(async () => (await status(waiting.at(-1)!)) === 'succeeded', {
      message: 'the waiting calls to run once their device connects',
      timeoutMs: 30_000,
    });
  });
});
