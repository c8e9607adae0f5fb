import { intFrom, loadBaseConfig, type BaseConfig, type Env } from '@ormuz/service-kit';

export interface AuditConfig extends BaseConfig {
  /** Messages applied per Postgres transaction by each projection. Env `AUDIT_BATCH_SIZE`, default 256. */
  readonly batchSize: number;
  /** How long one pull of a projection waits for messages, in milliseconds (at least 1000, the client's minimum). Env `AUDIT_PULL_MS`, default 1000. */
  readonly pullExpiresMs: number;
  /** How often tenants' retention rules are applied, in milliseconds. Env `AUDIT_RETENTION_INTERVAL_MS`, default 3600000 (hourly). */
  readonly retentionIntervalMs: number;
}

/** Reads audit's settings once at boot and freezes them. Throws ConfigError naming the variable. */
export function loadAuditConfig(env: Env): AuditConfig {
  return Object.freeze({
    ...loadBaseConfig(env),
    batchSize: intFrom(env, 'AUDIT_BATCH_SIZE', 256, 1, 4096),
    pullExpiresMs: intFrom(env, 'AUDIT_PULL_MS', 1000, 1000, 30_000),
    retentionIntervalMs: intFrom(env, 'AUDIT_RETENTION_INTERVAL_MS', 3_600_000, 1000, 86_400_000),
  });
}

export const AUDIT_CONFIG = Symbol('audit.config');
