import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@ormuz/testing';
import { SIM_PACKAGES, runSimulatedDevice, type SimulatedDeviceHandle } from '../src/index.js';
import { InMemoryBridge, TENANT, tokenOf } from './in-memory-bridge.fixture.js';

const OPEN_MESSAGES = ['device.open_app', { package_name: SIM_PACKAGES.messages }] as const;
const BLUETOOTH_ON = ['device.toggle_setting', { setting: 'bluetooth', desired_state: 'on' }] as const;

describe('simulated device fault knobs against the device gateway', () => {
  let bridge: InMemoryBridge;
  let root: string;
  let phones: SimulatedDeviceHandle[] = [];
  let next = 0;

  beforeAll(async () => {
    bridge = await InMemoryBridge.start();
    root = mkdtempSync(join(tmpdir(), 'ormuz-sim-faults-'));
  });

  afterEach(async () => {
    await Promise.all(phones.map((p) => p.close()));
    phones = [];
  });

  afterAll(async () => {
    await bridge.close();
    rmSync(root, { recursive: true, force: true });
  });

  /** A phone with its own id and journal, welcomed by the bridge. */
  async function phone(): Promise<SimulatedDeviceHandle> {
    next += 1;
    const deviceId = `phone-${next}`;
    const handle = runSimulatedDevice({
      url: bridge.url,
      tenant: TENANT,
      deviceId,
      token: tokenOf(deviceId),
      journalDir: join(root, deviceId),
      backoff: { initialDelayMs: 20, maxDelayMs: 100 },
      closeGraceMs: 200,
    });
    phones.push(handle);
    await waitFor(() => handle.client.connected, { message: `${deviceId} to be welcomed` });
    return handle;
  }

  const runs = (p: SimulatedDeviceHandle, tool: string) => p.device.history.filter((h) => h.tool === tool).length;

  it('dropBeforeClaim: nothing starts on the lost connection; the claim is made after reconnecting, once', async () => {
    const p = await phone();
    p.faults.set({ dropBeforeClaim: true, once: true });
    const record = bridge.dispatch(p.deviceId, 'before-claim', ...OPEN_MESSAGES);

    await waitFor(() => record.status === 'succeeded', { message: 'the outcome after the reconnect' });
    expect(p.faults.fired).toEqual([{ fault: 'dropBeforeClaim', requestId: 'before-claim' }]);
    const drop = bridge.disconnects.find((d) => d.deviceId === p.deviceId)!;
    expect(drop).toMatchObject({ cause: { kind: 'closed', code: 1006 }, started: [] });
    expect(bridge.claims.filter((c) => c.requestId === 'before-claim')).toHaveLength(1);
    expect(record.history).toEqual(['dispatched', 'started', 'succeeded']);
    await waitFor(() => p.client.journalEntry('before-claim')?.acked, { message: 'the acknowledgement' });
    expect(p.client.journalEntry('before-claim')).toMatchObject({ state: 'succeeded', startedBootId: p.client.bootId });
    expect(runs(p, 'device.open_app')).toBe(1);
  });

  it('dropAfterGrant: the bridge records outcome unknown, then the late real outcome', async () => {
    const p = await phone();
    p.faults.set({ dropAfterGrant: true, once: true });
    const record = bridge.dispatch(p.deviceId, 'after-grant', ...BLUETOOTH_ON);

    await waitFor(() => record.status === 'succeeded', { message: 'the late outcome' });
    expect(record.history).toEqual(['dispatched', 'started', 'outcome_unknown:connection_lost', 'succeeded']);
    expect(record.unknownCause).toBe('connection_lost');
    expect(bridge.disconnects.find((d) => d.deviceId === p.deviceId)?.started).toEqual(['after-grant']);
    expect(record.outcome).toMatchObject({
      status: 'succeeded',
      result: { setting: 'bluetooth', previous_state: 'off', current_state: 'on', changed: true },
    });
    await waitFor(() => p.client.journalEntry('after-grant')?.acked, { message: 'the acknowledgement' });
    expect(runs(p, 'device.toggle_setting')).toBe(1);
    expect(bridge.claims.filter((c) => c.requestId === 'after-grant')).toHaveLength(1);
  });

  it('dropAfterOutcome: the outcome is recorded once, resent after reconnecting, and then acknowledged', async () => {
    const p = await phone();
    p.faults.set({ dropAfterOutcome: true, once: true });
    const record = bridge.dispatch(p.deviceId, 'after-outcome', ...OPEN_MESSAGES);

    await waitFor(() => p.client.journalEntry('after-outcome')?.acked, { message: 'the acknowledgement' });
    expect(p.faults.fired).toEqual([{ fault: 'dropAfterOutcome', requestId: 'after-outcome' }]);
    expect(bridge.deliveriesOf('after-outcome')).toHaveLength(2);
    expect(record.history).toEqual(['dispatched', 'started', 'succeeded']);
    expect(bridge.disconnects.find((d) => d.deviceId === p.deviceId)?.started).toEqual([]);
    expect(runs(p, 'device.open_app')).toBe(1);
  });

  it('delayMs: a slow execution reports started while it runs, and its duration', async () => {
    const p = await phone();
    p.faults.set({ delayMs: 300 });
    const record = bridge.dispatch(p.deviceId, 'slow', ...OPEN_MESSAGES);
    await waitFor(() => p.client.requestState('slow') === 'started', { message: 'the start' });

    bridge.statusQuery('slow');
    await waitFor(() => bridge.reportsOf('slow')[0], { message: 'the status report' });
    expect(bridge.reportsOf('slow')[0]).toMatchObject({
      state: 'started',
      payload_sha256: record.submit.payload_sha256,
    });
    expect(runs(p, 'device.open_app')).toBe(0);

    await waitFor(() => record.status === 'succeeded', { message: 'the outcome' });
    expect(record.outcome?.duration_ms).toBeGreaterThanOrEqual(300);
    expect(runs(p, 'device.open_app')).toBe(1);
    expect(p.faults.value('delayMs')).toBe(300);
  });

  it('hang: the execution never answers until it is cancelled, and never acts', async () => {
    const p = await phone();
    p.faults.set({ hang: true, once: true });
    const record = bridge.dispatch(p.deviceId, 'hang', ...BLUETOOTH_ON);
    await waitFor(() => p.client.requestState('hang') === 'started', { message: 'the start' });
    bridge.statusQuery('hang');
    await waitFor(() => bridge.reportsOf('hang')[0]?.state === 'started', { message: 'a started report' });
    expect(record.status).toBe('started');

    bridge.cancel('hang', 'The owner gave up waiting.');
    await waitFor(() => record.status === 'failed', { message: 'the failure' });
    expect(record.outcome).toMatchObject({ status: 'failed', error: { code: 'cancelled' } });
    expect(runs(p, 'device.toggle_setting')).toBe(0);
    expect(p.device.settings.bluetooth).toBe(false);
    expect(p.faults.value('hang')).toBe(0);
  });

  it('sends a claim and an outcome again when the bridge failed to record them, on the same connection', async () => {
    const p = await phone();
    bridge.failNextClaim.add('flaky-log');
    bridge.failNextOutcome.add('flaky-log');
    const record = bridge.dispatch(p.deviceId, 'flaky-log', ...OPEN_MESSAGES);

    await waitFor(() => p.client.journalEntry('flaky-log')?.acked, { message: 'the acknowledgement' });
    expect(bridge.claims.filter((c) => c.requestId === 'flaky-log')).toHaveLength(2);
    expect(bridge.deliveriesOf('flaky-log')).toHaveLength(2);
    expect(record.history).toEqual(['dispatched', 'started', 'succeeded']);
    expect(bridge.connections.filter((c) => c.deviceId === p.deviceId)).toHaveLength(1);
    expect(runs(p, 'device.open_app')).toBe(1);
  });

  it('a cancel reaches a granted request still waiting behind a hanging one, and nothing is done', async () => {
    const p = await phone();
    p.faults.set({ hang: true, once: true });
    const first = bridge.dispatch(p.deviceId, 'ahead', ...OPEN_MESSAGES);
    await waitFor(() => p.client.requestState('ahead') === 'started', { message: 'the hanging run' });
    const queued = bridge.dispatch(p.deviceId, 'queued', ...BLUETOOTH_ON);
    await waitFor(() => queued.status === 'started', { message: 'the grant of the queued request' });
    expect(p.client.requestState('queued')).toBe('claimed');

    bridge.cancel('queued', 'The owner changed their mind.');
    await waitFor(() => bridge.reportsOf('queued')[0], { message: 'the answer to the cancel' });
    bridge.cancel('ahead', 'Taking too long.');
    await waitFor(() => first.status === 'failed' && queued.status === 'failed', { message: 'both failures' });
    expect(queued.outcome).toMatchObject({
      status: 'failed',
      error: { code: 'cancelled', message: expect.stringMatching(/before it started.*nothing was done/) },
    });
    expect(p.device.history).toEqual([]);
    expect(p.device.settings.bluetooth).toBe(false);
  });

  it('reboot: reports the journal on reconnect and never re-runs a finished request', async () => {
    const p = await phone();
    const firstBoot = p.client.bootId;
    // Finished and acknowledged.
    const done = bridge.dispatch(p.deviceId, 'done', ...OPEN_MESSAGES);
    await waitFor(() => p.client.journalEntry('done')?.acked, { message: 'done to be acknowledged' });
    // Finished, but the log failed to record it, so it was never acknowledged.
    bridge.failNextOutcome.add('unacked');
    const unacked = bridge.dispatch(p.deviceId, 'unacked', ...BLUETOOTH_ON);
    await waitFor(() => bridge.deliveriesOf('unacked').length === 1, { message: 'the unrecorded outcome' });
    // Running when the device goes down.
    p.faults.set({ hang: true, once: true });
    const running = bridge.dispatch(p.deviceId, 'running', 'device.toggle_setting', {
      setting: 'location',
      desired_state: 'off',
    });
    await waitFor(() => p.client.requestState('running') === 'started', { message: 'running to start' });

    await p.reboot();
    expect(p.client.bootId).not.toBe(firstBoot);
    await waitFor(() => bridge.reportsOf('running').some((r) => r.state === 'interrupted'), {
      message: 'the interrupted run to be reported',
    });
    await waitFor(() => unacked.status === 'succeeded', { message: 'the unacknowledged outcome to be resent' });
    await waitFor(() => p.client.journalEntry('unacked')?.acked, { message: 'its acknowledgement' });

    // The crash cut the connection first; the new boot id alone would have made it unknown too.
    expect(running.history).toEqual(['dispatched', 'started', 'outcome_unknown:connection_lost']);
    expect(bridge.connections.filter((c) => c.deviceId === p.deviceId).map((c) => c.bootId)).toEqual([
      firstBoot,
      p.client.bootId,
    ]);
    expect(bridge.reports.find((r) => r.frame.request_id === 'running')?.bootId).toBe(p.client.bootId);
    expect(bridge.outcomeDeliveries.filter((d) => d.frame.request_id === 'unacked').map((d) => d.bootId)).toEqual([
      firstBoot,
      p.client.bootId,
    ]);
    expect(p.client.journalEntry('running')).toMatchObject({ state: 'started', startedBootId: firstBoot });

    // Redelivered submits observe the journal: the finished one resends its outcome, the interrupted one is reported.
    const deliveriesBefore = bridge.deliveriesOf('done').length;
    bridge.resubmit('done');
    bridge.resubmit('running');
    await waitFor(() => bridge.deliveriesOf('done').length === deliveriesBefore + 1, { message: 'done observed' });
    await waitFor(() => bridge.reportsOf('running').filter((r) => r.state === 'interrupted').length === 2, {
      message: 'running observed',
    });
    expect(done.history).toEqual(['dispatched', 'started', 'succeeded']);
    expect(bridge.claims.filter((c) => c.bootId === p.client.bootId)).toEqual([]);
    expect(runs(p, 'device.open_app')).toBe(1);
    expect(runs(p, 'device.toggle_setting')).toBe(1);
    expect(p.device.settings).toMatchObject({ bluetooth: true, location: true });
  });
});
