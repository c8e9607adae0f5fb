/**
 * CredentialWatch against the real authenticator and API key store: a stream opened with a key ends once the key is
 * revoked (found by the periodic re-verification), one opened with a JWT ends at its `exp`, and a stopped watch never
 * calls back. (No route lets an API key open a stream today; the streams use this watch for whatever may.)
 */
import { ApiKeyStore, AUTH_SCHEMA, authMigrations, type ApiKeysDatabase, type Authenticator } from '@ormuz/auth';
import { migrateSchema, openDatabase } from '@ormuz/postgres';
import { createAuthenticator, loadBaseConfig } from '@ormuz/service-kit';
import { createTestDatabase, testEnv, testToken, waitFor, type TestDatabase } from '@ormuz/testing';
import type { Kysely } from 'kysely';
import { CredentialWatch, type CredentialEnd } from '../src/console/credential-watch.js';

describe('CredentialWatch', () => {
  let database: TestDatabase;
  let db: Kysely<ApiKeysDatabase>;
  let keys: ApiKeyStore;
  let authenticator: Authenticator;
  const watches: CredentialWatch[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await openDatabase({ url: database.url });
    await migrateSchema(db, AUTH_SCHEMA, authMigrations);
    keys = new ApiKeyStore(db);
    authenticator = createAuthenticator(
      loadBaseConfig({ NATS_URL: testEnv().natsUrl, DATABASE_URL: database.url }),
      keys,
    );
  });
  afterEach(() => {
    for (const w of watches.splice(0)) w.stop();
  });
  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  let verifications = 0;
  const watch = (bearer: string, recheckMs = 50) => {
    const ends: CredentialEnd[] = [];
    const counting = {
      fromHeader: (header: string | undefined) => (verifications++, authenticator.fromHeader(header)),
    };
    const w = new CredentialWatch(counting, bearer, { recheckMs });
    watches.push(w);
    w.start((why) => ends.push(why));
    return ends;
  };

  it('ends a stream opened with an API key once the key is revoked, saying why', async () => {
    const issued = await keys.issue({ tenant: 'acme', agent_id: 'bot-1' });
    const ends = watch(issued.api_key);
    // Several re-verifications pass while the key is valid.
    const before = verifications;
    await waitFor(() => verifications >= before + 3, { message: 'three re-verifications of the live key' });
    expect(ends).toEqual([]);
    await keys.revoke({ tenant: 'acme', agent_id: 'bot-1', key_id: issued.key.key_id });
    await waitFor(() => ends.length > 0, { message: 'the watch to find the key revoked' });
    expect(ends).toEqual([{ reason: 'credential_refused', message: expect.stringContaining('was revoked') }]);
  });

  it("ends a stream opened with a token at the token's exp", async () => {
    const ends = watch(await testToken({ tenant: 'acme', roles: ['owner'], subject: 'alice@acme', ttlSeconds: 1 }));
    await waitFor(() => ends.length > 0, { message: "the watch to end at the token's exp" });
    expect(ends).toEqual([{ reason: 'token_expired', message: expect.stringContaining('expired') }]);
  });

  it('calls back no more once stopped', async () => {
    const issued = await keys.issue({ tenant: 'acme', agent_id: 'bot-2' });
    const ends: CredentialEnd[] = [];
    const w = new CredentialWatch(authenticator, issued.api_key, { recheckMs: 50 });
    w.start((why) => ends.push(why));
    w.stop();
    await keys.revoke({ tenant: 'acme', agent_id: 'bot-2' });
    // A later watch of the same key, still running, finds the revocation: the stopped one had every chance to.
    const later = watch(issued.api_key);
    await waitFor(() => later.length > 0, { message: 'the running watch to find the key revoked' });
    expect(ends).toEqual([]);
  });
});
