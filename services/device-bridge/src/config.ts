import { ConfigError, intFrom, loadBaseConfig, type BaseConfig, type Env } from '@ormuz/service-kit';
import { identifierProblem } from '@ormuz/contracts';

export interface DeviceCredentialConfig {
  readonly tenant: string;
  readonly deviceId: string;
  readonly token: string;
}

export interface DeviceBridgeConfig extends BaseConfig {
  /** WebSocket port devices connect to. Env `DEVICE_BRIDGE_PORT`, default 8082 (0: any free port). */
  readonly port: number;
  /** Bind address. Env `DEVICE_BRIDGE_HOST`, default 127.0.0.1. */
  readonly host: string;
  /**
   * Device credentials, `tenant:device:token` separated by commas. Env `DEVICE_TOKENS`. Tokens are hashed as soon as
   * they are read and only the hashes are kept.
   */
  readonly devices: readonly DeviceCredentialConfig[];
  /** How long a dispatched call may take before it is cancelled and marked outcome_unknown, in ms. Default 60 s. */
  readonly executionTimeoutMs: number;
  /** Heartbeat interval for device connections, in ms. Default 15 s. */
  readonly heartbeatMs: number;
  /**
   * How long an authorized call may wait for its device to connect, counted from the authorization, in ms; past it
   * the call is sealed as expired. Env `OFFLINE_DEADLINE_MS`, default 5 minutes.
   */
  readonly offlineDeadlineMs: number;
  /** How often the leader looks for calls past a deadline, in ms. Env `DEVICE_SWEEP_INTERVAL_MS`, default 1 s. */
  readonly sweepIntervalMs: number;
}

export function loadDeviceBridgeConfig(env: Env): DeviceBridgeConfig {
  const devices = (env.DEVICE_TOKENS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const [tenant, deviceId, token, ...rest] = entry.split(':');
      if (!tenant || !deviceId || !token || rest.length > 0) {
        throw new ConfigError(`DEVICE_TOKENS entry "${entry.split(':').slice(0, 2).join(':')}:…" must be tenant:device:token.`);
      }
      for (const [field, value] of [['tenant', tenant], ['device', deviceId]] as const) {
        const problem = identifierProblem(value);
        if (problem) throw new ConfigError(`DEVICE_TOKENS ${field} "${value}": ${problem}.`);
      }
      return { tenant, deviceId, token };
    });
  return Object.freeze({
    ...loadBaseConfig(env),
    port: intFrom(env, 'DEVICE_BRIDGE_PORT', 8082, 0, 65535),
    host: env.DEVICE_BRIDGE_HOST || '127.0.0.1',
    devices,
    executionTimeoutMs: intFrom(env, 'EXECUTION_TIMEOUT_MS', 60_000, 100, 3_600_000),
    heartbeatMs: intFrom(env, 'DEVICE_HEARTBEAT_MS', 15_000, 100, 600_000),
    offlineDeadlineMs: intFrom(env, 'OFFLINE_DEADLINE_MS', 300_000, 100, 7 * 24 * 3_600_000),
    sweepIntervalMs: intFrom(env, 'DEVICE_SWEEP_INTERVAL_MS', 1000, 50, 3_600_000),
  });
}

export const DEVICE_BRIDGE_CONFIG = Symbol('device-bridge.config');
