import { intFrom, loadBaseConfig, type BaseConfig, type Env } from '@ormuz/service-kit';

export interface PolicyConfig extends BaseConfig {
  /** How long an owner has to decide on a staged call, in milliseconds. Env `APPROVAL_TTL_MS`, default 15 minutes. */
  readonly approvalTtlMs: number;
}

export function loadPolicyConfig(env: Env): PolicyConfig {
  return Object.freeze({
    ...loadBaseConfig(env),
    approvalTtlMs: intFrom(env, 'APPROVAL_TTL_MS', 15 * 60_000, 1000, 7 * 24 * 3_600_000),
  });
}

export const POLICY_CONFIG = Symbol('policy.config');
