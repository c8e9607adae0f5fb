/**
 * Turns a presented credential into a verified identity: `Bearer <API key>` for agents and programs, `Bearer <JWT>`
 * for people. One instance per service, shared by its NATS commands and its HTTP routes.
 */
import { UnauthenticatedError } from './errors.js';
import type { AgentIdentity, Identity } from './identity.js';
import type { JwtVerifier } from './jwt-verifier.js';

/** Verifies an API key (the store in `api-keys/`). */
export interface ApiKeyVerifier {
  /** True when `credential` has the shape of an API key (it is then never tried as a JWT). */
  recognises(credential: string): boolean;
  verify(key: string): Promise<AgentIdentity>;
}

export class Authenticator {
  constructor(
    private readonly jwt: JwtVerifier,
    private readonly keys: ApiKeyVerifier | undefined,
  ) {}

  /** The identity behind an `Authorization` header value; undefined when there is none. Throws UnauthenticatedError. */
  async fromHeader(header: string | undefined): Promise<Identity | undefined> {
    const credential = bearerOf(header);
    if (credential === undefined) return undefined;
    if (this.keys?.recognises(credential)) return this.keys.verify(credential);
    return this.jwt.verify(credential);
  }
}

/**
 * The credential of an `Authorization` header value, unverified; undefined when there is none. Throws
 * UnauthenticatedError for a header of another scheme. The one parser of the header: services verify what it
 * returns, and the HTTP edge passes it on to the service that verifies it.
 */
export function bearerOf(header: string | undefined): string | undefined {
  if (header === undefined || header === '') return undefined;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  if (!match) throw new UnauthenticatedError('The Authorization header must be `Bearer <token or API key>`.');
  return match[1]!;
}
