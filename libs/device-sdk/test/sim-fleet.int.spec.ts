import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@ormuz/testing';
import { SIM_PACKAGES, runSimulatedFleet, type SimulatedFleet } from '../src/index.js';
import { InMemoryBridge, TENANT, tokenOf } from './in-memory-bridge.fixture.js';

const COUNT = 50;

describe('simulated fleet against the device gateway', () => {
  let bridge: InMemoryBridge;
  let root: string;
  let fleet: SimulatedFleet | undefined;

  beforeAll(async () => {
    bridge = await InMemoryBridge.start();
    root = mkdtempSync(join(tmpdir(), 'ormuz-sim-fleet-'));
  });

  afterAll(async () => {
    await fleet?.close();
    await bridge.close();
    rmSync(root, { recursive: true, force: true });
  });

  it(`connects ${COUNT} devices and runs one request on each`, async () => {
    fleet = runSimulatedFleet({
      url: bridge.url,
      tenant: TENANT,
      count: COUNT,
      tokenFor: (_index, deviceId) => tokenOf(deviceId),
      journalRoot: root,
      idPrefix: 'fleet-',
      backoff: { initialDelayMs: 20, maxDelayMs: 200 },
    });
    const sim = fleet;
    await waitFor(() => sim.connectedCount() === COUNT && bridge.connectedCount() === COUNT, {
      message: `all ${COUNT} devices to be welcomed`,
    });
    expect(new Set(bridge.connections.map((c) => c.deviceId)).size).toBe(COUNT);
    expect(sim.deviceId(7)).toBe('fleet-7');

    const records = sim.devices.map((d, i) =>
      bridge.dispatch(d.deviceId, `fleet-call-${i}`, 'device.open_app', { package_name: SIM_PACKAGES.contacts }),
    );
    await waitFor(() => records.every((r) => r.status === 'succeeded'), { message: 'every outcome' });
    await waitFor(() => sim.devices.every((d, i) => d.client.journalEntry(`fleet-call-${i}`)?.acked), {
      message: 'every acknowledgement',
    });
    for (const device of sim.devices) {
      expect(device.device.history.map((h) => h.tool)).toEqual(['device.open_app']);
      expect(device.device.foreground?.package).toBe(SIM_PACKAGES.contacts);
    }
    expect(bridge.claims).toHaveLength(COUNT);

    await sim.close();
    await waitFor(() => bridge.connectedCount() === 0, { message: 'every device to disconnect' });
    expect(sim.connectedCount()).toBe(0);
  });

  it('refuses a fleet without credentials or devices', () => {
    const base = { url: bridge.url, tenant: TENANT, journalRoot: root };
    expect(() => runSimulatedFleet({ ...base, count: 2 })).toThrow(/either token .* or tokenFor/);
    expect(() => runSimulatedFleet({ ...base, count: 0, token: 't' })).toThrow(/positive whole number/);
  });
});
