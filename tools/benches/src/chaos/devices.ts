/**
 * The chaos run's phones: fleets of simulated devices spread over the tenants and the bridge replicas, each counting
 * its runs and journaling on disk; the nemesis targets that drop a random device's connection (at a protocol step,
 * see `SimFaultKnobs`) or reboot it; and, at the end, every journal read back.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DeviceJournal,
  runSimulatedFleet,
  type SimFaultSettings,
  type SimulatedDeviceHandle,
  type SimulatedFleet,
} from '@ormuz/device-sdk';
import type { JournalRecordSeen } from './checker.js';
import { CountingDevice } from './counting-device.js';
import type { NemesisTarget } from './nemesis.js';

/** The credential each device presents (the bridge is given the same through `DEVICE_TOKENS`). */
export const deviceToken = (deviceId: string): string => `chaos-token-${deviceId}`;

interface FleetPart {
  readonly tenant: string;
  readonly fleet: SimulatedFleet;
  readonly journalRoot: string;
}

/** `count` devices, dealt round-robin over tenants and bridges. */
export class ChaosDevices {
  /** Runs by call id, over every device. */
  readonly runs = new Map<string, number>();
  private readonly parts: FleetPart[] = [];
  private readonly root = mkdtempSync(join(tmpdir(), 'ormuz-chaos-journals-'));

  /** Device ids by tenant, known before any connects (for the bridge's `DEVICE_TOKENS`). */
  static plan(tenants: readonly string[], bridges: number, count: number): Map<string, string[]> {
    const plan = new Map<string, string[]>(tenants.map((t) => [t, []]));
    for (let i = 0; i < count; i++) {
      const tenant = tenants[i % tenants.length]!;
      const prefix = `${tenant}-b${Math.floor(i / tenants.length) % bridges}-`;
      const ids = plan.get(tenant)!;
      // As the fleet names them: `<prefix><index>`, numbered per tenant and bridge.
      ids.push(`${prefix}${ids.filter((id) => id.startsWith(prefix)).length}`);
    }
    return plan;
  }

  /** Starts the planned devices; each connects to the bridge its id names. */
  start(plan: ReadonlyMap<string, readonly string[]>, bridgeUrls: readonly string[]): void {
    for (const [tenant, ids] of plan) {
      for (let b = 0; b < bridgeUrls.length; b++) {
        const prefix = `${tenant}-b${b}-`;
        const mine = ids.filter((id) => id.startsWith(prefix));
        if (mine.length === 0) continue;
        const journalRoot = join(this.root, `${tenant}-b${b}`);
        const fleet = runSimulatedFleet({
          url: bridgeUrls[b]!,
          tenant,
          count: mine.length,
          idPrefix: prefix,
          tokenFor: (_index, id) => deviceToken(id),
          journalRoot,
          deviceFor: () => new CountingDevice(this.runs, { historyLimit: 20 }),
          backoff: { initialDelayMs: 100, maxDelayMs: 1000 },
        });
        this.parts.push({ tenant, fleet, journalRoot });
      }
    }
  }

  get all(): SimulatedDeviceHandle[] {
    return this.parts.flatMap((p) => [...p.fleet.devices]);
  }

  connectedCount(): number {
    return this.parts.reduce((n, p) => n + p.fleet.connectedCount(), 0);
  }

  /** Closes every device (idempotent). */
  async close(): Promise<void> {
    await Promise.all(this.parts.map((p) => p.fleet.close()));
  }

  /** Every journal, once the devices are closed: what each device received, started and reported. */
  readJournals(): JournalRecordSeen[] {
    const seen: JournalRecordSeen[] = [];
    for (const p of this.parts) {
      for (const d of p.fleet.devices) {
        const journal = DeviceJournal.open(join(p.journalRoot, d.deviceId));
        try {
          for (const e of journal.entries()) {
            seen.push({
              deviceId: d.deviceId,
              requestId: e.requestId,
              ...(e.callId ? { callId: e.callId } : {}),
              state: e.state,
              started: e.startedAt !== undefined,
              ...(e.outcome ? { outcome: e.outcome.status } : {}),
            });
          }
        } finally {
          journal.close();
        }
      }
    }
    return seen;
  }

  remove(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}

const DROPS: readonly SimFaultSettings[] = [
  { dropBeforeClaim: true, once: true },
  { dropAfterGrant: true, once: true },
  { dropAfterOutcome: true, once: true },
];

/** Nemesis targets on random devices: a connection dropped at its next protocol step, and a reboot. */
export function deviceTargets(devices: ChaosDevices, random: () => number): NemesisTarget[] {
  const pick = () => {
    const all = devices.all;
    return all[Math.floor(random() * all.length)]!;
  };
  return [
    {
      name: 'device drop',
      kill: async () => pick().faults.set(DROPS[Math.floor(random() * DROPS.length)]!),
      // The client reconnects by itself, with backoff.
      restart: async () => undefined,
    },
    {
      name: 'device reboot',
      kill: async () => pick().reboot(),
      restart: async () => undefined,
    },
  ];
}
