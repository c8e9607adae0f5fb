/**
 * Several bridge replicas on one namespace and database: a call for a device reaches the replica the device is
 * connected to, whichever replica projects the log; a cancel sent from one replica reaches a device on another; a
 * newer connection on another replica takes the device over; `devices` answers for the whole fleet; when the leader
 * stops, another replica takes over the projection and the sweeper.
 */
import { join } from 'node:path';
import { runSimulatedDevice, type SimulatedDeviceHandle } from '@ormuz/device-sdk';
import { callRpc, type ToolCalls } from '@ormuz/service-kit';
import { waitFor, adminFor } from '@ormuz/testing';
import { DeviceLinkHost } from '../src/index.js';
import {
  authorizeCall,
  startBridge,
  startReplica,
  type BridgeUnderTest,
  type ReplicaUnderTest,
} from './bridge.fixture.js';
import { RawDevice } from './raw-device.fixture.js';

const TENANT = 'acme';
const PHONES = ['phone-1', 'phone-2', 'phone-3', 'phone-4'];
const ENV = {
  DEVICE_TOKENS: PHONES.map((p, i) => `${TENANT}:${p}:secret-${i + 1}`).join(','),
  EXECUTION_TIMEOUT_MS: '30000',
};

describe('device-bridge replicas', () => {
  let a: BridgeUnderTest;
  let b: ReplicaUnderTest;
  let calls: ToolCalls;
  const cleanups: (() => Promise<void>)[] = [];

  const status = async (callId: string) => (await calls.load(TENANT, callId)).state.status;
  const types = async (callId: string) => (await calls.timeline(TENANT, callId)).map((t) => t.event.type.split('.')[2]);

  beforeAll(async () => {
    a = await startBridge(ENV, 'ormuz-replicas-');
    b = await startReplica(a, ENV);
    calls = a.calls;
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  function phone(deviceId: string, url: string): SimulatedDeviceHandle {
    const handle = runSimulatedDevice({
      url,
      tenant: TENANT,
      deviceId,
      token: `secret-${PHONES.indexOf(deviceId) + 1}`,
      journalDir: join(a.dir, `${deviceId}-${Math.random().toString(36).slice(2)}`),
      backoff: { initialDelayMs: 20, maxDelayMs: 200 },
    });
    cleanups.push(() => handle.close());
    return handle;
  }

  it('the first replica leads; a call for a device on the other replica is dispatched there and succeeds', async () => {
    const device = phone('phone-1', b.url);
    await waitFor(() => device.client.connected, { message: 'phone-1 welcomed by replica B' });
    expect(b.host.isConnected({ tenant: TENANT, deviceId: 'phone-1' })).toBe(true);

    const { callId } = await authorizeCall(calls, TENANT, 'op-routed', 'device.screen_observe', {}, 'phone-1');
    await waitFor(async () => (await status(callId)) === 'succeeded', { message: 'the routed call succeeded' });
    expect(device.device.history.filter((h) => h.tool === 'device.screen_observe')).toHaveLength(1);
  });

  it('a cancel decided on one replica reaches the device held by another', async () => {
    const device = phone('phone-2', b.url);
    await waitFor(() => device.client.connected, { message: 'phone-2 welcomed by replica B' });
    device.faults.set({ hang: true });
    const { callId } = await authorizeCall(calls, TENANT, 'op-hang', 'device.screen_observe', {}, 'phone-2');
    await waitFor(async () => (await status(callId)) === 'started', { message: 'the hanging call started' });
    // The log says started once the claim is recorded; the grant may still be on its way to the device, and a cancel
    // that overtakes it stops an unanswered claim (not_run). Cancel what the device is running.
    await waitFor(() => device.client.requestState(callId) === 'started', { message: 'the device runs the call' });
    a.svc.app.get(DeviceLinkHost).sendCancel({ tenant: TENANT, deviceId: 'phone-2' }, callId, 'operator cancelled it');
    await waitFor(async () => (await status(callId)) === 'failed', { message: 'the cancelled call failed' });
    expect(await types(callId)).toEqual(['requested', 'authorized', 'dispatched', 'started', 'failed']);
    const failed = (await calls.timeline(TENANT, callId)).at(-1)!.event.data as { error: { code: string } };
    expect(failed.error.code).toBe('cancelled');
  });

  it('a newer connection on another replica takes the device over; devices lists the fleet', async () => {
    const first = await RawDevice.connect(a.url);
    cleanups.push(() => first.close());
    first.hello(TENANT, 'phone-3', 'secret-3', 'boot-a');
    await waitFor(() => first.frame('welcome'), { message: 'welcome on A' });
    const other = phone('phone-4', b.url);
    await waitFor(() => other.client.connected, { message: 'phone-4 on B' });

    const second = await RawDevice.connect(b.url);
    cleanups.push(() => second.close());
    second.hello(TENANT, 'phone-3', 'secret-3', 'boot-a');
    await waitFor(() => second.frame('welcome'), { message: 'welcome on B' });
    await waitFor(() => first.closed, { message: 'the older connection on A closed' });
    expect(first.frame('error')?.code).toBe('replaced');

    const { devices } = await adminFor({ tenant: TENANT }).then((credential) =>
      callRpc(
        a.svc.infra.nc,
        a.namespace,
        'device-bridge.devices',
        { tenant: TENANT },
        { credential, checkReply: true },
      ),
    );
    expect(devices.map((d) => d.device_id)).toEqual(['phone-3', 'phone-4']);
    expect(new Set(devices.map((d) => d.replica)).size).toBe(1);
    expect(devices[0]!.replica).toBe(b.host.routes.replicaId);
  });

  it('when the leader stops, the other replica takes over the projection and dispatches', async () => {
    const device = phone('phone-1', b.url);
    await waitFor(() => device.client.connected, { message: 'phone-1 on B' });
    await a.svc.close();
    const { callId } = await authorizeCall(b.calls, TENANT, 'op-failover', 'device.screen_observe', {}, 'phone-1');
    await waitFor(async () => (await b.calls.load(TENANT, callId)).state.status === 'succeeded', {
      message: 'the call succeeded after the failover',
      timeoutMs: 15_000,
    });
  });
});
