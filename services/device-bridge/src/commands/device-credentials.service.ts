/**
 * Device credentials kept in Postgres: issue, rotate with an overlap, revoke, list, and the check a `hello` goes
 * through. Ending a credential (revocation, a rotation without grace) also ends the connections that used it, on
 * whichever replica holds them (through {@link CredentialsEndedListener}). Every issue, rotation and revocation is
 * also recorded on the `devices` stream, for the audit trail (never the token, never its hash).
 */
import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import {
  DeviceEventType,
  type DeviceCredentialViewV1,
  type HelloFrameV1,
  type IssueCredentialRequestV1,
  type IssuedCredentialV1,
  type ListCredentialsRequestV1,
  type RevokeCredentialRequestV1,
  type RotateCredentialRequestV1,
} from '@ormuz/contracts';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';
import { DEVICE_BRIDGE_CONFIG, type DeviceBridgeConfig } from '../config.js';
import {
  CredentialNotFoundError,
  hashToken,
  isActive,
  matchToken,
  newToken,
  type AuthenticatedDevice,
} from '../domain/device-credentials.js';
import { CredentialsRepository, type CredentialRow } from '../persistence/credentials.repository.js';
import { DeviceEventsRecorder } from './device-events.recorder.js';

/** Told which credentials ended now, so the connections that used them are closed. */
export interface CredentialsEndedListener {
  credentialsEnded(tenant: string, deviceId: string, credentialIds: readonly string[]): void;
}

/** Default overlap of a rotation: the old token keeps working for an hour. */
const DEFAULT_GRACE_SECONDS = 3600;

export function credentialView(row: CredentialRow, now = new Date()): DeviceCredentialViewV1 {
  return {
    credential_id: row.credential_id,
    tenant: row.tenant,
    device_id: row.device_id,
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at?.toISOString() ?? null,
    revoked_at: row.revoked_at?.toISOString() ?? null,
    state: row.revoked_at ? 'revoked' : isActive({ expiresAt: row.expires_at, revokedAt: null }, now) ? 'active' : 'expired',
  };
}

@Injectable()
export class DeviceCredentialsService implements OnApplicationBootstrap {
  private listener: CredentialsEndedListener | undefined;

  constructor(
    private readonly repo: CredentialsRepository,
    private readonly events: DeviceEventsRecorder,
    @Inject(DEVICE_BRIDGE_CONFIG) private readonly config: DeviceBridgeConfig,
    @Inject(INFRA) private readonly infra: Infrastructure,
  ) {}

  onEnded(listener: CredentialsEndedListener): void {
    this.listener = listener;
  }

  /**
   * Tokens given in `DEVICE_TOKENS` (local development, the demo, tests) are stored like issued ones, hashed. Taking
   * one out of the variable does not revoke it: use `ormuz device credentials revoke`.
   */
  async onApplicationBootstrap(): Promise<void> {
    for (const d of this.config.devices) {
      const tokenSha256 = hashToken(d.token);
      const row: CredentialRow = {
        credential_id: `env-${tokenSha256.toString('hex').slice(0, 16)}`,
        tenant: d.tenant,
        device_id: d.deviceId,
        token_sha256: tokenSha256,
        created_at: new Date(),
        expires_at: null,
        revoked_at: null,
      };
      if (await this.store(row, 'env')) this.infra.logger.info({ tenant: d.tenant, device: d.deviceId }, 'device credential from DEVICE_TOKENS stored');
    }
  }

  /**
   * The identity a hello's token proves, or null (unknown, revoked or expired token). A valid token of another
   * device or tenant proves that other identity, which the gateway then refuses as `identity_mismatch`.
   */
  async authenticate(hello: HelloFrameV1): Promise<AuthenticatedDevice | null> {
    const now = new Date();
    const match = matchToken(hello.token, await this.repo.candidates(hello.tenant, hello.device_id), now);
    if (match) return { tenant: hello.tenant, deviceId: hello.device_id, credentialId: match.credentialId, expiresAt: match.expiresAt };
    // The hash is of a 256-bit random secret: looking it up by equality tells a caller nothing it could guess from.
    const owner = await this.repo.owner(hashToken(hello.token));
    if (!owner || !isActive(owner, now)) return null;
    return { tenant: owner.tenant, deviceId: owner.deviceId, credentialId: owner.credentialId, expiresAt: owner.expiresAt };
  }

  /**
   * Stores a credential and records that it was issued; false when the same token was stored before. A credential
   * whose issue could not be recorded is revoked again, so no token works without its trace in the log.
   */
  private async store(row: CredentialRow, via: 'issue' | 'rotate' | 'env'): Promise<boolean> {
    if (!(await this.repo.insert(row))) return false;
    try {
      await this.events.record(row.tenant, row.device_id, {
        type: DeviceEventType.CredentialIssued,
        data: { device_id: row.device_id, credential_id: row.credential_id, via, expires_at: row.expires_at?.toISOString() ?? null },
      });
    } catch (err) {
      await this.repo.revoke(row.tenant, row.device_id, row.credential_id, new Date());
      throw err;
    }
    return true;
  }

  async issue(req: IssueCredentialRequestV1, via: 'issue' | 'rotate' = 'issue'): Promise<IssuedCredentialV1> {
    const token = newToken();
    const now = new Date();
    const row: CredentialRow = {
      credential_id: `cred-${randomUUID()}`,
      tenant: req.tenant,
      device_id: req.device_id,
      token_sha256: hashToken(token),
      created_at: now,
      expires_at: req.ttl_seconds ? new Date(now.getTime() + req.ttl_seconds * 1000) : null,
      revoked_at: null,
    };
    await this.store(row, via);
    this.infra.logger.info({ tenant: req.tenant, device: req.device_id, credential: row.credential_id }, 'device credential issued');
    return { credential: credentialView(row, now), token };
  }

  /** A new token; the device's other tokens end after the grace period (now, when it is 0). */
  async rotate(req: RotateCredentialRequestV1): Promise<IssuedCredentialV1> {
    const issued = await this.issue(req, 'rotate');
    const grace = req.grace_seconds ?? DEFAULT_GRACE_SECONDS;
    const endsAt = new Date(Date.now() + grace * 1000);
    const shortened = await this.repo.endOthers(req.tenant, req.device_id, issued.credential.credential_id, endsAt);
    this.infra.logger.info({ tenant: req.tenant, device: req.device_id, ended: shortened.length, grace }, 'device credentials rotated');
    if (shortened.length > 0) {
      await this.events.record(req.tenant, req.device_id, {
        type: DeviceEventType.CredentialsEnded,
        data: { device_id: req.device_id, credential_ids: shortened, reason: 'rotated', ends_at: endsAt.toISOString() },
      });
    }
    if (grace === 0 && shortened.length > 0) this.listener?.credentialsEnded(req.tenant, req.device_id, shortened);
    return issued;
  }

  async revoke(req: RevokeCredentialRequestV1): Promise<{ revoked: string[] }> {
    const now = new Date();
    const revoked = await this.repo.revoke(req.tenant, req.device_id, req.credential_id, now);
    if (req.credential_id && revoked.length === 0) {
      const row = await this.repo.find(req.tenant, req.credential_id);
      if (!row || row.device_id !== req.device_id) {
        throw new CredentialNotFoundError(`Device ${req.device_id} of tenant ${req.tenant} has no credential ${req.credential_id}.`);
      }
    }
    this.infra.logger.info({ tenant: req.tenant, device: req.device_id, revoked }, 'device credentials revoked');
    if (revoked.length > 0) {
      await this.events.record(req.tenant, req.device_id, {
        type: DeviceEventType.CredentialsEnded,
        data: { device_id: req.device_id, credential_ids: revoked, reason: 'revoked', ends_at: now.toISOString() },
      });
    }
    if (revoked.length > 0) this.listener?.credentialsEnded(req.tenant, req.device_id, revoked);
    return { revoked };
  }

  async list(req: ListCredentialsRequestV1): Promise<{ credentials: DeviceCredentialViewV1[] }> {
    const now = new Date();
    return { credentials: (await this.repo.list(req.tenant, req.device_id)).map((r) => credentialView(r, now)) };
  }
}
