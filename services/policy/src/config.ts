import { intFrom, loadBaseConfig, type BaseConfig, type Env } from '@ormuz/service-kit';

/**
 * What a policy process does (docs/decisions/0021-policy-roles.md):
 * - `commands`: answers every policy command (submit, status, grants, keys, ...);
 * - `read-models`: runs the projections (call status, device screens) that those commands read.
 * One process runs both by default; a deployment that wants submits answered without projection work on the same
 * event loop runs each role in its own processes. Every role answers `health`.
 */
export type PolicyRole = 'commands' | 'read-models';
export const POLICY_ROLES: readonly PolicyRole[] = ['commands', 'read-models'];

export interface PolicyConfig extends BaseConfig {
  /** How long an owner has to decide on a staged call, in milliseconds. Env `APPROVAL_TTL_MS`, default 15 minutes. */
  readonly approvalTtlMs: number;
  /**
   * Grant rules for agents that have no grant of their own. Env `DEFAULT_GRANT`, comma separated, default
   * `ormuz,device` (the core tools and the device extension).
   */
  readonly defaultGrant: readonly string[];
  /** Env `POLICY_ROLES`, comma separated, default `commands,read-models` (both). */
  readonly roles: ReadonlySet<PolicyRole>;
}

function rolesFrom(env: Env): ReadonlySet<PolicyRole> {
  const named = (env.POLICY_ROLES ?? POLICY_ROLES.join(','))
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  const unknown = named.filter((r) => !(POLICY_ROLES as readonly string[]).includes(r));
  if (unknown.length > 0 || named.length === 0)
    throw new Error(
      `POLICY_ROLES must name one or more of ${POLICY_ROLES.join(', ')} (comma separated); got ${JSON.stringify(env.POLICY_ROLES)}.`,
    );
  return new Set(named as PolicyRole[]);
}

export function loadPolicyConfig(env: Env): PolicyConfig {
  return Object.freeze({
    ...loadBaseConfig(env),
    approvalTtlMs: intFrom(env, 'APPROVAL_TTL_MS', 15 * 60_000, 1000, 7 * 24 * 3_600_000),
    defaultGrant: (env.DEFAULT_GRANT ?? 'ormuz,device')
      .split(',')
      .map((r) => r.trim())
      .filter(Boolean),
    roles: rolesFrom(env),
  });
}

export const POLICY_CONFIG = Symbol('policy.config');
