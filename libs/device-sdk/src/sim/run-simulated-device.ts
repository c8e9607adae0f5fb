/**
 * Starts a simulated phone connected to a bridge: a {@link SimulatedDevice} behind a {@link DeviceClient}.
 * Used by the CLI, the demo and tests.
 */
import { DeviceClient, type BackoffOptions, type DeviceClientLogger } from '../device-client.js';
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
  readonly bootId?: string;
  readonly logger?: DeviceClientLogger;
}

/** A running simulated phone. */
export interface SimulatedDeviceHandle {
  readonly device: SimulatedDevice;
  readonly client: DeviceClient;
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
  const client = new DeviceClient({
    url: options.url,
    tenant: options.tenant,
    deviceId: options.deviceId,
    token: options.token,
    journalDir: options.journalDir,
    executor: device.execute,
    targetPackage: device.targetPackage,
    ...(options.deniedPackages ? { deniedPackages: options.deniedPackages } : {}),
    ...(options.backoff ? { backoff: options.backoff } : {}),
    ...(options.bootId ? { bootId: options.bootId } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  }).start();
  return { device, client, close: () => client.close() };
}
