import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';
import type { StoredCredential } from '../domain/device-credentials.js';
import { DEVICE_BRIDGE_SCHEMA } from './migrations.js';

export interface DeviceCredentialsTable {
  credential_id: string;
  tenant: string;
  device_id: string;
  token_sha256: Buffer;
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
}

export type CredentialRow = DeviceCredentialsTable;

interface CredentialsDB {
  device_credentials: DeviceCredentialsTable;
}

const stored = (row: CredentialRow): StoredCredential => ({
  credentialId: row.credential_id,
  tokenSha256: row.token_sha256,
  expiresAt: row.expires_at,
  revokedAt: row.revoked_at,
});

/** The only code that reads or writes device credentials. */
@Injectable()
export class CredentialsRepository {
  private readonly db: Kysely<CredentialsDB>;
  constructor(@Inject(INFRA) infra: Infrastructure) {
    this.db = (infra.db as Kysely<CredentialsDB>).withSchema(DEVICE_BRIDGE_SCHEMA);
  }

  /** The device's credentials that are not revoked (expired ones included: the caller judges time). */
  async candidates(tenant: string, deviceId: string): Promise<StoredCredential[]> {
    const rows = await this.db
      .selectFrom('device_credentials')
      .selectAll()
      .where('tenant', '=', tenant)
      .where('device_id', '=', deviceId)
      .where('revoked_at', 'is', null)
      .execute();
    return rows.map(stored);
  }

  /** Who owns the credential with this token hash, when one is stored and not revoked (expired ones included). */
  async owner(tokenSha256: Buffer): Promise<(StoredCredential & { tenant: string; deviceId: string }) | undefined> {
    const row = await this.db
      .selectFrom('device_credentials')
      .selectAll()
      .where('token_sha256', '=', tokenSha256)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return row && { ...stored(row), tenant: row.tenant, deviceId: row.device_id };
  }

  /** Inserts a credential; false when a credential with the same token hash exists already (nothing changes). */
  async insert(row: CredentialRow): Promise<boolean> {
    const result = await this.db
      .insertInto('device_credentials')
      .values(row)
      .onConflict((oc) => oc.column('token_sha256').doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  /**
   * Gives the device's active credentials other than `keep` an expiry no later than `endsAt`. Returns the ids whose
   * validity was shortened.
   */
  async endOthers(tenant: string, deviceId: string, keep: string, endsAt: Date): Promise<string[]> {
    const rows = await this.db
      .updateTable('device_credentials')
      .set({ expires_at: endsAt })
      .where('tenant', '=', tenant)
      .where('device_id', '=', deviceId)
      .where('credential_id', '!=', keep)
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', endsAt)]))
      .returning('credential_id')
      .execute();
    return rows.map((r) => r.credential_id);
  }

  /** Revokes one credential of the device, or all of them; returns the ids revoked now. */
  async revoke(tenant: string, deviceId: string, credentialId: string | undefined, at: Date): Promise<string[]> {
    let q = this.db
      .updateTable('device_credentials')
      .set({ revoked_at: at })
      .where('tenant', '=', tenant)
      .where('device_id', '=', deviceId)
      .where('revoked_at', 'is', null);
    if (credentialId) q = q.where('credential_id', '=', credentialId);
    const rows = await q.returning('credential_id').execute();
    return rows.map((r) => r.credential_id).sort();
  }

  find(tenant: string, credentialId: string): Promise<CredentialRow | undefined> {
    return this.db
      .selectFrom('device_credentials')
      .selectAll()
      .where('tenant', '=', tenant)
      .where('credential_id', '=', credentialId)
      .executeTakeFirst();
  }

  list(tenant: string, deviceId?: string): Promise<CredentialRow[]> {
    let q = this.db.selectFrom('device_credentials').selectAll().where('tenant', '=', tenant);
    if (deviceId) q = q.where('device_id', '=', deviceId);
    return q.orderBy('device_id').orderBy('created_at').limit(1000).execute();
  }
}
