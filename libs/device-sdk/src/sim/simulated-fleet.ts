/**
 * Fleet mode: many simulated phones in one process, for load tests and benchmarks. The devices share one timer
 * wheel (hello timeouts, heartbeat checks, reconnect backoff, slow-execution faults) instead of holding Node timers
 * each, and keep a bounded history, so a device costs little more than its WebSocket and its journal.
 */
import { join } from 'node:path';
import type { BackoffOptions, DeviceClientLogger } from '../device-client.js';
import { TimerWheel } from '../scheduler.js';
import { runSimulatedDevice, type SimulatedDeviceHandle } from './run-simulated-device.js';
import { SimulatedDevice } from './simulated-device.js';

/** A device credential, or a function returning the current one. */
export type SimToken = string | (() => string | Promise<string>);

/** Options of {@link runSimulatedFleet}. Give `token` (one for all) or `tokenFor` (one per device). */
export interface RunSimulatedFleetOptions {
  /** Bridge endpoint, e.g. `ws://127.0.0.1:8787/v1/devices`. */
  readonly url: string;
  readonly tenant: string;
  /** Number of devices, 1 or more. */
  readonly count: number;
  /** One credential for every device. */
  readonly token?: SimToken;
  /** The credential of device `index` (0-based), whose id is `deviceId`. */
  readonly tokenFor?: (index: number, deviceId: string) => SimToken;
  /** Each device journals in `<journalRoot>/<deviceId>`; reuse the root to keep the journals across runs. */
  readonly journalRoot: string;
  /** Device ids are `<idPrefix><index>`; default `sim-`. */
  readonly idPrefix?: string;
  /** The phone of device `index`; default a fresh {@link SimulatedDevice} keeping its last 20 tool runs. */
  readonly deviceFor?: (index: number, deviceId: string) => SimulatedDevice;
  readonly backoff?: BackoffOptions;
  readonly deniedPackages?: readonly string[];
  readonly logger?: DeviceClientLogger;
  /** Resolution of the shared timer wheel in milliseconds; default 50. */
  readonly tickMs?: number;
  /** How long {@link SimulatedFleet.close} waits for each device's running executions; default 1 000 ms. */
  readonly closeGraceMs?: number;
}

/** A running fleet of simulated phones. */
export interface SimulatedFleet {
  /** The devices, by index. */
  readonly devices: readonly SimulatedDeviceHandle[];
  /** Device id of the device at `index`. */
  deviceId(index: number): string;
  /** Devices with a welcomed, open connection now. */
  connectedCount(): number;
  /** Closes every device (see {@link SimulatedDeviceHandle.close}) and stops the shared timers. Idempotent. */
  close(): Promise<void>;
}

const DEFAULT_FLEET_HISTORY = 20;

/**
 * Starts `count` simulated phones that connect to `url` and stay connected (reconnecting with backoff) until
 * `close()`. Returns at once; poll {@link SimulatedFleet.connectedCount}.
 *
 * Each device holds one socket and one open journal file: a fleet of N needs about 2·N file descriptors here, and N
 * more on a bridge in the same process.
 *
 * @throws Error when `count` is not a positive integer or neither (or both) of `token` and `tokenFor` is given;
 *   JournalLockedError or JournalCorruptError when a journal directory cannot be used (devices started before it
 *   are closed again).
 */
export function runSimulatedFleet(options: RunSimulatedFleetOptions): SimulatedFleet {
  if (!Number.isInteger(options.count) || options.count < 1)
    throw new Error(`count must be a positive whole number of devices, got ${options.count}`);
  if ((options.token === undefined) === (options.tokenFor === undefined))
    throw new Error('give either token (one credential for every device) or tokenFor (one per device)');
  const prefix = options.idPrefix ?? 'sim-';
  const deviceId = (index: number): string => `${prefix}${index}`;
  const wheel = new TimerWheel(options.tickMs === undefined ? {} : { tickMs: options.tickMs });
  const devices: SimulatedDeviceHandle[] = [];
  try {
    for (let index = 0; index < options.count; index++) {
      const id = deviceId(index);
      devices.push(
        runSimulatedDevice({
          url: options.url,
          tenant: options.tenant,
          deviceId: id,
          token: options.tokenFor ? options.tokenFor(index, id) : options.token!,
          journalDir: join(options.journalRoot, id),
          device: options.deviceFor?.(index, id) ?? new SimulatedDevice({ historyLimit: DEFAULT_FLEET_HISTORY }),
          scheduler: wheel,
          closeGraceMs: options.closeGraceMs ?? 1_000,
          ...(options.backoff ? { backoff: options.backoff } : {}),
          ...(options.deniedPackages ? { deniedPackages: options.deniedPackages } : {}),
          ...(options.logger ? { logger: options.logger } : {}),
        }),
      );
    }
  } catch (err) {
    void Promise.allSettled(devices.map((d) => d.close())).then(() => wheel.clear());
    throw err;
  }
  let closing: Promise<void> | undefined;
  return {
    devices,
    deviceId,
    connectedCount: () => devices.reduce((n, d) => n + (d.client.connected ? 1 : 0), 0),
    close() {
      closing ??= Promise.all(devices.map((d) => d.close())).then(() => wheel.clear());
      return closing;
    },
  };
}
