/**
 * Environment is read once at boot into a typed, frozen config; nothing else reads `process.env`.
 */
import { AuthSettingsError, loadAuthSettings, type AuthSettings } from '@ormuz/auth';
import { identifierProblem } from '@ormuz/contracts';

/** Settings every service shares. */
export interface BaseConfig {
  /** NATS servers, comma separated. Env `NATS_URL`, default `nats://127.0.0.1:4222`. */
  readonly natsUrl: string;
  /** Optional NATS HTTP monitoring URL used to check sync settings. Env `NATS_MONITOR_URL`. */
  readonly natsMonitorUrl: string | undefined;
  /**
   * The NATS user this process connects as. Env `NATS_USER`; unset connects without credentials (a development server
   * without authorization). Under the shipped authorization (infra/nats/authorization.conf) each service has a user
   * of its own, named after it, whose subject permissions allow exactly what it does; the CLI and edge programs use
   * `cli`. The user also names the process's reply inboxes (`_INBOX.<user>.…`), which only that user may read.
   */
  readonly natsUser: string | undefined;
  /** The NATS user's password. Env `NATS_PASSWORD`; required with `NATS_USER`. Never logged. */
  readonly natsPassword: string | undefined;
  /**
   * Copies of each stream the service declares (JetStream replicas). Env `ORMUZ_STREAM_REPLICAS`, 1 to 5, default 1:
   * 3 on a three-node NATS cluster, where one server may be lost without losing an acknowledged event
   * (libs/event-log `ensureStreams`).
   */
  readonly streamReplicas: number;
  /**
   * Postgres connection string. Env `DATABASE_URL`, default `postgres://postgres@127.0.0.1:5432/<namespace>`: each
   * namespace has a database of its own, which refuses every other namespace (decision 0009).
   */
  readonly databaseUrl: string;
  /** True when `databaseUrl` is the namespace's default database, which is created on first start if missing. */
  readonly createDatabase: boolean;
  /** Subject, stream and database namespace. Env `ORMUZ_NAMESPACE`, default `ormuz`. */
  readonly namespace: string;
  /** pino level. Env `LOG_LEVEL`, default `info`. */
  readonly logLevel: string;
  /**
   * How people's tokens are verified (`ORMUZ_AUTH_*`): an OpenID-Connect issuer, or the development issuer when
   * `ORMUZ_AUTH_ISSUER` is unset (libs/auth `loadAuthSettings`).
   */
  readonly auth: AuthSettings;
  /** The probes' HTTP listener (`/livez`, `/readyz`); undefined when `HEALTH_PORT` is unset. */
  readonly health: HealthSettings | undefined;
}

/** Where the probes listen and what readiness tolerates (decision 0022). */
export interface HealthSettings {
  /** Env `HEALTH_PORT` (0: any free port). Unset: no probe listener (health stays a NATS command only). */
  readonly port: number;
  /** Bind address. Env `HEALTH_HOST`, default 127.0.0.1; `0.0.0.0` in a pod, where the kubelet probes the pod's IP. */
  readonly host: string;
  /**
   * The most messages a running consumer of the log may have after its checkpoint before the process is not ready.
   * Env `HEALTH_MAX_LAG`, default 10000 (a few tenths of a second of a busy projection's throughput).
   */
  readonly maxLag: number;
  /** How long one readiness check may take, in milliseconds, before it counts as failed. Env `HEALTH_CHECK_TIMEOUT_MS`, default 2000. */
  readonly checkTimeoutMs: number;
}

/** Raised at boot when the environment is invalid; the message names the variable and the fix. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export type Env = Readonly<Record<string, string | undefined>>;

/** Reads an integer variable within bounds. */
export function intFrom(env: Env, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name}=${raw} is not an integer between ${min} and ${max}.`);
  }
  return n;
}

/** The database a namespace uses when `DATABASE_URL` is unset: the local server, a database named after it. */
export function defaultDatabaseUrl(namespace: string): string {
  return `postgres://postgres@127.0.0.1:5432/${namespace}`;
}

/** Reads the shared settings and freezes them. Throws {@link ConfigError}. */
export function loadBaseConfig(env: Env): BaseConfig {
  const namespace = env.ORMUZ_NAMESPACE || 'ormuz';
  const problem = identifierProblem(namespace);
  if (problem || namespace.includes('-')) {
    throw new ConfigError(`ORMUZ_NAMESPACE=${namespace} cannot be used: use letters, digits and '_' only.`);
  }
  const natsUser = env.NATS_USER || undefined;
  const natsPassword = env.NATS_PASSWORD || undefined;
  if (natsUser !== undefined && !/^[A-Za-z0-9_-]+$/.test(natsUser)) {
    // The user names the reply inbox prefix (`_INBOX.<user>`), so it must be one subject token.
    throw new ConfigError(`NATS_USER=${natsUser} cannot be used: use letters, digits, '_' and '-' only.`);
  }
  if ((natsUser === undefined) !== (natsPassword === undefined)) {
    throw new ConfigError(
      natsUser === undefined
        ? 'NATS_PASSWORD is set without NATS_USER: set both (the NATS user of this process, see infra/README.md) or neither.'
        : `NATS_USER=${natsUser} is set without NATS_PASSWORD: set its password too (see infra/README.md).`,
    );
  }
  return Object.freeze({
    natsUrl: env.NATS_URL || 'nats://127.0.0.1:4222',
    natsMonitorUrl: env.NATS_MONITOR_URL || undefined,
    natsUser,
    natsPassword,
    streamReplicas: intFrom(env, 'ORMUZ_STREAM_REPLICAS', 1, 1, 5),
    databaseUrl: env.DATABASE_URL || defaultDatabaseUrl(namespace),
    createDatabase: !env.DATABASE_URL,
    namespace,
    logLevel: env.LOG_LEVEL || 'info',
    auth: authSettings(env),
    health: healthSettings(env),
  });
}

function healthSettings(env: Env): HealthSettings | undefined {
  if (env.HEALTH_PORT === undefined || env.HEALTH_PORT === '') return undefined;
  return Object.freeze({
    port: intFrom(env, 'HEALTH_PORT', 0, 0, 65535),
    host: env.HEALTH_HOST || '127.0.0.1',
    maxLag: intFrom(env, 'HEALTH_MAX_LAG', 10_000, 0),
    checkTimeoutMs: intFrom(env, 'HEALTH_CHECK_TIMEOUT_MS', 2000, 1, 60_000),
  });
}

function authSettings(env: Env): AuthSettings {
  try {
    return loadAuthSettings(env);
  } catch (err) {
    if (err instanceof AuthSettingsError) throw new ConfigError(err.message);
    throw err;
  }
}
