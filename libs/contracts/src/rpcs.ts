/**
 * Every NATS command a service serves, by `<service>.<name>` (on subject `<namespace>.cmd.<service>.<name>`): the
 * request, registered under `requestSchema` so the server checks it with `assertValid`, and the reply's `data`. A
 * typed client and server (service-kit's `callRpc` and `@Rpc`) are built on this map, so a caller and a handler can
 * only disagree about a command's shape by changing the one declaration both use.
 */
import {
  APPROVALS_DECIDE_V1,
  APPROVALS_LIST_V1,
  ApprovalListV1,
  ApprovalViewV1,
  DecideApprovalRequestV1,
  ListApprovalsRequestV1,
} from './commands/approvals.commands.js';
import {
  APPROVALS_WEBHOOKS_DELIVERIES_V1,
  APPROVALS_WEBHOOKS_LIST_V1,
  APPROVALS_WEBHOOKS_REMOVE_V1,
  APPROVALS_WEBHOOKS_SET_V1,
  ListWebhookDeliveriesRequestV1,
  ListWebhooksRequestV1,
  RemovedWebhookV1,
  RemoveWebhookRequestV1,
  SetWebhookReplyV1,
  SetWebhookRequestV1,
  WebhookDeliveryListV1,
  WebhookListV1,
} from './commands/approvals-webhooks.commands.js';
import {
  AUDIT_CALL_V1,
  AUDIT_EVENTS_V1,
  AUDIT_PROJECTIONS_V1,
  AUDIT_REBUILD_V1,
  AUDIT_REPLAY_V1,
  AUDIT_EXPORT_V1,
  AuditCallRecordV1,
  AuditCallRequestV1,
  AuditEventsReplyV1,
  AuditEventsRequestV1,
  AuditProjectionsReplyV1,
  AuditProjectionsRequestV1,
  AuditRebuildReplyV1,
  AuditRebuildRequestV1,
  AuditReplayReplyV1,
  AuditExportReplyV1,
  AuditExportRequestV1,
  AuditReplayRequestV1,
} from './commands/audit.commands.js';
import {
  AUDIT_ERASE_V1,
  AUDIT_RETENTION_GET_V1,
  AUDIT_RETENTION_SET_V1,
  AUDIT_VERIFY_V1,
  AuditEraseReplyV1,
  AuditEraseRequestV1,
  AuditRetentionGetRequestV1,
  AuditRetentionSetRequestV1,
  AuditRetentionV1,
  AuditVerifyReplyV1,
  AuditVerifyRequestV1,
} from './commands/audit-archive.commands.js';
import {
  ConnectedDevicesV1,
  CredentialListV1,
  DEVICE_BRIDGE_DEVICES_V1,
  DEVICE_CREDENTIALS_ISSUE_V1,
  DEVICE_CREDENTIALS_LIST_V1,
  DEVICE_CREDENTIALS_REVOKE_V1,
  DEVICE_CREDENTIALS_ROTATE_V1,
  IssueCredentialRequestV1,
  IssuedCredentialV1,
  ListCredentialsRequestV1,
  ListDevicesRequestV1,
  RevokeCredentialRequestV1,
  RevokedCredentialsV1,
  RotateCredentialRequestV1,
} from './commands/device-bridge.commands.js';
import {
  AgentModelListV1,
  AgentModelV1,
  ConversationViewV1,
  GetAgentModelRequestV1,
  GetConversationRequestV1,
  ListAgentModelsRequestV1,
  MODEL_LOOP_AGENTS_GET_V1,
  MODEL_LOOP_AGENTS_LIST_V1,
  MODEL_LOOP_AGENTS_SET_V1,
  MODEL_LOOP_GET_V1,
  SetAgentModelRequestV1,
  MODEL_LOOP_START_V1,
  MODEL_LOOP_TENANT_LIMITS_GET_V1,
  MODEL_LOOP_TENANT_LIMITS_SET_V1,
  MODEL_LOOP_TENANT_USAGE_V1,
  GetTenantLimitsRequestV1,
  GetTenantUsageRequestV1,
  SetTenantLimitsRequestV1,
  StartConversationReplyV1,
  StartConversationRequestV1,
  TenantLimitsV1,
  TenantUsageV1,
} from './commands/model-loop.commands.js';
import {
  AgentRequestV1,
  ApiKeyListV1,
  CallStatusRequestV1,
  IdentifyCallsReplyV1,
  IdentifyCallsRequestV1,
  CallStatusReplyV1,
  GrantV1,
  IssuedApiKeyV1,
  IssueApiKeyRequestV1,
  ListApiKeysRequestV1,
  OfferedToolsReplyV1,
  POLICY_AGENT_V1,
  POLICY_KEYS_ISSUE_V1,
  POLICY_KEYS_LIST_V1,
  POLICY_KEYS_REVOKE_V1,
  POLICY_KEYS_ROTATE_V1,
  POLICY_SEAL_V1,
  POLICY_SEARCH_TOOLS_V1,
  POLICY_SET_GRANT_V1,
  POLICY_SET_RISK_APPS_V1,
  POLICY_SET_SETTINGS_V1,
  PolicySettingsV1,
  SetPolicySettingsRequestV1,
  POLICY_IDENTIFY_V1,
  POLICY_STATUS_V1,
  POLICY_SUBMIT_V1,
  POLICY_TENANT_V1,
  RevokeApiKeysRequestV1,
  RevokedApiKeysV1,
  RiskAppsV1,
  RotateApiKeyRequestV1,
  SealCallReplyV1,
  SealCallRequestV1,
  SearchToolsReplyV1,
  SearchToolsRequestV1,
  SetGrantRequestV1,
  SetRiskAppsRequestV1,
  SubmitCallReplyV1,
  SubmitCallRequestV1,
  TenantRequestV1,
} from './commands/policy.commands.js';
import {
  ConsumersStatusV1,
  EmptyRequestV1,
  RetryParkedReplyV1,
  RetryParkedRequestV1,
  SERVICE_CONSUMERS_RETRY_V1,
  SERVICE_CONSUMERS_REBUILD_V1,
  RebuildProjectionRequestV1,
  RebuildProjectionReplyV1,
  SERVICE_CONSUMERS_STATUS_V1,
  SERVICE_HEALTH_V1,
  ServiceHealthV1,
} from './commands/service.commands.js';
import { assertValid, hasSchema, registerSchema } from './schema-registry.js';
import type { Static, TSchema } from './wire.js';

/** One command: the name its request schema is registered under, its request and the `data` of its reply. */
export interface RpcContract<Request extends TSchema = TSchema, Reply extends TSchema = TSchema> {
  readonly requestSchema: string;
  readonly request: Request;
  readonly reply: Reply;
}

function rpc<Request extends TSchema, Reply extends TSchema>(
  requestSchema: string,
  request: Request,
  reply: Reply,
): RpcContract<Request, Reply> {
  return Object.freeze({ requestSchema, request, reply });
}

/** The commands of each service, by `<service>.<name>`. */
export const RPCS = Object.freeze({
  'policy.submit': rpc(POLICY_SUBMIT_V1, SubmitCallRequestV1, SubmitCallReplyV1),
  'policy.status': rpc(POLICY_STATUS_V1, CallStatusRequestV1, CallStatusReplyV1),
  'policy.identify': rpc(POLICY_IDENTIFY_V1, IdentifyCallsRequestV1, IdentifyCallsReplyV1),
  'policy.seal': rpc(POLICY_SEAL_V1, SealCallRequestV1, SealCallReplyV1),
  'policy.grants.set': rpc(POLICY_SET_GRANT_V1, SetGrantRequestV1, GrantV1),
  'policy.grants.get': rpc(POLICY_AGENT_V1, AgentRequestV1, GrantV1),
  'policy.tools': rpc(POLICY_AGENT_V1, AgentRequestV1, OfferedToolsReplyV1),
  'policy.tools.search': rpc(POLICY_SEARCH_TOOLS_V1, SearchToolsRequestV1, SearchToolsReplyV1),
  'policy.risk.apps.set': rpc(POLICY_SET_RISK_APPS_V1, SetRiskAppsRequestV1, RiskAppsV1),
  'policy.risk.apps.get': rpc(POLICY_TENANT_V1, TenantRequestV1, RiskAppsV1),
  'policy.settings.set': rpc(POLICY_SET_SETTINGS_V1, SetPolicySettingsRequestV1, PolicySettingsV1),
  'policy.settings.get': rpc(POLICY_TENANT_V1, TenantRequestV1, PolicySettingsV1),
  'policy.keys.issue': rpc(POLICY_KEYS_ISSUE_V1, IssueApiKeyRequestV1, IssuedApiKeyV1),
  'policy.keys.rotate': rpc(POLICY_KEYS_ROTATE_V1, RotateApiKeyRequestV1, IssuedApiKeyV1),
  'policy.keys.revoke': rpc(POLICY_KEYS_REVOKE_V1, RevokeApiKeysRequestV1, RevokedApiKeysV1),
  'policy.keys.list': rpc(POLICY_KEYS_LIST_V1, ListApiKeysRequestV1, ApiKeyListV1),
  'approvals.list': rpc(APPROVALS_LIST_V1, ListApprovalsRequestV1, ApprovalListV1),
  'approvals.approve': rpc(APPROVALS_DECIDE_V1, DecideApprovalRequestV1, ApprovalViewV1),
  'approvals.deny': rpc(APPROVALS_DECIDE_V1, DecideApprovalRequestV1, ApprovalViewV1),
  'approvals.webhooks.set': rpc(APPROVALS_WEBHOOKS_SET_V1, SetWebhookRequestV1, SetWebhookReplyV1),
  'approvals.webhooks.list': rpc(APPROVALS_WEBHOOKS_LIST_V1, ListWebhooksRequestV1, WebhookListV1),
  'approvals.webhooks.remove': rpc(APPROVALS_WEBHOOKS_REMOVE_V1, RemoveWebhookRequestV1, RemovedWebhookV1),
  'approvals.webhooks.deliveries': rpc(
    APPROVALS_WEBHOOKS_DELIVERIES_V1,
    ListWebhookDeliveriesRequestV1,
    WebhookDeliveryListV1,
  ),
  'audit.call': rpc(AUDIT_CALL_V1, AuditCallRequestV1, AuditCallRecordV1),
  'audit.events': rpc(AUDIT_EVENTS_V1, AuditEventsRequestV1, AuditEventsReplyV1),
  'audit.projections': rpc(AUDIT_PROJECTIONS_V1, AuditProjectionsRequestV1, AuditProjectionsReplyV1),
  'audit.replay': rpc(AUDIT_REPLAY_V1, AuditReplayRequestV1, AuditReplayReplyV1),
  'audit.export': rpc(AUDIT_EXPORT_V1, AuditExportRequestV1, AuditExportReplyV1),
  'audit.rebuild': rpc(AUDIT_REBUILD_V1, AuditRebuildRequestV1, AuditRebuildReplyV1),
  'audit.verify': rpc(AUDIT_VERIFY_V1, AuditVerifyRequestV1, AuditVerifyReplyV1),
  'audit.erase': rpc(AUDIT_ERASE_V1, AuditEraseRequestV1, AuditEraseReplyV1),
  'audit.retention.set': rpc(AUDIT_RETENTION_SET_V1, AuditRetentionSetRequestV1, AuditRetentionV1),
  'audit.retention.get': rpc(AUDIT_RETENTION_GET_V1, AuditRetentionGetRequestV1, AuditRetentionV1),
  'device-bridge.devices': rpc(DEVICE_BRIDGE_DEVICES_V1, ListDevicesRequestV1, ConnectedDevicesV1),
  'device-bridge.credentials.issue': rpc(DEVICE_CREDENTIALS_ISSUE_V1, IssueCredentialRequestV1, IssuedCredentialV1),
  'device-bridge.credentials.rotate': rpc(DEVICE_CREDENTIALS_ROTATE_V1, RotateCredentialRequestV1, IssuedCredentialV1),
  'device-bridge.credentials.revoke': rpc(
    DEVICE_CREDENTIALS_REVOKE_V1,
    RevokeCredentialRequestV1,
    RevokedCredentialsV1,
  ),
  'device-bridge.credentials.list': rpc(DEVICE_CREDENTIALS_LIST_V1, ListCredentialsRequestV1, CredentialListV1),
  'model-loop.start': rpc(MODEL_LOOP_START_V1, StartConversationRequestV1, StartConversationReplyV1),
  'model-loop.get': rpc(MODEL_LOOP_GET_V1, GetConversationRequestV1, ConversationViewV1),
  'model-loop.agents.set': rpc(MODEL_LOOP_AGENTS_SET_V1, SetAgentModelRequestV1, AgentModelV1),
  'model-loop.agents.get': rpc(MODEL_LOOP_AGENTS_GET_V1, GetAgentModelRequestV1, AgentModelV1),
  'model-loop.agents.list': rpc(MODEL_LOOP_AGENTS_LIST_V1, ListAgentModelsRequestV1, AgentModelListV1),
  'model-loop.tenant.limits.set': rpc(MODEL_LOOP_TENANT_LIMITS_SET_V1, SetTenantLimitsRequestV1, TenantLimitsV1),
  'model-loop.tenant.limits.get': rpc(MODEL_LOOP_TENANT_LIMITS_GET_V1, GetTenantLimitsRequestV1, TenantLimitsV1),
  'model-loop.tenant.usage': rpc(MODEL_LOOP_TENANT_USAGE_V1, GetTenantUsageRequestV1, TenantUsageV1),
});

/** The services that serve commands. */
export const SERVICES = Object.freeze([
  'policy',
  'model-loop',
  'device-bridge',
  'approvals',
  'audit',
  'mcp-gateway',
] as const);
export type ServiceName = (typeof SERVICES)[number];

/**
 * The commands every service answers, by name: `<service>.health` and so on. Their handlers live in service-kit
 * (`startService`, `LogConsumers`), which reads these bodies itself.
 */
export const SERVICE_RPCS = Object.freeze({
  health: rpc(SERVICE_HEALTH_V1, EmptyRequestV1, ServiceHealthV1),
  'consumers.status': rpc(SERVICE_CONSUMERS_STATUS_V1, EmptyRequestV1, ConsumersStatusV1),
  'consumers.retry': rpc(SERVICE_CONSUMERS_RETRY_V1, RetryParkedRequestV1, RetryParkedReplyV1),
  'consumers.rebuild': rpc(SERVICE_CONSUMERS_REBUILD_V1, RebuildProjectionRequestV1, RebuildProjectionReplyV1),
});

type ServiceRpcName = keyof typeof SERVICE_RPCS;

/** A command's full name: `<service>.<name>`. */
export type RpcName = keyof typeof RPCS | `${ServiceName}.${ServiceRpcName}`;

/** The contract of command `N`. */
export type RpcContractOf<N extends RpcName> = N extends keyof typeof RPCS
  ? (typeof RPCS)[N]
  : N extends `${ServiceName}.${infer C extends ServiceRpcName}`
    ? (typeof SERVICE_RPCS)[C]
    : never;

/**
 * The request and reply types of every command, worked out once. Code generic in the command name indexes this map:
 * the compiler then never works the schemas' types out again for every name at once, which costs it seconds.
 */
export type RpcTypes = {
  readonly [N in RpcName]: {
    readonly request: Static<RpcContractOf<N>['request']>;
    readonly reply: Static<RpcContractOf<N>['reply']>;
  };
};

/** The request body of command `N`. */
export type RpcRequestOf<N extends RpcName> = RpcTypes[N]['request'];

/** The `data` of command `N`'s reply. */
export type RpcReplyOf<N extends RpcName> = RpcTypes[N]['reply'];

/** Where command `name` is served, and its contract; undefined for a name that is not a command. */
export function rpcContract(
  name: string,
): { readonly service: string; readonly command: string; readonly contract: RpcContract } | undefined {
  const dot = name.indexOf('.');
  if (dot <= 0) return undefined;
  const service = name.slice(0, dot);
  const command = name.slice(dot + 1);
  if (Object.hasOwn(RPCS, name)) return { service, command, contract: (RPCS as Record<string, RpcContract>)[name]! };
  if (!Object.hasOwn(SERVICE_RPCS, command) || !(SERVICES as readonly string[]).includes(service)) return undefined;
  return { service, command, contract: (SERVICE_RPCS as Record<string, RpcContract>)[command]! };
}

/**
 * Checks `data` against the reply schema of command `name` (compiled on first use) and returns it typed; throws
 * SchemaViolationError listing what is wrong. For tests and tools that hold a service to its declared reply.
 * (`NoInfer`: `N` comes from `name` alone; inferring it back from where the result goes costs the compiler seconds.)
 */
export function assertValidReply<N extends RpcName>(name: N, data: unknown): NoInfer<RpcReplyOf<N>> {
  const found = rpcContract(name);
  if (!found) throw new Error(`${name} is not a command of any service`);
  const schema = `${Object.hasOwn(RPCS, name) ? name : `service.${found.command}`}.reply`;
  if (!hasSchema(schema)) registerSchema(schema, found.contract.reply);
  return assertValid<RpcReplyOf<N>>(schema, data);
}
