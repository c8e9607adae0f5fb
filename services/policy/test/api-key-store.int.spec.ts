/**
 * The API key store (libs/auth) in a real Postgres: only hashes are stored, a rotation overlaps for its grace period (on an injected
 * clock), a revocation holds from the next verification on, lists never show a key or its hash, and a key or key id
 * of another tenant or agent reaches nothing.
 */
import { sql, type Kysely } from 'kysely';
import { migrateSchema, openDatabase } from '@ormuz/postgres';
import { createTestDatabase, type TestDatabase } from '@ormuz/testing';
import {
  ApiKeyNotFoundError,
  ApiKeyStore,
  AUTH_SCHEMA,
  authMigrations,
  hashApiKey,
  newApiKey,
  UnauthenticatedError,
  type ApiKeysDatabase,
} from '@ormuz/auth';

const TENANT = 'acme';
const START = Date.parse('2030-01-01T00:00:00Z');

describe('ApiKeyStore', () => {
  let database: TestDatabase;
  let db: Kysely<ApiKeysDatabase>;
  let store: ApiKeyStore;
  /** The store's clock: tests move it instead of waiting. */
  let now: Date;
  const later = (seconds: number) => (now = new Date(now.getTime() + seconds * 1000));

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await openDatabase<ApiKeysDatabase>({ url: database.url });
    expect(await migrateSchema(db, AUTH_SCHEMA, authMigrations)).toEqual(['0001_api_keys']);
    store = new ApiKeyStore(db, { now: () => now });
  });
  beforeEach(() => {
    now = new Date(START);
  });
  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  /** Why `presented` was refused; fails when it was accepted. */
  async function refusal(presented: unknown): Promise<string> {
    const err = await store.verify(presented).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UnauthenticatedError);
    expect(err).toMatchObject({ code: 'unauthenticated' });
    return (err as Error).message;
  }

  it('issues a key once, stores only its SHA-256, and verifies it as the agent of its tenant', async () => {
    const issued = await store.issue({ tenant: TENANT, agent_id: 'a1', label: 'ci runner' });
    expect(issued.api_key).toMatch(/^ormz_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    expect(issued.key).toEqual({
      key_id: issued.api_key.slice(5, 21),
      tenant: TENANT,
      agent_id: 'a1',
      label: 'ci runner',
      via: 'issue',
      created_at: new Date(START).toISOString(),
      rotated_at: null,
      replaced_by: null,
      expires_at: null,
      revoked_at: null,
      state: 'active',
    });

    const rows = await sql<{ key_sha256: Buffer; row_text: string }>`
      select key_sha256, k::text as row_text from ${sql.table(`${AUTH_SCHEMA}.api_keys`)} k
      where key_id = ${issued.key.key_id}`.execute(db);
    expect(rows.rows).toHaveLength(1);
    expect(rows.rows[0]!.key_sha256.equals(hashApiKey(issued.api_key))).toBe(true);
    expect(rows.rows[0]!.row_text).not.toContain(issued.api_key.slice(22));

    expect(await store.verify(issued.api_key)).toEqual({
      kind: 'agent',
      subject: 'agent:a1',
      tenant: TENANT,
      agent_id: 'a1',
      key_id: issued.key.key_id,
    });
  });

  it('refuses malformed keys, keys nobody was issued, and a real key id with a wrong secret', async () => {
    expect(await refusal('')).toMatch(/^This API key is malformed: it is empty/);
    expect(await refusal('Bearer ormz_x')).toMatch(/malformed: it contains whitespace/);
    const stranger = newApiKey();
    expect(await refusal(stranger.key)).toBe(
      `API key ${stranger.keyId} is not known: it was never issued in this namespace, or it was copied wrong. ` +
        'An operator issues one with `ormuz keys issue --tenant <tenant> --agent <agent>`.',
    );
    // A key id alone proves nothing, and learns nothing: the answer is the one for an unknown key.
    const real = await store.issue({ tenant: TENANT, agent_id: 'a2' });
    const forged = `${real.api_key.slice(0, 22)}${newApiKey().key.slice(22)}`;
    expect(await refusal(forged)).toMatch(new RegExp(`^API key ${real.key.key_id} is not known`));
    expect((await store.verify(real.api_key)).agent_id).toBe('a2');
  });

  it('rotation overlaps: both keys verify during the grace period, the old one fails after it', async () => {
    const first = await store.issue({ tenant: TENANT, agent_id: 'rot' });
    const second = await store.rotate({ tenant: TENANT, agent_id: 'rot', grace_seconds: 600 });
    expect(second.key).toMatchObject({ via: 'rotate', state: 'active', expires_at: null });

    later(599);
    expect((await store.verify(first.api_key)).key_id).toBe(first.key.key_id);
    expect((await store.verify(second.api_key)).key_id).toBe(second.key.key_id);

    later(1);
    expect(await refusal(first.api_key)).toBe(
      `API key ${first.key.key_id} (agent rot of tenant ${TENANT}) stopped working at ` +
        `${new Date(START + 600_000).toISOString()}, when the grace period of its rotation ended; ` +
        `key ${second.key.key_id} replaced it: use that one.`,
    );
    expect((await store.verify(second.api_key)).key_id).toBe(second.key.key_id);

    const keys = new Map((await store.list({ tenant: TENANT, agent_id: 'rot' })).keys.map((k) => [k.key_id, k]));
    expect(keys.size).toBe(2);
    expect(keys.get(second.key.key_id)).toMatchObject({ state: 'active', expires_at: null, replaced_by: null });
    expect(keys.get(first.key.key_id)).toMatchObject({
      state: 'expired',
      rotated_at: new Date(START).toISOString(),
      replaced_by: second.key.key_id,
      expires_at: new Date(START + 600_000).toISOString(),
      revoked_at: null,
    });
  });

  it('rotates with an hour of grace by default, and without grace when asked', async () => {
    const first = await store.issue({ tenant: TENANT, agent_id: 'rot-default' });
    const second = await store.rotate({ tenant: TENANT, agent_id: 'rot-default' });
    later(3599);
    expect((await store.verify(first.api_key)).agent_id).toBe('rot-default');
    later(1);
    expect(await refusal(first.api_key)).toMatch(/stopped working/);

    // A rotation without grace ends the other keys now; a key that already ends sooner keeps its end.
    const third = await store.rotate({ tenant: TENANT, agent_id: 'rot-default', grace_seconds: 0 });
    expect(await refusal(second.api_key)).toMatch(new RegExp(`key ${third.key.key_id} replaced it`));
    const { keys } = await store.list({ tenant: TENANT, agent_id: 'rot-default' });
    expect(keys.find((k) => k.key_id === first.key.key_id)).toMatchObject({ replaced_by: second.key.key_id });
    expect((await store.verify(third.api_key)).key_id).toBe(third.key.key_id);
  });

  it('rotating one agent leaves other agents and tenants untouched', async () => {
    const mine = await store.issue({ tenant: TENANT, agent_id: 'rot-a' });
    const neighbour = await store.issue({ tenant: TENANT, agent_id: 'rot-b' });
    const elsewhere = await store.issue({ tenant: 'globex', agent_id: 'rot-a' });
    await store.rotate({ tenant: TENANT, agent_id: 'rot-a', grace_seconds: 0 });
    expect(await refusal(mine.api_key)).toMatch(/stopped working/);
    expect((await store.verify(neighbour.api_key)).agent_id).toBe('rot-b');
    expect(await store.verify(elsewhere.api_key)).toMatchObject({ tenant: 'globex', agent_id: 'rot-a' });
  });

  it('revocation holds from the next verification on, with no wait and no clock change', async () => {
    const kept = await store.issue({ tenant: TENANT, agent_id: 'rev' });
    const dropped = await store.issue({ tenant: TENANT, agent_id: 'rev' });
    expect((await store.verify(dropped.api_key)).key_id).toBe(dropped.key.key_id);

    expect(await store.revoke({ tenant: TENANT, agent_id: 'rev', key_id: dropped.key.key_id })).toEqual({
      revoked: [dropped.key.key_id],
    });
    expect(await refusal(dropped.api_key)).toBe(
      `API key ${dropped.key.key_id} (agent rev of tenant ${TENANT}) was revoked at ${new Date(START).toISOString()}. ` +
        'Ask an operator for a new key.',
    );
    expect((await store.verify(kept.api_key)).key_id).toBe(kept.key.key_id);
    // Revoking it again changes nothing and is not an error.
    expect(await store.revoke({ tenant: TENANT, agent_id: 'rev', key_id: dropped.key.key_id })).toEqual({
      revoked: [],
    });

    // Without a key id: every key the agent still has.
    expect(await store.revoke({ tenant: TENANT, agent_id: 'rev' })).toEqual({ revoked: [kept.key.key_id] });
    expect(await refusal(kept.api_key)).toMatch(/was revoked/);
    expect(await store.revoke({ tenant: TENANT, agent_id: 'rev' })).toEqual({ revoked: [] });
  });

  it('a revoked key stays revoked during a rotation grace period', async () => {
    const first = await store.issue({ tenant: TENANT, agent_id: 'rev-rot' });
    await store.rotate({ tenant: TENANT, agent_id: 'rev-rot', grace_seconds: 600 });
    await store.revoke({ tenant: TENANT, agent_id: 'rev-rot', key_id: first.key.key_id });
    expect(await refusal(first.api_key)).toMatch(/was revoked/);
  });

  it('reaches no key of another tenant or agent by its key id', async () => {
    const theirs = await store.issue({ tenant: 'globex', agent_id: 'spy' });
    for (const [tenant, agent_id] of [
      [TENANT, 'spy'],
      ['globex', 'other-agent'],
    ] as const) {
      const err = await store.revoke({ tenant, agent_id, key_id: theirs.key.key_id }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiKeyNotFoundError);
      expect(err).toMatchObject({
        code: 'api_key_not_found',
        message:
          `Agent ${agent_id} of tenant ${tenant} has no API key ${theirs.key.key_id}. ` +
          `\`ormuz keys list --tenant ${tenant} --agent ${agent_id}\` lists its keys.`,
      });
    }
    expect((await store.list({ tenant: TENANT })).keys.map((k) => k.key_id)).not.toContain(theirs.key.key_id);
    // The key still works, and only as what it was issued for.
    expect(await store.verify(theirs.api_key)).toMatchObject({ tenant: 'globex', agent_id: 'spy' });
  });

  it('lists a tenant by agent, oldest first, never with a key or a hash', async () => {
    const b = await store.issue({ tenant: 'listco', agent_id: 'b' });
    const a1 = await store.issue({ tenant: 'listco', agent_id: 'a', label: 'first' });
    later(1);
    const a2 = await store.issue({ tenant: 'listco', agent_id: 'a' });
    const { keys } = await store.list({ tenant: 'listco' });
    expect(keys.map((k) => k.key_id)).toEqual([a1.key.key_id, a2.key.key_id, b.key.key_id]);
    expect((await store.list({ tenant: 'listco', agent_id: 'b' })).keys).toEqual([b.key]);
    expect((await store.list({ tenant: 'nobody' })).keys).toEqual([]);

    const text = JSON.stringify(keys);
    for (const issued of [a1, a2, b]) {
      const hash = hashApiKey(issued.api_key);
      for (const secret of [issued.api_key, issued.api_key.slice(22), hash.toString('hex'), hash.toString('base64')]) {
        expect(text).not.toContain(secret);
      }
    }
    expect(Object.keys(keys[0]!).sort()).toEqual([
      'agent_id',
      'created_at',
      'expires_at',
      'key_id',
      'label',
      'replaced_by',
      'revoked_at',
      'rotated_at',
      'state',
      'tenant',
      'via',
    ]);
  });

  it('refuses a tenant or agent that is not an identifier before storing anything', async () => {
    await expect(store.issue({ tenant: '*', agent_id: 'a' })).rejects.toMatchObject({ code: 'invalid_identifier' });
    await expect(store.issue({ tenant: TENANT, agent_id: 'a.b' })).rejects.toMatchObject({
      code: 'invalid_identifier',
    });
  });

  it('applies its migrations once', async () => {
    expect(await migrateSchema(db, AUTH_SCHEMA, authMigrations)).toEqual([]);
  });
});
