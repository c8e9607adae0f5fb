/**
 * Starts a simulated phone connected to a bridge: a {@link SimulatedDevice} behind a {@link DeviceClient}, with fault
 * knobs and a simulated reboot. Used by the CLI, the demo, tests and load runs.
 */
import { randomUUID } from 'node:crypto';
import type { WireErrorV1 } from '@ormuz/contracts';
import { DeviceClient, type BackoffOptions, type DeviceClientLogger } from '../device-client.js';
import type { DeviceExecutor } from '../device-executor.js';
import { NODE_SCHEDULER, type DeviceScheduler } from '../scheduler.js';
import { SimFaultKnobs } from './sim-faults.js';
import { SimulatedDevice } from './simulated-device.js';

/** Options of {@link runSimulatedDevice}. */
export interface RunSimulatedDeviceOptions {
  /** Bridge endpoint, e.g. `ws://127.0.0.1:8787/v1/devices`. */
  readonly url: string;
  readonly tenant: string;
  readonly deviceId: string;
  /** Device credential (or a function returning the current one). */
  readonly token: string | (() => string | Promise<string>);
  /** Journal directory; reuse it across runs to keep run-at-most-once across restarts. */
  readonly journalDir: string;
  /** The phone to drive; a fresh {@link SimulatedDevice} by default. */
  readonly device?: SimulatedDevice;
  readonly deniedPackages?: readonly string[];
  readonly backoff?: BackoffOptions;
  /** Boot id of the first boot; a random UUID by default (every {@link SimulatedDeviceHandle.reboot} makes a new one). */
  readonly bootId?: string;
  readonly logger?: DeviceClientLogger;
  /** Timers of the client and of the `delayMs` fault; default one Node timer each. */
  readonly scheduler?: DeviceScheduler;
  /** How long a normal {@link SimulatedDeviceHandle.close} waits for running executions; default 5 000 ms. */
  readonly closeGraceMs?: number;
  /** Requests the device takes in flight at once (announced in `hello`); see `DeviceClientOptions.maxInFlight`. */
  readonly maxInFlight?: number;
  /** The bridge refused the device's credential; see `DeviceClientOptions.onAuthenticationRefused`. */
  readonly onAuthenticationRefused?: (error: WireErrorV1) => void;
}

/** A running simulated phone. */
export interface SimulatedDeviceHandle {
  readonly deviceId: string;
  /** The phone. Its state (contacts, settings, screens) survives reboots, as a real phone's storage would. */
  readonly device: SimulatedDevice;
  /** The client of the current boot; {@link reboot} replaces it. */
  readonly client: DeviceClient;
  /** Fault knobs (connection drops at protocol steps, slow or hanging executions); they survive reboots. */
  readonly faults: SimFaultKnobs;
  /**
   * Restarts the device process as a crash would: the connection is cut without a close frame, running executions
   * are abandoned without an outcome (their journal entries stay `started`), and a new client with a new boot id
   * opens the same journal and connects. The new boot reports abandoned runs as `interrupted`, resends unacknowledged
   * outcomes, and never runs a request its journal knows again.
   */
  reboot(options?: { readonly bootId?: string }): Promise<void>;
  /** Disconnects and closes the journal (see {@link DeviceClient.close}). */
  close(): Promise<void>;
}

/**
 * Connects a simulated phone to the bridge at `url` and keeps it connected until `close()`.
 * Returns at once; poll `client.connected` to know when the bridge welcomed it.
 *
 * @throws JournalLockedError or JournalCorruptError when the journal directory cannot be used.
 */
export function runSimulatedDevice(options: RunSimulatedDeviceOptions): SimulatedDeviceHandle {
  const device = options.device ?? new SimulatedDevice();
  const faults = new SimFaultKnobs();
  const scheduler = options.scheduler ?? NODE_SCHEDULER;
  const executor: DeviceExecutor = async (tool, args, context) => {
    await faults.beforeExecution(context, scheduler);
    return device.execute(tool, args, context);
  };
  const boot = (bootId: string | undefined): DeviceClient =>
    new DeviceClient({
      url: options.url,
      tenant: options.tenant,
      deviceId: options.deviceId,
      token: options.token,
      journalDir: options.journalDir,
      executor,
      targetPackage: device.targetPackage,
      onProtocolStep: faults.protocolHook,
      ...(bootId ? { bootId } : {}),
      ...(options.deniedPackages ? { deniedPackages: options.deniedPackages } : {}),
      ...(options.backoff ? { backoff: options.backoff } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.scheduler ? { scheduler: options.scheduler } : {}),
      ...(options.closeGraceMs === undefined ? {} : { closeGraceMs: options.closeGraceMs }),
      ...(options.maxInFlight === undefined ? {} : { maxInFlight: options.maxInFlight }),
      ...(options.onAuthenticationRefused ? { onAuthenticationRefused: options.onAuthenticationRefused } : {}),
    }).start();
  let client = boot(options.bootId);
  let closed = false;
  return {
    deviceId: options.deviceId,
    device,
    faults,
    get client() {
      return client;
    },
    async reboot(rebootOptions = {}) {
      if (closed) throw new Error(`the simulated device ${options.deviceId} is closed`);
      await client.close({ crash: true });
      client = boot(rebootOptions.bootId ?? randomUUID());
    },
    async close() {
      closed = true;
      await client.close();
    },
  };
}
