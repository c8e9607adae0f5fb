/**
 * Device credentials: a random token per device, bound to one tenant and one device id. Only the token's SHA-256 is
 * kept (a 256-bit random token needs no slow hash: there is nothing to guess from), compared in constant time.
 * A device may hold several valid tokens at once, so a rotation can overlap: the old token keeps working until its
 * grace period ends.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { OrmuzError } from '@ormuz/contracts';

export interface DeviceIdentity {
  readonly tenant: string;
  readonly deviceId: string;
}

/** Who a valid token authenticates, and until when. */
export interface AuthenticatedDevice extends DeviceIdentity {
  readonly credentialId: string;
  /** Null: valid until revoked. */
  readonly expiresAt: Date | null;
}

/** A stored credential: the hash, never the token. */
export interface StoredCredential {
  readonly credentialId: string;
  readonly tokenSha256: Buffer;
  readonly expiresAt: Date | null;
  readonly revokedAt: Date | null;
}

/** Tokens carry a recognisable prefix so a leaked one is easy to find in logs and secret scanners. */
const TOKEN_PREFIX = 'odt_';

export const hashToken = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

/** A new token: 32 random bytes, base64url, with the `odt_` prefix. */
export function newToken(): string {
  return `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/** True while the credential is neither revoked nor past its expiry. */
export function isActive(credential: Pick<StoredCredential, 'expiresAt' | 'revokedAt'>, now: Date): boolean {
  return credential.revokedAt === null && (credential.expiresAt === null || credential.expiresAt > now);
}

/**
 * The credential a token matches among a device's stored ones, or null. Every active candidate is compared, so the
 * time taken does not tell which one matched.
 */
export function matchToken(token: string, candidates: readonly StoredCredential[], now: Date): StoredCredential | null {
  const presented = hashToken(token);
  let match: StoredCredential | null = null;
  for (const c of candidates) {
    if (c.tokenSha256.length === presented.length && timingSafeEqual(c.tokenSha256, presented) && isActive(c, now)) match = c;
  }
  return match;
}

/** A revoke or list that names a credential the device does not have. */
export class CredentialNotFoundError extends OrmuzError {
  readonly code = 'credential_not_found';
}

/**
 * Tokens known without a database: the benchmark's stand-alone gateway uses it. The service keeps credentials in
 * Postgres ({@link DeviceCredentialsService}).
 */
export class DeviceCredentials {
  private readonly hashes = new Map<string, StoredCredential[]>();

  constructor(entries: readonly { tenant: string; deviceId: string; token: string }[]) {
    for (const e of entries) {
      const key = `${e.tenant}/${e.deviceId}`;
      const stored = { credentialId: `static-${this.hashes.size}`, tokenSha256: hashToken(e.token), expiresAt: null, revokedAt: null };
      this.hashes.set(key, [...(this.hashes.get(key) ?? []), stored]);
    }
  }

  verify(tenant: string, deviceId: string, token: string): AuthenticatedDevice | null {
    const match = matchToken(token, this.hashes.get(`${tenant}/${deviceId}`) ?? [], new Date());
    return match ? { tenant, deviceId, credentialId: match.credentialId, expiresAt: match.expiresAt } : null;
  }
}
