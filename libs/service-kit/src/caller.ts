/**
 * Who sent a command. On a public subject (`<ns>.cmd.…`) the caller presents `Authorization: Bearer <token or API
 * key>`, verified here; on an internal subject (`<ns>.int.…`), which only service users may publish to, a service
 * states in `Ormuz-Identity` the tenant (and agent) it acts for. Handlers get the identity; `@Rpc` checks it against
 * the access table before they run.
 */
import type { MsgHdrs } from '@nats-io/transport-node';
import {
  Authenticator,
  JwtVerifier,
  serviceIdentity,
  UnauthenticatedError,
  type ApiKeyVerifier,
  type Identity,
  type ServiceIdentity,
} from '@ormuz/auth';
import { identifierProblem, SERVICES } from '@ormuz/contracts';
import type { BaseConfig } from './config.js';

export const AUTHORIZATION_HEADER = 'Authorization';
export const IDENTITY_HEADER = 'Ormuz-Identity';

/** What a command handler is given besides its request. */
export interface RpcCallContext {
  /** Undefined only for commands anyone may run (health). */
  readonly identity: Identity | undefined;
}

/** How a caller identifies itself: a bearer credential, or (between services) the service and the tenant it acts in. */
export type Credential = { readonly bearer: string } | { readonly service: ServiceIdentity };

/** The authenticator a service uses for its commands and HTTP routes. */
export function createAuthenticator(config: BaseConfig, keys?: ApiKeyVerifier): Authenticator {
  return new Authenticator(new JwtVerifier(config.auth), keys);
}

/** The identity behind a command message. Throws UnauthenticatedError for a credential that does not verify. */
export async function callerOf(
  authenticator: Authenticator,
  headers: MsgHdrs | undefined,
  internal: boolean,
): Promise<Identity | undefined> {
  if (!internal) return authenticator.fromHeader(headers?.get(AUTHORIZATION_HEADER) || undefined);
  const stated = headers?.get(IDENTITY_HEADER);
  if (!stated)
    throw new UnauthenticatedError(
      `A command on an internal subject must state the service's identity (${IDENTITY_HEADER}).`,
    );
  let parsed: { service?: unknown; tenant?: unknown; agent_id?: unknown };
  try {
    parsed = JSON.parse(stated) as typeof parsed;
  } catch {
    throw new UnauthenticatedError(`${IDENTITY_HEADER} is not JSON.`);
  }
  const { service, tenant, agent_id } = parsed ?? {};
  if (typeof service !== 'string' || !(SERVICES as readonly string[]).includes(service)) {
    throw new UnauthenticatedError(`${IDENTITY_HEADER} names no service of the platform.`);
  }
  if (identifierProblem(tenant) || (agent_id !== undefined && identifierProblem(agent_id))) {
    throw new UnauthenticatedError(`${IDENTITY_HEADER} must name a valid tenant (and agent, when it names one).`);
  }
  return serviceIdentity(service, tenant as string, agent_id as string | undefined);
}
