import { intFrom, loadBaseConfig, type BaseConfig, type Env } from '@ormuz/service-kit';

export interface PolicyConfig extends BaseConfig {
  /** How long an owner has to decide on a staged call, in milliseconds. Env `APPROVAL_TTL_MS`, default 15 minutes. */
  readonly approvalTtlMs: number;
  /**
   * Grant rules for agents that have no grant of their own. Env `DEFAULT_GRANT`, comma separated, default
   * `ormuz,device` (the core tools and the device extension).
   */
  readonly defaultGrant: readonly string[];
}

export function loadPolicyConfig(env: Env): PolicyConfig {
  return Object.freeze({
    ...loadBaseConfig(env),
    approvalTtlMs: intFrom(env, 'APPROVAL_TTL_MS', 15 * 60_000, 1000, 7 * 24 * 3_600_000),
    defaultGrant: (env.DEFAULT_GRANT ?? 'ormuz,device')
      .split(',')
      .map((r) => r.trim())
      .filter(Boolean),
  });
}

export const POLICY_CONFIG = Symbol('policy.config');
