/**
 * Device credentials: a token per device, bound to one tenant, kept only as a SHA-256 hash and compared in constant
 * time. Rotation and storage in Postgres come with the device-bridge hardening work; the shape here already allows
 * several valid tokens per device so a rotation can overlap.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

export interface DeviceIdentity {
  readonly tenant: string;
  readonly deviceId: string;
}

const hash = (token: string) => createHash('sha256').update(token, 'utf8').digest();

export class DeviceCredentials {
  private readonly hashes = new Map<string, Buffer[]>();

  constructor(entries: readonly { tenant: string; deviceId: string; token: string }[]) {
    for (const e of entries) {
      const key = `${e.tenant}/${e.deviceId}`;
      this.hashes.set(key, [...(this.hashes.get(key) ?? []), hash(e.token)]);
    }
  }

  /** The device's identity when the token is valid for that tenant and device; null otherwise. */
  verify(tenant: string, deviceId: string, token: string): DeviceIdentity | null {
    const known = this.hashes.get(`${tenant}/${deviceId}`);
    if (!known) return null;
    const candidate = hash(token);
    return known.some((h) => timingSafeEqual(h, candidate)) ? { tenant, deviceId } : null;
  }
}
