/**
 * API keys kept in Postgres (schema `auth`): issue, rotate with an overlap, revoke, list, and `verify`, which turns a
 * presented key into the agent it authenticates. Every verification reads the stored row: there is no cache, so a
 * revocation holds from the next request on, on every replica of every service.
 */
import type { ApiKeyVerifier } from '../authenticator.js';
import type { Kysely } from 'kysely';
import {
  assertIdentifier,
  OrmuzError,
  type ApiKeyViewV1,
  type IssueApiKeyRequestV1,
  type IssuedApiKeyV1,
  type ListApiKeysRequestV1,
  type RevokeApiKeysRequestV1,
  type RevokedApiKeysV1,
  type RotateApiKeyRequestV1,
} from '@ormuz/contracts';
import { UnauthenticatedError } from '../errors.js';
import type { AgentIdentity } from '../identity.js';
import { AUTH_SCHEMA } from '../migrations.js';
import { API_KEY_PREFIX, apiKeyMatches, hashApiKey, newApiKey, parseApiKey } from './api-key.js';

export interface ApiKeysTable {
  key_id: string;
  tenant: string;
  agent_id: string;
  label: string | null;
  key_sha256: Buffer;
  via: 'issue' | 'rotate';
  created_at: Date;
  rotated_at: Date | null;
  replaced_by: string | null;
  expires_at: Date | null;
  revoked_at: Date | null;
}

/** The tables of schema `auth` this store reads and writes. */
export interface ApiKeysDatabase {
  api_keys: ApiKeysTable;
}

type ApiKeyRow = ApiKeysTable;

/** Default overlap of a rotation: the old key keeps working for an hour, as a device's old token does. */
export const DEFAULT_API_KEY_GRACE_SECONDS = 3600;

/** Most keys one `list` returns: a reply stays far below NATS's message size. */
const LIST_LIMIT = 1000;

/** A revoke that names a key the agent does not have (in that tenant). */
export class ApiKeyNotFoundError extends OrmuzError {
  readonly code = 'api_key_not_found';
}

export interface ApiKeyStoreOptions {
  /** The clock every issue, rotation, revocation and verification reads. Default: the system clock. */
  readonly now?: () => Date;
}

/** True while the key is neither revoked nor past its end. */
const isActive = (row: Pick<ApiKeyRow, 'expires_at' | 'revoked_at'>, now: Date): boolean =>
  row.revoked_at === null && (row.expires_at === null || row.expires_at > now);

/** A key as operators see it: never the key, never its hash. */
export function apiKeyView(row: ApiKeyRow, now: Date): ApiKeyViewV1 {
  return {
    key_id: row.key_id,
    tenant: row.tenant,
    agent_id: row.agent_id,
    label: row.label,
    via: row.via,
    created_at: row.created_at.toISOString(),
    rotated_at: row.rotated_at?.toISOString() ?? null,
    replaced_by: row.replaced_by,
    expires_at: row.expires_at?.toISOString() ?? null,
    revoked_at: row.revoked_at?.toISOString() ?? null,
    state: row.revoked_at ? 'revoked' : isActive(row, now) ? 'active' : 'expired',
  };
}

/** The only code that reads or writes API keys; also how every service verifies one (ApiKeyVerifier). */
export class ApiKeyStore implements ApiKeyVerifier {
  private readonly db: Kysely<ApiKeysDatabase>;
  private readonly now: () => Date;

  constructor(db: Kysely<ApiKeysDatabase>, options: ApiKeyStoreOptions = {}) {
    this.db = db.withSchema(AUTH_SCHEMA);
    this.now = options.now ?? (() => new Date());
  }

  /** Credentials that start like an API key are verified as one (and never as a JWT). */
  recognises(credential: string): boolean {
    return credential.startsWith(API_KEY_PREFIX);
  }

  /**
   * The agent a presented key authenticates. Throws UnauthenticatedError, saying why, for a malformed key, a key
   * nobody was issued (or a wrong secret for a real key id: the same answer, so a key id alone tells nothing), a
   * revoked key and a key past the end of its rotation's grace period.
   */
  async verify(presented: unknown): Promise<AgentIdentity> {
    const { keyId, key } = parseApiKey(presented);
    const row = await this.db.selectFrom('api_keys').selectAll().where('key_id', '=', keyId).executeTakeFirst();
    if (!row || !apiKeyMatches(key, row.key_sha256)) {
      throw new UnauthenticatedError(
        `API key ${keyId} is not known: it was never issued in this namespace, or it was copied wrong. ` +
          'An operator issues one with `ormuz keys issue --tenant <tenant> --agent <agent>`.',
      );
    }
    const owner = `agent ${row.agent_id} of tenant ${row.tenant}`;
    if (row.revoked_at) {
      throw new UnauthenticatedError(
        `API key ${keyId} (${owner}) was revoked at ${row.revoked_at.toISOString()}. Ask an operator for a new key.`,
      );
    }
    if (!isActive(row, this.now())) {
      const replaced = row.replaced_by ? `; key ${row.replaced_by} replaced it: use that one` : '';
      throw new UnauthenticatedError(
        `API key ${keyId} (${owner}) stopped working at ${row.expires_at!.toISOString()}, when the grace period of ` +
          `its rotation ended${replaced}.`,
      );
    }
    return Object.freeze({
      kind: 'agent',
      subject: `agent:${row.agent_id}`,
      tenant: row.tenant,
      agent_id: row.agent_id,
      key_id: row.key_id,
    });
  }

  /** A new key for the agent, beside any it has. The answer is the only place the key ever appears. */
  issue(request: IssueApiKeyRequestV1): Promise<IssuedApiKeyV1> {
    return this.insert(this.db, request, 'issue', this.now());
  }

  /**
   * A new key for the agent; its other active keys end after `grace_seconds` (default {@link DEFAULT_API_KEY_GRACE_SECONDS};
   * 0: now), each recording when and by which key it was replaced. A key that already ends sooner keeps its end.
   */
  rotate(request: RotateApiKeyRequestV1): Promise<IssuedApiKeyV1> {
    const now = this.now();
    const endsAt = new Date(now.getTime() + (request.grace_seconds ?? DEFAULT_API_KEY_GRACE_SECONDS) * 1000);
    return this.db.transaction().execute(async (trx) => {
      const issued = await this.insert(trx, request, 'rotate', now);
      await trx
        .updateTable('api_keys')
        .set({ expires_at: endsAt, rotated_at: now, replaced_by: issued.key.key_id })
        .where('tenant', '=', request.tenant)
        .where('agent_id', '=', request.agent_id)
        .where('key_id', '!=', issued.key.key_id)
        .where('revoked_at', 'is', null)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', endsAt)]))
        .execute();
      return issued;
    });
  }

  /**
   * Revokes one key of the agent, or all of them; from now on they fail verification. Returns the ids revoked now
   * (a key revoked before is not counted again). Throws ApiKeyNotFoundError when `key_id` names no key of this agent
   * in this tenant.
   */
  async revoke(request: RevokeApiKeysRequestV1): Promise<RevokedApiKeysV1> {
    let update = this.db
      .updateTable('api_keys')
      .set({ revoked_at: this.now() })
      .where('tenant', '=', request.tenant)
      .where('agent_id', '=', request.agent_id)
      .where('revoked_at', 'is', null);
    if (request.key_id !== undefined) update = update.where('key_id', '=', request.key_id);
    const revoked = (await update.returning('key_id').execute()).map((r) => r.key_id).sort();
    if (request.key_id !== undefined && revoked.length === 0) {
      const known = await this.db
        .selectFrom('api_keys')
        .select('key_id')
        .where('tenant', '=', request.tenant)
        .where('agent_id', '=', request.agent_id)
        .where('key_id', '=', request.key_id)
        .executeTakeFirst();
      if (!known) {
        throw new ApiKeyNotFoundError(
          `Agent ${request.agent_id} of tenant ${request.tenant} has no API key ${request.key_id}. ` +
            `\`ormuz keys list --tenant ${request.tenant} --agent ${request.agent_id}\` lists its keys.`,
        );
      }
    }
    return { revoked };
  }

  /** The tenant's keys (or one agent's), by agent, oldest first; at most 1000. Never a key, never a hash. */
  async list(request: ListApiKeysRequestV1): Promise<{ keys: ApiKeyViewV1[] }> {
    let query = this.db.selectFrom('api_keys').selectAll().where('tenant', '=', request.tenant);
    if (request.agent_id !== undefined) query = query.where('agent_id', '=', request.agent_id);
    const rows = await query.orderBy('agent_id').orderBy('created_at').orderBy('key_id').limit(LIST_LIMIT).execute();
    const now = this.now();
    return { keys: rows.map((row) => apiKeyView(row, now)) };
  }

  private async insert(
    db: Kysely<ApiKeysDatabase>,
    request: IssueApiKeyRequestV1,
    via: ApiKeyRow['via'],
    now: Date,
  ): Promise<IssuedApiKeyV1> {
    const { keyId, key } = newApiKey();
    const row: ApiKeyRow = {
      key_id: keyId,
      tenant: assertIdentifier('tenant', request.tenant),
      agent_id: assertIdentifier('agent_id', request.agent_id),
      label: request.label ?? null,
      key_sha256: hashApiKey(key),
      via,
      created_at: now,
      rotated_at: null,
      replaced_by: null,
      expires_at: null,
      revoked_at: null,
    };
    await db.insertInto('api_keys').values(row).execute();
    return { key: apiKeyView(row, now), api_key: key };
  }
}
