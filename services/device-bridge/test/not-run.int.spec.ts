/**
 * A device restarts while one granted call runs and another waits behind it. Both were started on the log, so both
 * become outcome_unknown when the connection drops. The running one stays unknown: its journal says it started. The waiting one never
 * began: its journal holds the claim and no start, the new boot seals it at the bridge's request, and the bridge
 * records the definite outcome `not_run`. Nothing runs twice, and nothing is said to have run that did not.
 */
import { runSimulatedDevice, type SimulatedDeviceHandle } from '@ormuz/device-sdk';
import type { ToolCalls } from '@ormuz/service-kit';
import { waitFor } from '@ormuz/testing';
import { authorizeCall, startBridge, type BridgeUnderTest } from './bridge.fixture.js';

const TENANT = 'acme';

describe('a claimed call the device never began', () => {
  let bridge: BridgeUnderTest;
  let calls: ToolCalls;
  let handle: SimulatedDeviceHandle | undefined;

  beforeAll(async () => {
    bridge = await startBridge({ DEVICE_TOKENS: `${TENANT}:phone-1:secret-1` }, 'ormuz-not-run-');
    calls = bridge.calls;
  });
  afterAll(async () => {
    await handle?.close();
    await bridge.close();
  });

  const state = async (callId: string) => (await calls.load(TENANT, callId)).state;

  it('is recorded as not run after a restart, while the interrupted one stays unknown', async () => {
    handle = runSimulatedDevice({
      url: bridge.url,
      tenant: TENANT,
      deviceId: 'phone-1',
      token: 'secret-1',
      journalDir: bridge.dir,
      backoff: { initialDelayMs: 20, maxDelayMs: 200 },
    });
    await waitFor(() => handle!.client.connected, { message: 'connected' });
    handle.faults.set({ hang: true, once: true });
    const running = (
      await authorizeCall(calls, TENANT, 'op-running', 'device.list_contacts', { name_query: 'Alice' }, 'phone-1')
    ).callId;
    await waitFor(async () => (await state(running)).status === 'started', { message: 'the first call started' });
    const waiting = (
      await authorizeCall(calls, TENANT, 'op-waiting', 'device.list_contacts', { name_query: 'Bob' }, 'phone-1')
    ).callId;
    await waitFor(async () => (await state(waiting)).status === 'started', { message: 'the second call granted' });
    expect(handle.client.journalEntry(waiting)?.state).toBe('claimed');

    await handle.reboot();

    // A reboot, a reconnect and the journal's report: seconds on a loaded machine.
    await waitFor(async () => (await state(waiting)).status === 'failed', {
      message: 'the waiting call settled as not run',
      timeoutMs: 30_000,
    });
    const settled = (await state(waiting)) as unknown as {
      outcome: { error: { code: string } };
      unknown: { cause: string } | null;
    };
    expect(settled.outcome.error.code).toBe('not_run');
    // The crash cut the connection first; the unknown mark stays beside the definite outcome.
    expect(settled.unknown?.cause).toBe('connection_lost');
    expect(handle.client.journalEntry(waiting)?.state).toBe('sealed');

    await waitFor(async () => (await state(running)).status === 'outcome_unknown', {
      message: 'the running call unknown',
      timeoutMs: 30_000,
    });
    expect(handle.client.requestState(running)).toBe('interrupted');
    // Neither ran to completion on the device, and the waiting one never began.
    expect(handle.device.history.filter((h) => h.tool === 'device.list_contacts')).toHaveLength(0);
    const types = (await calls.timeline(TENANT, waiting)).map((t) => t.event.type.split('.')[2]);
    expect(types).toEqual(['requested', 'authorized', 'dispatched', 'started', 'outcome_unknown', 'failed']);
  });
});
