/**
 * Who is asking. Every command and query is answered for an identity the platform verified itself: a person's
 * OpenID-Connect token, an agent's API key, or a service's NATS user. The tenant a request acts in comes from here,
 * never from what the caller wrote in the body.
 */

/** What people may do within their tenant (see `access.ts` for the table of who may run which command). */
export const ROLES = ['owner', 'operator', 'analyst', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** The tenant of a platform administrator: every tenant. Tenant identifiers cannot contain `*`. */
export const ALL_TENANTS = '*';

/** A person, from a verified JWT. */
export interface PersonIdentity {
  readonly kind: 'person';
  /** The token's `sub`: the approver recorded on the log. */
  readonly subject: string;
  readonly tenant: string;
  readonly roles: readonly Role[];
  /** For an owner: the agents whose approvals they decide; undefined means every agent of the tenant. */
  readonly agents?: readonly string[];
  /** The token's issuer. */
  readonly issuer: string;
}

/** An agent or program, from a verified API key. */
export interface AgentIdentity {
  readonly kind: 'agent';
  /** `agent:<agent_id>`. */
  readonly subject: string;
  readonly tenant: string;
  readonly agent_id: string;
  readonly key_id: string;
}

/**
 * A service acting within a tenant, on an internal subject only service users may publish to (the NATS server's
 * authorization block is what makes that header trustworthy). `agent_id` is the agent it acts for, when it does.
 */
export interface ServiceIdentity {
  readonly kind: 'service';
  /** `service:<name>`. */
  readonly subject: string;
  readonly service: string;
  readonly tenant: string;
  readonly agent_id?: string;
}

export type Identity = PersonIdentity | AgentIdentity | ServiceIdentity;

export function serviceIdentity(service: string, tenant: string, agentId?: string): ServiceIdentity {
  return Object.freeze({
    kind: 'service',
    subject: `service:${service}`,
    service,
    tenant,
    ...(agentId === undefined ? {} : { agent_id: agentId }),
  });
}
