import { CONTEXTS, type ContextName } from '@ormuz/contracts';
import { intFrom, loadBaseConfig, type BaseConfig, type Env } from '@ormuz/service-kit';

export interface ApprovalsConfig extends BaseConfig {
  /** HTTP port of the owner-facing API. Env `APPROVALS_PORT`, default 8081 (0: any free port). */
  readonly httpPort: number;
  /** HTTP bind address. Env `APPROVALS_HOST`, default 127.0.0.1. */
  readonly httpHost: string;
  /** How often pending approvals are checked for expiry, in milliseconds. Env `APPROVAL_SWEEP_MS`, default 1000. */
  readonly sweepIntervalMs: number;
}

export function loadApprovalsConfig(env: Env): ApprovalsConfig {
  return Object.freeze({
    ...loadBaseConfig(env),
    httpPort: intFrom(env, 'APPROVALS_PORT', 8081, 0, 65535),
    httpHost: env.APPROVALS_HOST || '127.0.0.1',
    sweepIntervalMs: intFrom(env, 'APPROVAL_SWEEP_MS', 1000, 50, 3_600_000),
  });
}

export const APPROVALS_CONFIG = Symbol('approvals.config');

/**
 * Streams approvals declares at start: `calls`, whose staged calls fill the inbox, and every other context's, which the
 * HTTP API's event stream reads. Declaring them is idempotent, so the services can start in any order.
 */
export const APPROVALS_STREAMS: readonly ContextName[] = Object.keys(CONTEXTS) as ContextName[];
