/**
 * Who may run which command: the one table. Every command of every service has a row (a test holds the table to the
 * command map), and the transports check it before a handler runs, so a handler only ever sees a request its caller
 * may make, in the caller's own tenant.
 */
import { identifierProblem, RPCS, SERVICE_RPCS, type RpcName } from '@ormuz/contracts';
import { ForbiddenError, UnauthenticatedError } from './errors.js';
import { ALL_TENANTS, type Identity, type Role } from './identity.js';

export interface Access {
  /** People with any of these roles may run it (`admin` always may). */
  readonly roles: readonly Role[];
  /**
   * Agents (API keys): `own` when the request's `agent_id` must be the key's agent, `tenant` for any request in the
   * key's tenant; absent when agents may not.
   */
  readonly agents?: 'own' | 'tenant';
  /** Services that may run it on the internal subject, acting within a tenant. */
  readonly services?: readonly string[];
  /** No credential needed (readiness probes); the request carries no tenant data. */
  readonly anyone?: true;
  /** Platform administrators only (an `admin` of tenant `*`): the command reaches every tenant's data. */
  readonly platform?: true;
}

const READERS: readonly Role[] = ['owner', 'operator', 'analyst'];

/** The table. Keys are the command map's names. */
export const ACCESS: Readonly<Record<keyof typeof RPCS, Access>> = Object.freeze({
  'policy.submit': { roles: ['operator'], agents: 'own', services: ['model-loop', 'mcp-gateway'] },
  'policy.status': { roles: READERS, agents: 'tenant', services: ['model-loop', 'mcp-gateway'] },
  'policy.identify': { roles: ['operator'], agents: 'own', services: ['model-loop', 'mcp-gateway'] },
  'policy.seal': { roles: ['operator'], services: ['mcp-gateway'] },
  'policy.grants.set': { roles: ['operator'] },
  'policy.grants.get': { roles: READERS, agents: 'own' },
  'policy.tools': { roles: READERS, agents: 'own', services: ['model-loop', 'mcp-gateway'] },
  'policy.tools.search': { roles: READERS, agents: 'own', services: ['model-loop'] },
  'policy.risk.apps.set': { roles: ['operator'] },
  'policy.risk.apps.get': { roles: READERS },
  'policy.settings.set': { roles: ['operator'] },
  'policy.settings.get': { roles: READERS },
  'policy.keys.issue': { roles: ['operator'] },
  'policy.keys.rotate': { roles: ['operator'] },
  'policy.keys.revoke': { roles: ['operator'] },
  'policy.keys.list': { roles: ['operator'] },
  'approvals.list': { roles: READERS },
  'approvals.approve': { roles: ['owner'] },
  'approvals.deny': { roles: ['owner'] },
  'approvals.webhooks.set': { roles: ['operator'] },
  'approvals.webhooks.list': { roles: ['operator'] },
  'approvals.webhooks.remove': { roles: ['operator'] },
  // Owners read the log too: it says whether their approvals' notifications went out.
  'approvals.webhooks.deliveries': { roles: ['operator', 'owner'] },
  'audit.call': { roles: READERS },
  'audit.events': { roles: ['operator', 'analyst'] },
  'audit.replay': { roles: ['operator', 'analyst'] },
  'audit.export': { roles: ['operator', 'analyst'] },
  'audit.projections': { roles: ['operator'], platform: true },
  'audit.rebuild': { roles: ['operator'], platform: true },
  'audit.verify': { roles: ['operator', 'analyst'] },
  // Erasure answers a data-protection request and cannot be undone: the tenant's admins only.
  'audit.erase': { roles: [] },
  'audit.retention.set': { roles: [] },
  'audit.retention.get': { roles: ['operator', 'analyst'] },
  'device-bridge.devices': { roles: READERS },
  'device-bridge.credentials.issue': { roles: ['operator'] },
  'device-bridge.credentials.rotate': { roles: ['operator'] },
  'device-bridge.credentials.revoke': { roles: ['operator'] },
  'device-bridge.credentials.list': { roles: ['operator'] },
  'model-loop.start': { roles: ['operator'], agents: 'own' },
  'model-loop.get': { roles: READERS, agents: 'tenant' },
  // An agent's model settings name where its conversations are sent and which key goes with them: operators set them.
  'model-loop.agents.set': { roles: ['operator'] },
  'model-loop.agents.get': { roles: READERS },
  'model-loop.agents.list': { roles: READERS },
  // A tenant's daily model budget is what it may spend: its admins set it, operators and readers see it.
  'model-loop.tenant.limits.set': { roles: [] },
  'model-loop.tenant.limits.get': { roles: READERS },
  'model-loop.tenant.usage': { roles: READERS },
});

/** The commands every service answers (`<service>.health`, …). */
export const SERVICE_ACCESS: Readonly<Record<keyof typeof SERVICE_RPCS, Access>> = Object.freeze({
  health: { roles: [], anyone: true },
  'consumers.status': { roles: ['operator'], platform: true },
  'consumers.retry': { roles: ['operator'], platform: true },
  'consumers.rebuild': { roles: ['operator'], platform: true },
});

/** The row for command `name` (`<service>.<command>`); undefined for a name that is not a command. */
export function accessOf(name: string): Access | undefined {
  if (Object.hasOwn(ACCESS, name)) return ACCESS[name as keyof typeof ACCESS];
  const command = name.slice(name.indexOf('.') + 1);
  return Object.hasOwn(SERVICE_ACCESS, command) ? SERVICE_ACCESS[command as keyof typeof SERVICE_ACCESS] : undefined;
}

/**
 * Checks that `identity` may run command `name` with `request`, in the tenant its credential names. Throws
 * UnauthenticatedError when a credential is needed and there is none, ForbiddenError otherwise. A request naming
 * another tenant is refused, never redirected: the caller learns its body was wrong.
 */
export function authorize(name: RpcName, identity: Identity | undefined, request: unknown): void {
  const access = accessOf(name);
  if (!access) throw new ForbiddenError(`${name} is not a command anyone may run.`);
  if (access.anyone) return;
  if (!identity) {
    throw new UnauthenticatedError(
      `${name} needs a credential: a bearer token (\`ormuz auth token\`, or your identity provider's) or an API key.`,
    );
  }
  const body = (request ?? {}) as { readonly tenant?: unknown; readonly agent_id?: unknown };
  const platformAdmin =
    identity.kind === 'person' && identity.tenant === ALL_TENANTS && identity.roles.includes('admin');
  if (access.platform) {
    if (platformAdmin) return;
    throw new ForbiddenError(
      `${name} reaches every tenant's data: only a platform administrator (admin of tenant *) may run it.`,
    );
  }
  // A tenant that is not even an identifier is the schema's to refuse, saying what is wrong with it.
  if (
    !platformAdmin &&
    typeof body.tenant === 'string' &&
    !identifierProblem(body.tenant) &&
    body.tenant !== identity.tenant
  ) {
    throw new ForbiddenError(
      `${identity.subject} acts for tenant ${identity.tenant}; this request names tenant ${body.tenant}.`,
    );
  }
  switch (identity.kind) {
    case 'person': {
      if (identity.roles.includes('admin') || identity.roles.some((role) => access.roles.includes(role))) return;
      const needed = ['admin', ...access.roles].join(' or ');
      throw new ForbiddenError(
        `${name} needs the role ${needed}; ${identity.subject} has ${identity.roles.join(', ') || 'none'}.`,
      );
    }
    case 'agent': {
      if (!access.agents)
        throw new ForbiddenError(`${name} is not for agents: ${identity.subject}'s API key cannot run it.`);
      if (access.agents === 'own' && typeof body.agent_id === 'string' && body.agent_id !== identity.agent_id) {
        throw new ForbiddenError(
          `${identity.subject}'s API key acts for agent ${identity.agent_id}, not ${body.agent_id}.`,
        );
      }
      return;
    }
    case 'service': {
      if (access.services?.includes(identity.service)) return;
      throw new ForbiddenError(`${name} is not one service ${identity.service} runs.`);
    }
  }
}

/** True when a person may decide approvals for `agentId`'s calls: an admin, or an owner not restricted to other agents. */
export function decidesFor(identity: Identity, agentId: string): boolean {
  if (identity.kind !== 'person') return false;
  if (identity.roles.includes('admin')) return true;
  return identity.roles.includes('owner') && (identity.agents === undefined || identity.agents.includes(agentId));
}
