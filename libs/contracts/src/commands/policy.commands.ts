/**
 * Wire contracts of policy's NATS commands (`<namespace>.cmd.policy.<name>`). Versioned by name; old versions stay
 * readable when a new one is added.
 */
import { callOriginSchema } from '../events/tool-call.events.js';
import { registerSchema } from '../schema-registry.js';
import { fragments, List, Nullable, OneOf, Struct, Type, type Static } from '../wire.js';

export const POLICY_SUBMIT_V1 = 'policy.submit.v1';
export const POLICY_STATUS_V1 = 'policy.status.v1';
export const POLICY_SEAL_V1 = 'policy.seal.v1';

/** `policy.submit`: hand one tool request to the gate. Tenant and agent come from the caller's session. */
export const SubmitCallRequestV1 = Struct({
  tenant: fragments.identifier,
  agent_id: fragments.identifier,
  /**
   * Tool name as the model sent it, read leniently by the catalog (case, camelCase, provider encoding, `@<n>` for a
   * version). An unknown tool name is recorded and refused with suggestions; text that is not a tool name at all is
   * refused as `unknown_tool`, with suggestions, before anything is recorded.
   */
  tool: Type.String({ minLength: 1, maxLength: 200 }),
  /** Arguments as the model sent them (a JSON object). */
  arguments: Type.Unsafe<Record<string, unknown>>({ type: 'object' }),
  origin: callOriginSchema({ maxTurn: 1_000_000, maxIndex: 1000 }),
  /** The device this session acts on, or null. */
  device_id: OneOf([fragments.identifier, Type.Null()]),
  /** Correlation id for the events (the conversation id, or the operation id). */
  correlation_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
});
export type SubmitCallRequestV1 = Static<typeof SubmitCallRequestV1>;

/** What the gate decided, or the original record when the same call was submitted before. */
export const SubmitCallReplyV1 = Struct({
  call_id: Type.String(),
  /** The call's status after this submit: refused, staged, authorized, or any later status for a duplicate. */
  status: Type.String(),
  /**
   * True when this call id was already recorded for the same request (agent, device, tool, contract version and
   * bytes): nothing new happened. The same id for another request is refused as `payload_conflict`.
   */
  duplicate: Type.Boolean(),
  payload_sha256: Type.String(),
  /** Model-facing sentence for refusals and pending confirmations. */
  message: Nullable(Type.String()),
  approval_id: Nullable(Type.String()),
  summary: Nullable(Type.String()),
  expires_at: Nullable(Type.String()),
});
export type SubmitCallReplyV1 = Static<typeof SubmitCallReplyV1>;

/** `policy.status`: read a call's status from the log. Sends nothing to any executor. */
export const CallStatusRequestV1 = Struct({
  tenant: fragments.identifier,
  call_id: fragments.identifier,
  /** Include every event of the call. Default false. */
  timeline: Type.Optional(Type.Boolean()),
});
export type CallStatusRequestV1 = Static<typeof CallStatusRequestV1>;

/** `policy.seal`: make sure a call that has not started never runs. */
export const SealCallRequestV1 = Struct({
  tenant: fragments.identifier,
  call_id: fragments.identifier,
  sealed_by: Type.String({ minLength: 1, maxLength: 200 }),
  reason: Type.String({ minLength: 1, maxLength: 1000 }),
});
export type SealCallRequestV1 = Static<typeof SealCallRequestV1>;

/**
 * `policy.seal`'s answer, beside the call's status view (as `policy.status` gives it): when the seal was recorded and
 * whether this request found the call already sealed (by `sealed_by`, maybe another operator), changing nothing.
 */
export const SealCallReplyV1 = Struct({
  call_id: Nullable(Type.String()),
  /** `sealed`: a call that has started is refused instead (`call_already_started`). */
  status: Type.String(),
  sealed_by: Nullable(Type.String()),
  /** RFC 3339, from the log. */
  sealed_at: Nullable(Type.String()),
  already_sealed: Type.Boolean(),
  /** One sentence: who sealed the call, when and why, and for a repeat that it changed nothing. */
  message: Type.String(),
});
export type SealCallReplyV1 = Static<typeof SealCallReplyV1>;

registerSchema(POLICY_SUBMIT_V1, SubmitCallRequestV1);
registerSchema(POLICY_STATUS_V1, CallStatusRequestV1);
registerSchema(POLICY_SEAL_V1, SealCallRequestV1);

export const POLICY_SET_GRANT_V1 = 'policy.grants.set.v1';
export const POLICY_AGENT_V1 = 'policy.agent.v1';
export const POLICY_SEARCH_TOOLS_V1 = 'policy.tools.search.v1';

const grantRules = List(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 500 });

/** `policy.grants.set`: what an agent of a tenant may call. Rules: `device`, `device.tap`, `device.tap@1`. */
export const SetGrantRequestV1 = Struct({
  tenant: fragments.identifier,
  agent_id: fragments.identifier,
  allow: grantRules,
  deny: Type.Optional(grantRules),
});
export type SetGrantRequestV1 = Static<typeof SetGrantRequestV1>;

/** `policy.grants.get` and `policy.tools`: for one agent of a tenant. */
export const AgentRequestV1 = Struct({ tenant: fragments.identifier, agent_id: fragments.identifier });
export type AgentRequestV1 = Static<typeof AgentRequestV1>;

/** `policy.tools.search`: search the tools an agent is granted (what `ormuz.search_tools` runs). */
export const SearchToolsRequestV1 = Struct({
  tenant: fragments.identifier,
  agent_id: fragments.identifier,
  query: Type.String({ minLength: 1, maxLength: 1000 }),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
});
export type SearchToolsRequestV1 = Static<typeof SearchToolsRequestV1>;

/** One tool as a model is offered it. */
export const OfferedToolV1 = Struct({
  name: Type.String(),
  version: Type.Integer(),
  description: Type.String(),
  /** JSON Schema of the arguments the model may send (designer parameters are absent). */
  parameters: Type.Unsafe<Record<string, unknown>>({ type: 'object' }),
  effect: Type.String(),
  risk_level: Type.String(),
});
export type OfferedToolV1 = Static<typeof OfferedToolV1>;

registerSchema(POLICY_SET_GRANT_V1, SetGrantRequestV1);
registerSchema(POLICY_AGENT_V1, AgentRequestV1);
registerSchema(POLICY_SEARCH_TOOLS_V1, SearchToolsRequestV1);

export const POLICY_SET_RISK_APPS_V1 = 'policy.risk.apps.set.v1';
export const POLICY_TENANT_V1 = 'policy.tenant.v1';

// Packages are checked by the risk library (tenantAppListProblems), which words the fix; the schema only bounds them.
const packageList = List(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 500 });

/**
 * `policy.risk.apps.set`: a tenant's own finance app lists, replacing the ones it had. `finance` packages make every
 * screen action in them high; `not_finance` packages are never judged finance apps. Each covers the packages under it.
 */
export const SetRiskAppsRequestV1 = Struct({
  tenant: fragments.identifier,
  finance: packageList,
  not_finance: packageList,
});
export type SetRiskAppsRequestV1 = Static<typeof SetRiskAppsRequestV1>;

/** `policy.risk.apps.get`: for one tenant. */
export const TenantRequestV1 = Struct({ tenant: fragments.identifier });
export type TenantRequestV1 = Static<typeof TenantRequestV1>;

registerSchema(POLICY_SET_RISK_APPS_V1, SetRiskAppsRequestV1);
registerSchema(POLICY_TENANT_V1, TenantRequestV1);
