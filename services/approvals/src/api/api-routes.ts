/**
 * The public HTTP API, one row per route: its method and path, the command of the owning service it runs, and where
 * each field of that command's request comes from (a path parameter of the same name, the query string, the JSON
 * body). The routes and the OpenAPI document (`openapi.ts`) are both made from this table and the command map's
 * schemas, so a route cannot be served without being described, nor described differently from how it is served.
 *
 * A route over a new command is one row here once the command is in the command map (`libs/contracts/src/rpcs.ts`):
 * `command('post', '/v1/tenants/{tenant}/keys', 'policy.keys.issue', { body: true, summary: 'Issue an API key' })`.
 */
import {
  rpcContract,
  TENANT_EVENTS_V1,
  TenantEventsMessageV1,
  TenantEventsRequestV1,
  type RPCS,
  type RpcRequestOf,
} from '@ormuz/contracts';
import type { UnansweredHint } from '@ormuz/service-kit';
import { submitHint } from './submit-hint.js';

export type HttpMethod = 'get' | 'post' | 'put' | 'delete';

/** A command a service serves to callers (the command map's names, not `<service>.health` and the like). */
export type CommandName = keyof typeof RPCS;

interface RouteBase {
  readonly method: HttpMethod;
  /** OpenAPI path template. Each `{name}` fills the request field of that name, which is always an identifier. */
  readonly path: string;
  /** Unique; what generated clients name the operation. */
  readonly operationId: string;
  readonly summary: string;
  /** The OpenAPI tag that groups it. */
  readonly tag: string;
  /** Request fields read from the query string; any other query parameter is refused. */
  readonly query: readonly string[];
  /** The request's JSON Schema, and the name the schema registry knows it by. */
  readonly request: object;
  readonly requestSchema: string;
}

/** A route that runs one command of the owning service over NATS, with the caller's own credential. */
export interface CommandRoute extends RouteBase {
  readonly kind: 'command';
  readonly command: CommandName;
  /** True when the JSON body's fields complete the request (every field the path and query do not give). */
  readonly body: boolean;
  /** The schema of the command's reply: the 200 response. */
  readonly reply: object;
  /** For a command that changes state: what a 503 tells the caller may have happened, and how to find out. */
  readonly unanswered?: (request: Record<string, unknown>) => UnansweredHint;
}

/**
 * The tenant's event stream: read from the log by the edge itself, so the edge checks the caller against the access
 * row named here (no owning service sees the request).
 */
export interface EventsRoute extends RouteBase {
  readonly kind: 'events';
  readonly access: CommandName;
  /** The schema of each server-sent event's `data`. */
  readonly message: object;
}

export type ApiRoute = CommandRoute | EventsRoute;

interface CommandOptions<N extends CommandName> {
  readonly summary: string;
  readonly query?: readonly (keyof RpcRequestOf<N> & string)[];
  readonly body?: boolean;
  readonly unanswered?: (request: Partial<RpcRequestOf<N>>) => UnansweredHint;
}

/** A row for command `name`; its operation id is the command's name in camel case (`policyGrantsGet`). */
function command<N extends CommandName>(
  method: HttpMethod,
  path: string,
  name: N,
  options: NoInfer<CommandOptions<N>>,
): CommandRoute {
  const { contract } = rpcContract(name)!;
  return Object.freeze({
    kind: 'command',
    method,
    path,
    operationId: camelCase(name),
    summary: options.summary,
    tag: name.slice(0, name.indexOf('.')),
    query: Object.freeze([...(options.query ?? [])]),
    request: contract.request,
    requestSchema: contract.requestSchema,
    command: name,
    body: options.body ?? false,
    reply: contract.reply,
    ...(options.unanswered
      ? { unanswered: options.unanswered as (request: Record<string, unknown>) => UnansweredHint }
      : {}),
  });
}

function camelCase(name: string): string {
  return name
    .split(/[.-]/)
    .map((part, i) => (i === 0 ? part : part[0]!.toUpperCase() + part.slice(1)))
    .join('');
}

const TENANT = '/v1/tenants/{tenant}';

/** Every route of the API. */
export const API_ROUTES: readonly ApiRoute[] = Object.freeze([
  command('post', `${TENANT}/calls`, 'policy.submit', {
    summary: 'Submit a tool call to the gate: it is refused, staged for its owner, or authorized',
    body: true,
    unanswered: submitHint,
  }),
  command('get', `${TENANT}/calls/{call_id}`, 'policy.status', {
    summary: "A call's status, and with timeline=true every event of it; with as_of, as it stood then",
    query: ['timeline', 'as_of'],
  }),
  command('post', `${TENANT}/calls/{call_id}/seal`, 'policy.seal', {
    summary: 'Make sure a call that has not started never runs',
    body: true,
  }),
  command('get', `${TENANT}/agents/{agent_id}/grant`, 'policy.grants.get', { summary: "An agent's grant" }),
  command('put', `${TENANT}/agents/{agent_id}/grant`, 'policy.grants.set', {
    summary: 'Replace what an agent may call',
    body: true,
  }),
  command('get', `${TENANT}/agents/{agent_id}/tools`, 'policy.tools', {
    summary: 'The tools an agent is offered, as models see them',
  }),
  command('get', `${TENANT}/agents/{agent_id}/tools/search`, 'policy.tools.search', {
    summary: 'Search the tools an agent is offered',
    query: ['query', 'limit'],
  }),
  command('get', `${TENANT}/risk/apps`, 'policy.risk.apps.get', { summary: "The tenant's finance app lists" }),
  command('put', `${TENANT}/risk/apps`, 'policy.risk.apps.set', {
    summary: "Replace the tenant's finance app lists",
    body: true,
  }),
  command('get', `${TENANT}/policy/settings`, 'policy.settings.get', {
    summary: "The tenant's policy settings: its taint rule",
  }),
  command('put', `${TENANT}/policy/settings`, 'policy.settings.set', {
    summary: "Replace the tenant's policy settings (taint_rule: matching or every_write)",
    body: true,
  }),
  command('get', `${TENANT}/devices`, 'device-bridge.devices', { summary: "The tenant's connected devices" }),
  command('get', `${TENANT}/device-credentials`, 'device-bridge.credentials.list', {
    summary: "The tenant's device credentials (never their tokens), or one device's",
    query: ['device_id'],
  }),
  command('post', `${TENANT}/devices/{device_id}/credentials`, 'device-bridge.credentials.issue', {
    summary: 'Issue a device a new token, beside any it has; the token is shown only in this answer',
    body: true,
  }),
  command('post', `${TENANT}/devices/{device_id}/credentials/rotate`, 'device-bridge.credentials.rotate', {
    summary: 'Issue a device a new token and end its others after a grace period',
    body: true,
  }),
  command('post', `${TENANT}/devices/{device_id}/credentials/revoke`, 'device-bridge.credentials.revoke', {
    summary: "End one of a device's credentials, or all of them, closing the connections that used them",
    body: true,
  }),
  command('get', `${TENANT}/keys`, 'policy.keys.list', {
    summary: "The tenant's API keys (never the keys themselves), or one agent's",
    query: ['agent_id'],
  }),
  command('post', `${TENANT}/agents/{agent_id}/keys`, 'policy.keys.issue', {
    summary: 'Issue an agent an API key, beside any it has; the key is shown only in this answer',
    body: true,
  }),
  command('post', `${TENANT}/agents/{agent_id}/keys/rotate`, 'policy.keys.rotate', {
    summary: 'Issue an agent a new API key and end its others after a grace period',
    body: true,
  }),
  command('post', `${TENANT}/agents/{agent_id}/keys/revoke`, 'policy.keys.revoke', {
    summary: "End one of an agent's API keys, or all of them, from the next request on",
    body: true,
  }),
  command('get', `${TENANT}/audit/calls/{call_id}`, 'audit.call', { summary: "A call's audit record" }),
  command('get', `${TENANT}/audit/events`, 'audit.events', {
    summary: "A page of the tenant's archived events, in stream order",
    query: ['context', 'call_id', 'from_seq', 'limit'],
  }),
  command('post', `${TENANT}/conversations`, 'model-loop.start', {
    summary: 'Start a conversation: an agent works on a task, every tool call it makes governed',
    body: true,
  }),
  command('get', `${TENANT}/conversations/{conversation_id}`, 'model-loop.get', {
    summary: 'A conversation; with as_of, as it stood then, folded from the log',
    query: ['as_of'],
  }),
  command('get', `${TENANT}/agents/{agent_id}/model`, 'model-loop.agents.get', {
    summary: "An agent's model and where it is reached (never a key)",
  }),
  command('put', `${TENANT}/agents/{agent_id}/model`, 'model-loop.agents.set', {
    summary: "Choose an agent's model and where it is reached; conversations started without a model use it",
    body: true,
  }),
  command('get', `${TENANT}/agent-models`, 'model-loop.agents.list', {
    summary: 'Every agent of the tenant with a model configured',
  }),
  command('get', `${TENANT}/approvals`, 'approvals.list', {
    summary: "The owner's inbox: staged calls waiting for a decision (status=all: every one)",
    query: ['status'],
  }),
  command('post', `${TENANT}/approvals/{approval_id}/approve`, 'approvals.approve', {
    summary: 'Approve a staged call: it runs, with exactly the arguments shown',
    body: true,
  }),
  command('post', `${TENANT}/approvals/{approval_id}/deny`, 'approvals.deny', {
    summary: 'Deny a staged call: it never runs',
    body: true,
  }),
  command('get', `${TENANT}/webhooks`, 'approvals.webhooks.list', {
    summary: "The tenant's webhook endpoints (never their signing secrets)",
  }),
  command('post', `${TENANT}/webhooks`, 'approvals.webhooks.set', {
    summary:
      'Register a webhook endpoint (its signing secret is shown only in this answer), or change one named by webhook_id',
    body: true,
    unanswered: (request) => ({
      what: request.webhook_id ? `the change of webhook ${request.webhook_id}` : 'a new webhook endpoint',
      check:
        `List the tenant's webhooks (GET ${TENANT.replace('{tenant}', request.tenant ?? '{tenant}')}/webhooks) to see ` +
        'whether it took effect; a secret issued in the lost answer cannot be shown again: set rotate_secret to issue another.',
    }),
  }),
  command('delete', `${TENANT}/webhooks/{webhook_id}`, 'approvals.webhooks.remove', {
    summary: 'Remove a webhook endpoint: it is sent nothing more; its deliveries stay in the log',
  }),
  command('get', `${TENANT}/webhook-deliveries`, 'approvals.webhooks.deliveries', {
    summary: "The tenant's newest webhook deliveries with every attempt, narrowed by endpoint, status or approval",
    query: ['webhook_id', 'status', 'approval_id', 'limit'],
  }),
  Object.freeze({
    kind: 'events',
    method: 'get',
    path: `${TENANT}/events`,
    operationId: 'tenantEvents',
    summary: "The tenant's events, from a sequence or a time, then live, as server-sent events",
    tag: 'events',
    query: Object.freeze(['context', 'from']),
    request: TenantEventsRequestV1,
    requestSchema: TENANT_EVENTS_V1,
    // The same data as `audit.events` (the tenant's events), so the same people may read it.
    access: 'audit.events',
    message: TenantEventsMessageV1,
  } satisfies EventsRoute),
]);
