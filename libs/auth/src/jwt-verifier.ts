/**
 * Verifies people's bearer tokens: signature against the issuer's JWKS (a URL, fetched and cached by `jose`, or a
 * file), issuer, audience, expiry and not-before, an asymmetric algorithm from the allowed list; then maps the claims
 * to a tenant, roles and the agents an owner decides for. Every failure is an UnauthenticatedError whose message says
 * what was wrong, never which key would have worked.
 */
import { readFile } from 'node:fs/promises';
import { createLocalJWKSet, createRemoteJWKSet, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { identifierProblem } from '@ormuz/contracts';
import { UnauthenticatedError } from './errors.js';
import { ALL_TENANTS, ROLES, type PersonIdentity, type Role } from './identity.js';
import type { AuthSettings } from './settings.js';

export class JwtVerifier {
  private keys: Promise<JWTVerifyGetKey> | undefined;

  constructor(private readonly settings: AuthSettings) {}

  async verify(token: string): Promise<PersonIdentity> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, await this.keySet(), {
        issuer: this.settings.issuer,
        audience: this.settings.audience,
        algorithms: [...this.settings.algorithms],
        clockTolerance: this.settings.clockToleranceSeconds,
        requiredClaims: ['sub', 'exp'],
      }));
    } catch (err) {
      throw new UnauthenticatedError(`The bearer token was refused: ${reason(err)}.`);
    }
    return this.identity(payload);
  }

  private identity(payload: JWTPayload): PersonIdentity {
    const { claims } = this.settings;
    const tenant = claimAt(payload, claims.tenant);
    if (typeof tenant !== 'string' || (tenant !== ALL_TENANTS && identifierProblem(tenant))) {
      throw new UnauthenticatedError(`The bearer token has no usable tenant in claim ${claims.tenant}.`);
    }
    const roles = rolesFrom(claimAt(payload, claims.roles), claims.rolePrefix);
    const agentsClaim = claimAt(payload, claims.agents);
    const agents = Array.isArray(agentsClaim) ? agentsClaim.filter((a): a is string => typeof a === 'string') : undefined;
    return Object.freeze({
      kind: 'person',
      subject: payload.sub!,
      tenant,
      roles,
      ...(agents ? { agents: Object.freeze(agents) } : {}),
      issuer: payload.iss!,
    });
  }

  private keySet(): Promise<JWTVerifyGetKey> {
    if (!this.keys) {
      const { jwks } = this.settings;
      this.keys =
        'url' in jwks
          ? Promise.resolve(createRemoteJWKSet(new URL(jwks.url)))
          : readFile(jwks.file, 'utf8').then((text) => createLocalJWKSet(JSON.parse(text) as Parameters<typeof createLocalJWKSet>[0]));
      // A missing file is retried on the next token (the development issuer may be created after the service starts).
      this.keys.catch(() => (this.keys = undefined));
    }
    return this.keys;
  }
}

function claimAt(payload: JWTPayload, path: string): unknown {
  let at: unknown = payload;
  for (const part of path.split('.')) {
    if (at === null || typeof at !== 'object' || !Object.hasOwn(at, part)) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

function rolesFrom(value: unknown, prefix: string): readonly Role[] {
  const names = typeof value === 'string' ? value.split(/\s+/) : Array.isArray(value) ? value : [];
  const roles = new Set<Role>();
  for (const name of names) {
    if (typeof name !== 'string' || !name.startsWith(prefix)) continue;
    const role = name.slice(prefix.length);
    if ((ROLES as readonly string[]).includes(role)) roles.add(role as Role);
  }
  return Object.freeze([...roles]);
}

function reason(err: unknown): string {
  if (err instanceof errors.JWTExpired) return 'it has expired';
  if (err instanceof errors.JWTClaimValidationFailed) return `its ${err.claim} claim is not accepted (${err.reason})`;
  if (err instanceof errors.JOSEAlgNotAllowed) return 'it is signed with an algorithm that is not accepted';
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'its signature does not verify';
  if (err instanceof errors.JWKSNoMatchingKey) return "no key of the issuer's JWKS matches it";
  if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid) return 'it is not a well-formed signed JWT';
  if (err instanceof errors.JWKSTimeout) return "the issuer's JWKS did not answer in time";
  if (err instanceof Error && (err as NodeJS.ErrnoException).code === 'ENOENT') return "the issuer's JWKS file does not exist";
  return err instanceof Error ? err.message : String(err);
}
