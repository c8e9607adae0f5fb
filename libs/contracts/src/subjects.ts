/**
 * Subject layout: `<namespace>.<context>.<tenant>.<aggregate>.<id>`.
 *
 * The namespace (default `ormuz`) lets one NATS account host several isolated deployments or test runs; each
 * context owns one stream whose subjects are `<namespace>.<context>.>`. Tenant and id are checked before use.
 */
import { assertIdentifier } from './ids.js';

/** The bounded contexts that own a stream. */
export const CONTEXTS = {
  calls: { aggregate: 'call', owner: 'policy' },
  conversations: { aggregate: 'conversation', owner: 'model-loop' },
  devices: { aggregate: 'device', owner: 'device-bridge' },
  usage: { aggregate: 'tenant_day', owner: 'model-loop' },
} as const;

export type ContextName = keyof typeof CONTEXTS;

/** The subject of one aggregate instance. Throws InvalidIdentifierError for unsafe tenant or id. */
export function aggregateSubject(namespace: string, context: ContextName, tenant: string, id: string): string {
  assertIdentifier('namespace', namespace);
  assertIdentifier('tenant', tenant);
  assertIdentifier(`${CONTEXTS[context].aggregate} id`, id);
  return `${namespace}.${context}.${tenant}.${CONTEXTS[context].aggregate}.${id}`;
}

/** The filter for every subject of one tenant in one context (for tails and replays). */
export function tenantFilter(namespace: string, context: ContextName, tenant: string): string {
  assertIdentifier('tenant', tenant);
  return `${namespace}.${context}.${tenant}.>`;
}

/** The filter for a whole context's stream. */
export function contextFilter(namespace: string, context: ContextName): string {
  return `${namespace}.${context}.>`;
}

/** Parses a subject back into its parts; returns undefined when it does not follow the layout. */
export function parseSubject(
  subject: string,
): { namespace: string; context: string; tenant: string; aggregate: string; id: string } | undefined {
  const parts = subject.split('.');
  if (parts.length !== 5) return undefined;
  const [namespace, context, tenant, aggregate, id] = parts as [string, string, string, string, string];
  return { namespace, context, tenant, aggregate, id };
}

/**
 * Subject of a public NATS request/reply command: `<namespace>.cmd.<service>.<name>`. The operator CLI and edge
 * programs may publish here (NATS user `cli`), so a caller is known only by the credential it presents
 * (`Authorization` header).
 */
export function commandSubject(namespace: string, service: string, name: string): string {
  return `${namespace}.cmd.${service}.${name}`;
}

/**
 * Subject of a command one service sends another, acting within a tenant: `<namespace>.int.<service>.<name>`. Only
 * service users may publish here (the NATS server's authorization block), which is what lets the receiver trust the
 * identity header such a request carries (infra/nats/authorization.conf); people and programs use
 * {@link commandSubject} with a credential.
 */
export function internalCommandSubject(namespace: string, service: string, name: string): string {
  return `${namespace}.int.${service}.${name}`;
}

/**
 * Subject of the notice "the grant of an agent of `tenant` changed": `<namespace>.notice.grants.<tenant>`, a core NATS
 * message policy publishes once it has stored a grant (body {@link GrantChangedNoticeV1}), outside every stream's
 * subjects. Nothing stores it: a listener that misses one learns the grant at its next question to policy, which
 * checks every call against the grant anyway.
 */
export function grantNoticeSubject(namespace: string, tenant: string): string {
  assertIdentifier('namespace', namespace);
  assertIdentifier('tenant', tenant);
  return `${namespace}.notice.grants.${tenant}`;
}

/**
 * Subject of a conversation's live text: `<namespace>.live.<tenant>.conversations.<conversation_id>`, core NATS that
 * model-loop publishes each piece of a streamed model reply on (body `LiveTextDeltaV1`), outside every stream's
 * subjects: the pieces are not events, and the reply recorded on the log is what a view settles on.
 */
export function liveConversationSubject(namespace: string, tenant: string, conversationId: string): string {
  assertIdentifier('namespace', namespace);
  assertIdentifier('tenant', tenant);
  assertIdentifier('conversation id', conversationId);
  return `${namespace}.live.${tenant}.conversations.${conversationId}`;
}

/** Every tenant's grant notices in `namespace` (see {@link grantNoticeSubject}). */
export function grantNoticesFilter(namespace: string): string {
  assertIdentifier('namespace', namespace);
  return `${namespace}.notice.grants.*`;
}
