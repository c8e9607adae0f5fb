/**
 * Faults at every protocol step, against the real bridge, NATS, Postgres and simulated devices: connection drops
 * before the claim, after the grant and after the outcome; a reboot during an action; 100 concurrent duplicate
 * submits; 1,000 seal/start races between two writers that share nothing. The record must never say succeeded unless
 * the device reported success, nothing may run twice, and a seal and a start may never both win.
 */
import { join } from 'node:path';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { runSimulatedDevice, type SimulatedDeviceHandle } from '@ormuz/device-sdk';
import { connectNats, EventStore } from '@ormuz/event-log';
import { ToolCalls, type RunningService } from '@ormuz/service-kit';
import { testEnv, waitFor } from '@ormuz/testing';
import { DEVICE_BRIDGE_SCHEMA, DeviceLinkHost } from '../src/index.js';
import { authorizeCall, startBridge, type BridgeUnderTest } from './bridge.fixture.js';

const TENANT = 'acme';
const PHONES = ['phone-1', 'phone-2', 'phone-3', 'phone-4', 'phone-5'];

describe('device-bridge under faults', () => {
  let bridge: BridgeUnderTest;
  let svc: RunningService;
  let calls: ToolCalls;
  let url: string;
  let dir: string;
  let namespace: string;
  const cleanups: (() => Promise<void>)[] = [];
  const cause = { correlationid: 'test', causationid: 'test' };

  const authorize = (operation: string, tool: string, args: Record<string, unknown>, deviceId: string, via = calls) =>
    authorizeCall(via, TENANT, operation, tool, args, deviceId);

  const status = async (callId: string) => (await calls.load(TENANT, callId)).state.status;
  const types = async (callId: string) => (await calls.timeline(TENANT, callId)).map((t) => t.event.type.split('.')[2]);
  const runs = (handle: SimulatedDeviceHandle, tool: string) => handle.device.history.filter((h) => h.tool === tool).length;

  beforeAll(async () => {
    bridge = await startBridge({ DEVICE_TOKENS: PHONES.map((p, i) => `${TENANT}:${p}:secret-${i + 1}`).join(',') }, 'ormuz-faults-');
    ({ svc, calls, url, dir, namespace } = bridge);
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  afterAll(() => bridge.close());

  /** A simulated phone; `token` may hold a reconnect back (its hello waits for it) to order a test's events. */
  function phone(deviceId: string, token?: () => Promise<string>): SimulatedDeviceHandle {
    const handle = runSimulatedDevice({
      url,
      tenant: TENANT,
      deviceId,
      token: token ?? `secret-${PHONES.indexOf(deviceId) + 1}`,
      journalDir: join(dir, deviceId),
      backoff: { initialDelayMs: 20, maxDelayMs: 200 },
    });
    cleanups.push(() => handle.close());
    return handle;
  }

  /** Samples the call's status until it is final; returns every status seen, in order. */
  async function watch(callId: string, until: (s: string) => boolean, sawDeviceSuccess: () => boolean) {
    const seen: string[] = [];
    await waitFor(
      async () => {
        const s = await status(callId);
        if (seen.at(-1) !== s) seen.push(s);
        // Never succeeded unless the device reported success.
        if (s === 'succeeded') expect(sawDeviceSuccess()).toBe(true);
        return until(s);
      },
      { message: `call ${callId} to settle`, timeoutMs: 15_000 },
    );
    return seen;
  }

  it('drop before the start claim: nothing is started by the drop, the device claims again, one run', async () => {
    const handle = phone('phone-1');
    await waitFor(() => svc.app.get(DeviceLinkHost).isConnected({ tenant: TENANT, deviceId: 'phone-1' }), { message: 'connected' });
    handle.faults.set({ dropBeforeClaim: true, once: true });
    const { callId } = await authorize('op-drop-before-claim', 'device.list_contacts', { name_query: 'Alice' }, 'phone-1');
    await watch(callId, (s) => s === 'succeeded', () => runs(handle, 'device.list_contacts') === 1);
    expect(handle.faults.fired).toEqual([{ fault: 'dropBeforeClaim', requestId: callId }]);
    expect(await types(callId)).toEqual(['requested', 'authorized', 'dispatched', 'started', 'succeeded']);
    expect(runs(handle, 'device.list_contacts')).toBe(1);
  });

  it('drop after the start is granted: outcome_unknown (connection_lost), then the late real outcome from the journal, one run', async () => {
    // The second hello waits until the bridge has handled the drop: a device back before the close is handled is
    // reachable, and its new connection reconciles the call without an outcome_unknown (the superseded case).
    let hellos = 0;
    let reconnect!: () => void;
    const reconnected = new Promise<void>((resolve) => (reconnect = resolve));
    const handle = phone('phone-2', async () => {
      if (hellos++ > 0) await reconnected;
      return 'secret-2';
    });
    await waitFor(() => svc.app.get(DeviceLinkHost).isConnected({ tenant: TENANT, deviceId: 'phone-2' }), { message: 'connected' });
    handle.faults.set({ dropAfterGrant: true, once: true });
    const { callId } = await authorize('op-drop-after-grant', 'device.list_contacts', { name_query: 'Bob' }, 'phone-2');
    await waitFor(async () => (await status(callId)) === 'outcome_unknown', { message: 'outcome_unknown after the drop' });
    reconnect();
    await watch(callId, (s) => s === 'succeeded', () => runs(handle, 'device.list_contacts') === 1);
    expect(handle.faults.fired).toEqual([{ fault: 'dropAfterGrant', requestId: callId }]);
    expect(await types(callId)).toEqual(['requested', 'authorized', 'dispatched', 'started', 'outcome_unknown', 'succeeded']);
    expect((await calls.load(TENANT, callId)).state).toMatchObject({ unknown: { cause: 'connection_lost' } });
    expect(runs(handle, 'device.list_contacts')).toBe(1);
  });

  it('drop after the outcome is sent, before its ack: one recorded outcome, the resent one is acknowledged', async () => {
    const handle = phone('phone-3');
    await waitFor(() => svc.app.get(DeviceLinkHost).isConnected({ tenant: TENANT, deviceId: 'phone-3' }), { message: 'connected' });
    handle.faults.set({ dropAfterOutcome: true, once: true });
    const { callId } = await authorize('op-drop-after-outcome', 'device.list_contacts', { name_query: 'Carol' }, 'phone-3');
    await watch(callId, (s) => s === 'succeeded', () => runs(handle, 'device.list_contacts') === 1);
    await waitFor(() => handle.faults.fired.length === 1, { message: 'the drop' });
    expect(handle.faults.fired).toEqual([{ fault: 'dropAfterOutcome', requestId: callId }]);
    // The resent outcome is acknowledged after the reconnect: the journal stops resending it.
    await waitFor(() => handle.client.journalEntry(callId)?.acked === true, { message: 'the ack of the resent outcome' });
    expect(await types(callId)).toEqual(['requested', 'authorized', 'dispatched', 'started', 'succeeded']);
    expect(runs(handle, 'device.list_contacts')).toBe(1);
  });

  it('reboot during an action: outcome_unknown, the journal reports it interrupted, it never runs again', async () => {
    const handle = phone('phone-4');
    await waitFor(() => svc.app.get(DeviceLinkHost).isConnected({ tenant: TENANT, deviceId: 'phone-4' }), { message: 'connected' });
    handle.faults.set({ delayMs: 60_000 });
    const { callId } = await authorize('op-reboot', 'device.list_contacts', { name_query: 'Dave' }, 'phone-4');
    await waitFor(async () => (await status(callId)) === 'started', { message: 'the start' });
    handle.faults.set({ delayMs: 0 });
    await handle.reboot({ bootId: 'boot-after-crash' });
    await waitFor(async () => (await status(callId)) === 'outcome_unknown', { message: 'outcome_unknown' });
    const state = (await calls.load(TENANT, callId)).state as unknown as { unknown: { cause: string } };
    expect(['reboot', 'connection_lost']).toContain(state.unknown.cause);
    // Reconnected on the new boot: the journal says interrupted, and the device runs the next call normally.
    // After the device's reconnect backoff, which a busy machine stretches well past the default wait.
    await waitFor(() => handle.client.requestState(callId) === 'interrupted', {
      timeoutMs: 30_000,
      message: 'the journal to say interrupted',
    });
    const next = await authorize('op-after-reboot', 'device.screen_observe', {}, 'phone-4');
    await waitFor(async () => (await status(next.callId)) === 'succeeded', { message: 'the next call' });
    expect(await status(callId)).toBe('outcome_unknown');
    expect(await types(callId)).toEqual(['requested', 'authorized', 'dispatched', 'started', 'outcome_unknown']);
    expect(runs(handle, 'device.list_contacts')).toBe(0);
  });

  it('100 concurrent duplicate submits of one request: exactly one execution on the device', async () => {
    const device = { tenant: TENANT, deviceId: 'phone-5' };
    const host = svc.app.get(DeviceLinkHost);
    // Dispatched while the device is offline, so every submit below names a request the log can start.
    const { callId, payload, sha256 } = await authorize('op-dup', 'device.list_contacts', { name_query: 'Erin' }, 'phone-5');
    const deadline = new Date(Date.now() + 60_000).toISOString();
    await calls.execute(
      TENANT,
      callId,
      { type: 'DispatchCall', data: { call_id: callId, request_id: callId, executor: { kind: 'device', device_id: 'phone-5' }, deadline } },
      cause,
    );
    await waitFor(
      async () =>
        (
          await svc.infra.db
            .withSchema(DEVICE_BRIDGE_SCHEMA)
            .selectFrom('executions')
            .select('status')
            .where('call_id', '=', callId)
            .executeTakeFirst()
        )?.status === 'dispatched',
      { message: 'the projection to show the dispatch' },
    );
    const handle = phone('phone-5');
    handle.faults.set({ delayMs: 200 });
    await waitFor(() => host.isConnected(device), { message: 'connected', intervalMs: 1 });
    const frame = {
      type: 'submit' as const,
      request_id: callId,
      call_id: callId,
      tool: 'device.list_contacts',
      payload,
      payload_sha256: sha256,
      deadline,
      verdict: { level: 'low' as const, reasons: ['test'] },
    };
    await Promise.all(Array.from({ length: 100 }, () => Promise.resolve().then(() => host.sendSubmit(device, frame))));
    await waitFor(async () => (await status(callId)) === 'succeeded', { message: 'the call to succeed' });
    // A second run would need a second granted start claim, which the log refuses; the journal answers the rest.
    handle.faults.set({ delayMs: 0 });
    expect(runs(handle, 'device.list_contacts')).toBe(1);
    expect((await types(callId)).filter((t) => t === 'started')).toHaveLength(1);
  });

  it('1,000 seal/start races between two writers: never both win', async () => {
    const connections: NatsConnection[] = [];
    const writer = async (name: string) => {
      const nc = await connectNats({ url: testEnv().natsUrl, name });
      connections.push(nc);
      return new ToolCalls(new EventStore(jetstream(nc), await jetstreamManager(nc)), namespace, `/test/${name}`);
    };
    try {
      const sealer = await writer('sealer');
      const starter = await writer('starter');
      const deadline = new Date(Date.now() + 600_000).toISOString();
      const ids = Array.from({ length: 1000 }, (_, i) => `race-${i}`);
      const pool = async <T>(items: T[], width: number, each: (item: T) => Promise<void>) => {
        let next = 0;
        await Promise.all(Array.from({ length: width }, async () => {
          while (next < items.length) await each(items[next++]!);
        }));
      };
      const callIds: string[] = [];
      await pool(ids, 50, async (op) => {
        const { callId } = await authorize(op, 'device.screen_observe', {}, 'phone-race');
        await calls.execute(
          TENANT,
          callId,
          { type: 'DispatchCall', data: { call_id: callId, request_id: callId, executor: { kind: 'device', device_id: 'phone-race' }, deadline } },
          cause,
        );
        callIds.push(callId);
      });
      let sealedWins = 0;
      let startWins = 0;
      await pool(callIds, 50, async (callId) => {
        const [seal, start] = await Promise.allSettled([
          sealer.execute(TENANT, callId, { type: 'SealCall', data: { call_id: callId, sealed_by: 'owner-1', reason: 'race' } }, cause),
          starter.execute(
            TENANT,
            callId,
            { type: 'ClaimStart', data: { call_id: callId, request_id: callId, executor_id: 'phone-race', boot_id: 'boot-1' } },
            cause,
          ),
        ]);
        const won = [seal.status === 'fulfilled', start.status === 'fulfilled'];
        expect(won.filter(Boolean)).toHaveLength(1);
        const t = (await calls.timeline(TENANT, callId)).map((e) => e.event.type.split('.')[2]);
        if (won[0]) {
          sealedWins++;
          expect(t).toContain('sealed');
          expect(t).not.toContain('started');
        } else {
          startWins++;
          expect(t).toContain('started');
          expect(t).not.toContain('sealed');
        }
      });
      expect(sealedWins + startWins).toBe(1000);
    } finally {
      for (const nc of connections) await nc.close();
    }
  });
});
