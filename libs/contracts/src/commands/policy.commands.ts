/**
 * Wire contracts of policy's NATS commands (`<namespace>.cmd.policy.<name>`). Versioned by name; old versions stay
 * readable when a new one is added.
 */
import {
  CallOutcomeV1,
  callOriginSchema,
  OutcomeUnknownCauseV1,
  ToolCallStatusV1,
} from '../events/tool-call.events.js';
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

/** What a status query returns about a call. Reading it never sends anything anywhere. */
export const ToolCallStatusViewV1 = Struct({
  status: ToolCallStatusV1,
  /** `null` only for `absent`. */
  call_id: Nullable(Type.String()),
  tool: Nullable(Type.String()),
  payload_sha256: Nullable(Type.String()),
  /** The executor's reported outcome once `succeeded` or `failed`; otherwise `null`. */
  outcome: Nullable(CallOutcomeV1),
  /** Why the outcome is unknown, when the status is `outcome_unknown`; otherwise `null`. */
  unknown_cause: Nullable(OutcomeUnknownCauseV1),
  /** The open approval while `staged` (the model's `pending_confirmation`); otherwise `null`. */
  pending_approval: Nullable(Struct({ approval_id: Type.String(), summary: Type.String(), expires_at: Type.String() })),
  /** Who sealed it, when `sealed`; otherwise `null`. */
  sealed_by: Nullable(Type.String()),
  /**
   * One sentence for the model saying what to do now. For `outcome_unknown` it says to check the action's real state
   * with a read before any retry.
   */
  next_step: Type.String(),
});
export type ToolCallStatusViewV1 = Static<typeof ToolCallStatusViewV1>;

/** One event of a call as `policy.status` with `timeline: true` lists it. */
export const CallTimelineEntryV1 = Struct({
  /** Stream sequence. */
  seq: Type.Integer(),
  type: Type.String(),
  /** RFC 3339. */
  time: Type.String(),
  source: Type.String(),
  data: Type.Unknown(),
});
export type CallTimelineEntryV1 = Static<typeof CallTimelineEntryV1>;

/** `policy.status`'s answer: the call's status view and version, and its events with `timeline`. */
export const CallStatusReplyV1 = Struct({
  status: ToolCallStatusViewV1,
  /** Stream sequence of the call's last event. */
  version: Type.Integer(),
  timeline: Type.Optional(List(CallTimelineEntryV1)),
});
export type CallStatusReplyV1 = Static<typeof CallStatusReplyV1>;

/**
 * `policy.seal`'s answer: the call's status view (as `policy.status` gives it; `sealed`, since a call that has
 * started is refused instead, as `call_already_started`), when the seal was recorded and whether this request found
 * the call already sealed (by `sealed_by`, maybe another operator), changing nothing.
 */
export const SealCallReplyV1 = Struct({
  ...ToolCallStatusViewV1.properties,
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

/**
 * `policy.grants.set` and `policy.grants.get`'s answer: a grant as policy stores it (or the configured default when
 * none was set): its rules, and the version each offered tool is pinned to.
 */
export const GrantV1 = Struct({
  tenant: Type.String(),
  agent_id: Type.String(),
  /** Rules: `device` (every tool of the extension), `device.tap` (every version), `device.tap@1` (one version). */
  allow: List(Type.String()),
  /** Same rule forms; a tool version matched by any deny rule is never offered or allowed. */
  deny: Type.Optional(List(Type.String())),
  /** Tool name → the one version this grant offers; a stored grant pins every tool it offers. */
  pins: Type.Optional(Type.Record(Type.String(), Type.Integer())),
});
export type GrantV1 = Static<typeof GrantV1>;

/** `policy.tools`'s answer: the tools an agent is offered (grant ∩ catalog), as models see them. */
export const OfferedToolsReplyV1 = Struct({ tools: List(OfferedToolV1) });
export type OfferedToolsReplyV1 = Static<typeof OfferedToolsReplyV1>;

/** One tool `policy.tools.search` found among those the agent is offered. */
export const ToolSearchHitV1 = Struct({
  name: Type.String(),
  version: Type.Integer(),
  description: Type.String(),
  /** 0 to 1: how well the query's words meet the tool's name (weighted most), skills, then description. */
  score: Type.Number(),
});
export type ToolSearchHitV1 = Static<typeof ToolSearchHitV1>;

/** `policy.tools.search`'s answer: the best hits first. */
export const SearchToolsReplyV1 = Struct({ hits: List(ToolSearchHitV1) });
export type SearchToolsReplyV1 = Static<typeof SearchToolsReplyV1>;

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

/** `policy.risk.apps.set` and `policy.risk.apps.get`'s answer: a tenant's finance app lists as stored (both empty when it set none). */
export const RiskAppsV1 = Struct({
  tenant: Type.String(),
  finance: List(Type.String()),
  not_finance: List(Type.String()),
});
export type RiskAppsV1 = Static<typeof RiskAppsV1>;

registerSchema(POLICY_SET_RISK_APPS_V1, SetRiskAppsRequestV1);
registerSchema(POLICY_TENANT_V1, TenantRequestV1);
