/**
 * The development issuer: an ES256 key created on first use in a directory only its owner can read, and the JWKS
 * services are configured to trust. `ormuz auth token` signs with it. It stands in for an OpenID-Connect provider on a
 * developer's machine, in the demo and in tests; whoever can read its private key can mint any token, which is why
 * production configures a real issuer instead.
 */
import { randomUUID } from 'node:crypto';
import { link, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';

type KeyLike = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
import type { Role } from './identity.js';

export const DEV_ISSUER = 'urn:ormuz:dev-issuer';
export const DEV_AUDIENCE = 'ormuz';
const ALG = 'ES256';

export interface DevTokenClaims {
  readonly tenant: string;
  readonly roles: readonly Role[];
  readonly subject: string;
  /** Agents an owner decides for; omitted means every agent. */
  readonly agents?: readonly string[];
  /** Lifetime in seconds; default one hour. */
  readonly ttlSeconds?: number;
  readonly audience?: string;
}

export class DevIssuer {
  private constructor(
    private readonly privateKey: KeyLike,
    readonly kid: string,
  ) {}

  /** Opens the issuer in `dir`, creating its key pair the first time (safe when several processes race to create it). */
  static async open(dir: string): Promise<DevIssuer> {
    const keyFile = join(dir, 'private.jwk.json');
    let jwk = await readJwk(keyFile);
    if (!jwk) {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const { privateKey, publicKey } = await generateKeyPair(ALG, { extractable: true });
      const kid = `dev-${randomUUID()}`;
      const priv = { ...(await exportJWK(privateKey)), kid, alg: ALG, use: 'sig' };
      const pub = { ...(await exportJWK(publicKey)), kid, alg: ALG, use: 'sig' };
      // Write both files under temporary names, then link the key into place: link fails if another process won, and
      // then its key is the one everybody uses. The JWKS is written before the key appears, so a reader never finds
      // a key without its public half.
      const tmp = join(dir, `.${kid}`);
      await writeFile(`${tmp}.jwks`, JSON.stringify({ keys: [pub] }, null, 2), { mode: 0o644 });
      await writeFile(`${tmp}.key`, JSON.stringify(priv), { mode: 0o600 });
      try {
        await link(`${tmp}.key`, keyFile);
        await writeFile(join(dir, 'jwks.json'), await readFile(`${tmp}.jwks`), { mode: 0o644 });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      } finally {
        await rm(`${tmp}.key`, { force: true });
        await rm(`${tmp}.jwks`, { force: true });
      }
      jwk = await readJwk(keyFile);
      if (!jwk) throw new Error(`The development issuer's key could not be created in ${dir}.`);
      await waitForJwks(join(dir, 'jwks.json'), jwk.kid!);
    }
    return new DevIssuer((await importJWK(jwk, ALG)) as KeyLike, jwk.kid!);
  }

  /** Signs a token the services accept while they trust this issuer. */
  async sign(claims: DevTokenClaims, now = new Date()): Promise<string> {
    const iat = Math.floor(now.getTime() / 1000);
    return new SignJWT({
      ormuz_tenant: claims.tenant,
      ormuz_roles: [...claims.roles],
      ...(claims.agents ? { ormuz_agents: [...claims.agents] } : {}),
    })
      .setProtectedHeader({ alg: ALG, kid: this.kid, typ: 'JWT' })
      .setIssuer(DEV_ISSUER)
      .setAudience(claims.audience ?? DEV_AUDIENCE)
      .setSubject(claims.subject)
      .setIssuedAt(iat)
      .setExpirationTime(iat + (claims.ttlSeconds ?? 3600))
      .setJti(randomUUID())
      .sign(this.privateKey);
  }
}

async function readJwk(file: string): Promise<JWK | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as JWK;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** The process that created the key writes the JWKS right after; a process that lost the race waits for it. */
async function waitForJwks(file: string, kid: string): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt++) {
    try {
      const jwks = JSON.parse(await readFile(file, 'utf8')) as { keys?: { kid?: string }[] };
      if (jwks.keys?.some((k) => k.kid === kid)) return;
    } catch {
      // Not written yet (or half-written): look again.
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`${file} does not hold the development issuer's key ${kid}.`);
}
