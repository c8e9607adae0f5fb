/**
 * The dispatcher under a backlog: calls waiting for an offline device never hide a call for a connected one, and the
 * waiting calls go out as soon as their device connects. A call that becomes ready for a connected device is
 * dispatched from the projection's committed batch, with the state the batch holds: the bridge never loads it.
 */
import { join } from 'node:path';
import { jest } from '@jest/globals';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { runSimulatedDevice, type SimulatedDeviceHandle } from '@ormuz/device-sdk';
import { EventStore } from '@ormuz/event-log';
import { ToolCalls } from '@ormuz/service-kit';
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
    bridge = await startBridge(
      { DEVICE_TOKENS: `${TENANT}:phone-on:secret-1,${TENANT}:phone-off:secret-2,${TENANT}:phone-direct:secret-3` },
      'ormuz-dispatcher-',
    );
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
    await waitFor(async () => (await status(callId)) === 'succeeded', {
      message: 'the call for the connected device to succeed',
    });
    expect(await status(waiting.at(-1)!)).toBe('authorized');

    phone('phone-off', 'secret-2');
    await waitFor(async () => (await status(waiting.at(-1)!)) === 'succeeded', {
      message: 'the waiting calls to run once their device connects',
      timeoutMs: 30_000,
    });
  });

  it('dispatches a call that became ready from the committed batch, never loading it from the log', async () => {
    const online = phone('phone-direct', 'secret-3');
    await waitFor(() => online.client.connected, { message: 'phone-direct welcomed' });
    // Policy's side with a store of its own, so nothing it appends warms the bridge's cache.
    const { nc, jsm } = bridge.svc.infra;
    const policy = new ToolCalls(
      new EventStore(jetstream(nc), await jetstreamManager(nc)),
      bridge.namespace,
      '/test/policy',
    );
    // The bridge's reads of a call from the log are direct gets on its subject (a warm cache reads nothing).
    const reads = jest.spyOn(jsm.direct, 'getMessage');
    try {
      const { callId } = await authorizeCall(policy, TENANT, 'op-direct', 'device.screen_observe', {}, 'phone-direct');
      await waitFor(async () => (await policy.load(TENANT, callId)).state.status === 'succeeded', {
        message: 'the call to succeed',
      });
      const subject = policy.subject(TENANT, callId);
      const read = (query: unknown) => JSON.stringify(query).includes(`"${subject}"`);
      // Dispatched against the state folded from the batch; the claim and the outcome then find it in the cache.
      expect(reads.mock.calls.filter((args) => read(args[1]))).toEqual([]);
    } finally {
      reads.mockRestore();
    }
  });
});
