/**
 * How services verify people's tokens, read once from the environment. With `ORMUZ_AUTH_ISSUER` unset they trust the
 * development issuer (a key created on first use under `ORMUZ_DEV_ISSUER_DIR`), which is what the demo, the tests and
 * a local start use; production points them at an OpenID-Connect provider instead (README: "Signing in").
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { DEV_AUDIENCE, DEV_ISSUER } from './dev-issuer.js';

export interface ClaimMapping {
  /** Dot path of the claim naming the tenant (`*`: every tenant, for platform administrators). */
  readonly tenant: string;
  /** Dot path of the roles claim: an array of strings or one space-separated string. */
  readonly roles: string;
  /** Prefix stripped from each role before it is matched (`ormuz-` turns `ormuz-owner` into `owner`); others ignored. */
  readonly rolePrefix: string;
  /** Dot path of the claim listing the agents an owner decides for; absent means every agent of the tenant. */
  readonly agents: string;
}

export interface AuthSettings {
  readonly issuer: string;
  readonly audience: string;
  /** Where the issuer's public keys are: a JWKS URL (fetched and cached) or a JWKS file. */
  readonly jwks: { readonly url: string } | { readonly file: string };
  readonly claims: ClaimMapping;
  /** Accepted signing algorithms; never `none`, never a symmetric one (a public key must not verify an HMAC). */
  readonly algorithms: readonly string[];
  /** Seconds of clock difference tolerated on `exp` and `nbf`. */
  readonly clockToleranceSeconds: number;
  /** Set when the development issuer is in use: its key directory. */
  readonly devIssuerDir: string | undefined;
}

export const DEFAULT_ALGORITHMS = Object.freeze(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA']);

/** Raised when the auth environment is incomplete or contradictory; names the variable. */
export class AuthSettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AuthSettingsError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

/** The development issuer's key directory: `ORMUZ_DEV_ISSUER_DIR`, else `$XDG_CONFIG_HOME/ormuz/dev-issuer`. */
export function devIssuerDir(env: Env): string {
  if (env.ORMUZ_DEV_ISSUER_DIR) return env.ORMUZ_DEV_ISSUER_DIR;
  const config = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(config, 'ormuz', 'dev-issuer');
}

export function loadAuthSettings(env: Env): AuthSettings {
  const claims: ClaimMapping = Object.freeze({
    tenant: env.ORMUZ_AUTH_TENANT_CLAIM || 'ormuz_tenant',
    roles: env.ORMUZ_AUTH_ROLES_CLAIM || 'ormuz_roles',
    rolePrefix: env.ORMUZ_AUTH_ROLE_PREFIX ?? '',
    agents: env.ORMUZ_AUTH_AGENTS_CLAIM || 'ormuz_agents',
  });
  const algorithms = env.ORMUZ_AUTH_ALGORITHMS ? env.ORMUZ_AUTH_ALGORITHMS.split(',').map((a) => a.trim()) : DEFAULT_ALGORITHMS;
  const weak = algorithms.filter((a) => a === 'none' || a.startsWith('HS') || !DEFAULT_ALGORITHMS.includes(a));
  if (weak.length > 0) {
    throw new AuthSettingsError(`ORMUZ_AUTH_ALGORITHMS names ${weak.join(', ')}: only ${DEFAULT_ALGORITHMS.join(', ')} are accepted.`);
  }
  const clockToleranceSeconds = Number(env.ORMUZ_AUTH_CLOCK_TOLERANCE_SECONDS || 30);
  if (!Number.isInteger(clockToleranceSeconds) || clockToleranceSeconds < 0 || clockToleranceSeconds > 300) {
    throw new AuthSettingsError('ORMUZ_AUTH_CLOCK_TOLERANCE_SECONDS must be an integer from 0 to 300.');
  }
  if (!env.ORMUZ_AUTH_ISSUER) {
    if (env.ORMUZ_AUTH_JWKS_URL || env.ORMUZ_AUTH_JWKS_FILE) {
      throw new AuthSettingsError('ORMUZ_AUTH_JWKS_URL or _FILE is set without ORMUZ_AUTH_ISSUER: set the issuer too.');
    }
    const dir = devIssuerDir(env);
    return Object.freeze({
      issuer: DEV_ISSUER,
      audience: env.ORMUZ_AUTH_AUDIENCE || DEV_AUDIENCE,
      jwks: { file: join(dir, 'jwks.json') },
      claims,
      algorithms,
      clockToleranceSeconds,
      devIssuerDir: dir,
    });
  }
  if (!env.ORMUZ_AUTH_AUDIENCE) throw new AuthSettingsError('ORMUZ_AUTH_ISSUER is set: set ORMUZ_AUTH_AUDIENCE too.');
  const url = env.ORMUZ_AUTH_JWKS_URL;
  const file = env.ORMUZ_AUTH_JWKS_FILE;
  if (url && file) throw new AuthSettingsError('Set ORMUZ_AUTH_JWKS_URL or ORMUZ_AUTH_JWKS_FILE, not both.');
  return Object.freeze({
    issuer: env.ORMUZ_AUTH_ISSUER,
    audience: env.ORMUZ_AUTH_AUDIENCE,
    // OpenID Connect providers publish their keys at <issuer>/.well-known/jwks.json unless discovery says otherwise.
    jwks: file ? { file } : { url: url || `${env.ORMUZ_AUTH_ISSUER.replace(/\/$/, '')}/.well-known/jwks.json` },
    claims,
    algorithms,
    clockToleranceSeconds,
    devIssuerDir: undefined,
  });
}
