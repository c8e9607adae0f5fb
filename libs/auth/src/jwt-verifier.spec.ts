import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { base64url, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { DEV_AUDIENCE, DEV_ISSUER, DevIssuer } from './dev-issuer.js';
import { JwtVerifier } from './jwt-verifier.js';
import { loadAuthSettings, type AuthSettings } from './settings.js';

let dir: string;
let issuer: DevIssuer;
let settings: AuthSettings;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ormuz-auth-'));
  issuer = await DevIssuer.open(join(dir, 'dev'));
  settings = loadAuthSettings({ ORMUZ_DEV_ISSUER_DIR: join(dir, 'dev') });
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const alice = { tenant: 'acme', roles: ['owner'] as const, subject: 'alice@acme' };

function unsignedToken(payload: object): string {
  const enc = (o: object) => base64url.encode(JSON.stringify(o));
  return `${enc({ alg: 'none', typ: 'JWT' })}.${enc(payload)}.`;
}

describe('JwtVerifier with the development issuer', () => {
  it('verifies a token it signed and maps the claims to a person', async () => {
    const identity = await new JwtVerifier(settings).verify(await issuer.sign({ ...alice, agents: ['a1'] }));
    expect(identity).toEqual({
      kind: 'person',
      subject: 'alice@acme',
      tenant: 'acme',
      roles: ['owner'],
      agents: ['a1'],
      issuer: DEV_ISSUER,
    });
  });

  it('refuses an expired token, saying so', async () => {
    const token = await issuer.sign({ ...alice, ttlSeconds: 60 }, new Date(Date.now() - 3_600_000));
    await expect(new JwtVerifier(settings).verify(token)).rejects.toMatchObject({
      code: 'unauthenticated',
      message: expect.stringContaining('expired'),
    });
  });

  it('refuses a token for another audience', async () => {
    const token = await issuer.sign({ ...alice, audience: 'someone-else' });
    await expect(new JwtVerifier(settings).verify(token)).rejects.toMatchObject({
      code: 'unauthenticated',
      message: expect.stringContaining('aud'),
    });
  });

  it('refuses a token from another issuer', async () => {
    const token = await issuer.sign(alice);
    const verifier = new JwtVerifier({ ...settings, issuer: 'https://login.example.com/' });
    await expect(verifier.verify(token)).rejects.toMatchObject({ message: expect.stringContaining('iss') });
  });

  it("refuses alg none, whatever the payload says", async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = unsignedToken({ iss: DEV_ISSUER, aud: DEV_AUDIENCE, sub: 'mallory', exp: now + 60, ormuz_tenant: 'acme', ormuz_roles: ['admin'] });
    await expect(new JwtVerifier(settings).verify(token)).rejects.toMatchObject({ code: 'unauthenticated' });
  });

  it('refuses a token signed by another key with the same issuer and key id', async () => {
    const other = await DevIssuer.open(join(dir, 'other'));
    const forged = await other.sign(alice);
    await expect(new JwtVerifier(settings).verify(forged)).rejects.toMatchObject({ code: 'unauthenticated' });
    // Same kid as the trusted key: the signature itself must fail.
    const { privateKey } = await generateKeyPair('ES256');
    const now = Math.floor(Date.now() / 1000);
    const sameKid = await new SignJWT({ ormuz_tenant: 'acme', ormuz_roles: ['admin'] })
      .setProtectedHeader({ alg: 'ES256', kid: issuer.kid })
      .setIssuer(DEV_ISSUER)
      .setAudience(DEV_AUDIENCE)
      .setSubject('mallory')
      .setExpirationTime(now + 60)
      .sign(privateKey);
    await expect(new JwtVerifier(settings).verify(sameKid)).rejects.toMatchObject({
      message: expect.stringContaining('signature'),
    });
  });

  it('refuses an HMAC token keyed with the public key (algorithm confusion)', async () => {
    const { publicKey } = await generateKeyPair('ES256', { extractable: true });
    const secret = new TextEncoder().encode(JSON.stringify(await exportJWK(publicKey)));
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ ormuz_tenant: 'acme', ormuz_roles: ['admin'] })
      .setProtectedHeader({ alg: 'HS256', kid: issuer.kid })
      .setIssuer(DEV_ISSUER)
      .setAudience(DEV_AUDIENCE)
      .setSubject('mallory')
      .setExpirationTime(now + 60)
      .sign(secret);
    await expect(new JwtVerifier(settings).verify(token)).rejects.toMatchObject({ code: 'unauthenticated' });
  });

  it('refuses garbage, and a token without a tenant', async () => {
    const verifier = new JwtVerifier(settings);
    await expect(verifier.verify('not-a-jwt')).rejects.toMatchObject({ message: expect.stringContaining('well-formed') });
    const noTenant = await issuer.sign({ ...alice, tenant: 'a.b' });
    await expect(verifier.verify(noTenant)).rejects.toMatchObject({ message: expect.stringContaining('tenant') });
  });
});

describe('JwtVerifier with a provider-shaped token (JWKS file, nested roles claim, role prefix)', () => {
  it('maps Keycloak-style realm roles and ignores roles it does not know', async () => {
    const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
    const jwksFile = join(dir, 'provider-jwks.json');
    await writeFile(jwksFile, JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256' }] }));
    const provider = loadAuthSettings({
      ORMUZ_AUTH_ISSUER: 'https://sso.example.com/realms/acme',
      ORMUZ_AUTH_AUDIENCE: 'ormuz-console',
      ORMUZ_AUTH_JWKS_FILE: jwksFile,
      ORMUZ_AUTH_TENANT_CLAIM: 'org.tenant',
      ORMUZ_AUTH_ROLES_CLAIM: 'realm_access.roles',
      ORMUZ_AUTH_ROLE_PREFIX: 'ormuz-',
    });
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ org: { tenant: 'acme' }, realm_access: { roles: ['ormuz-operator', 'ormuz-analyst', 'offline_access', 'admin'] } })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer('https://sso.example.com/realms/acme')
      .setAudience('ormuz-console')
      .setSubject('bob')
      .setExpirationTime(now + 60)
      .sign(privateKey);
    const identity = await new JwtVerifier(provider).verify(token);
    expect(identity).toMatchObject({ subject: 'bob', tenant: 'acme', roles: ['operator', 'analyst'] });
  });
});

describe('loadAuthSettings', () => {
  it('refuses weak algorithms and an issuer without an audience', () => {
    expect(() => loadAuthSettings({ ORMUZ_AUTH_ALGORITHMS: 'RS256,none' })).toThrow(/none/);
    expect(() => loadAuthSettings({ ORMUZ_AUTH_ALGORITHMS: 'HS256' })).toThrow(/HS256/);
    expect(() => loadAuthSettings({ ORMUZ_AUTH_ISSUER: 'https://sso.example.com' })).toThrow(/ORMUZ_AUTH_AUDIENCE/);
    expect(loadAuthSettings({ ORMUZ_AUTH_ISSUER: 'https://sso.example.com/', ORMUZ_AUTH_AUDIENCE: 'x' }).jwks).toEqual({
      url: 'https://sso.example.com/.well-known/jwks.json',
    });
  });
});

describe('DevIssuer.open', () => {
  it('gives every process racing to create the key the same key', async () => {
    const fresh = join(dir, 'race');
    const issuers = await Promise.all(Array.from({ length: 8 }, () => DevIssuer.open(fresh)));
    expect(new Set(issuers.map((i) => i.kid)).size).toBe(1);
    const verifier = new JwtVerifier(loadAuthSettings({ ORMUZ_DEV_ISSUER_DIR: fresh }));
    for (const i of issuers) await expect(verifier.verify(await i.sign(alice))).resolves.toMatchObject({ tenant: 'acme' });
  });
});
