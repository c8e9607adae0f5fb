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
import { MAX_TOOL_CALLS_PER_REPLY } from '../events/conversation.events.js';
import { AsOfV1 } from './as-of.js';
import { registerSchema } from '../schema-registry.js';
import { fragments, List, Nullable, OneOf, Struct, Type, type Static } from '../wire.js';

export const POLICY_SUBMIT_V1 = 'policy.submit.v1';
export const POLICY_STATUS_V1 = 'policy.status.v1';
export const POLICY_SEAL_V1 = 'policy.seal.v1';
/** Schema name of a grant notice's body. */
export const POLICY_GRANT_NOTICE_V1 = 'policy.grant_notice.v1';
export const POLICY_IDENTIFY_V1 = 'policy.identify.v1';

/** Most untrusted sources a submit carries; the conversation keeps the most recent ones. */
export const MAX_TAINT_SOURCES = 16;
/** Most strings one untrusted source carries, and the longest string, in characters. */
export const MAX_TAINT_STRINGS = 256;
export const MAX_TAINT_STRING_CHARS = 4096;

/**
 * One untrusted source the conversation read since the user's last message: a tool result whose data came from
 * outside the platform (a device's screen, messages, contacts, notifications, web text). `strings` are the result's
 * data as the model read it (every string value of its JSON, in order), for policy to match a write's text and
 * target against; `description` is how the owner is told of it.
 */
export const UntrustedSourceV1 = Struct({
  /** The call whose result it was. */
  call_id: fragments.identifier,
  /** The tool that read it, canonical name. */
  tool: Type.String({ minLength: 1, maxLength: 200 }),
  /** Owner-facing, short: `the screen com.example.messages (inbox) of phone-1`. */
  description: Type.String({ minLength: 1, maxLength: 300 }),
  strings: List(Type.String({ maxLength: MAX_TAINT_STRING_CHARS }), { maxItems: MAX_TAINT_STRINGS }),
});
export type UntrustedSourceV1 = Static<typeof UntrustedSourceV1>;

/**
 * What untrusted content entered a conversation's context since the user's last message (docs/decisions/0023). Absent
 * from a submit: nothing untrusted was read (or the caller is not a conversation), and no taint rule applies.
 */
export const ConversationTaintV1 = Struct({
  sources: List(UntrustedSourceV1, { minItems: 1, maxItems: MAX_TAINT_SOURCES }),
});
export type ConversationTaintV1 = Static<typeof ConversationTaintV1>;

/** Most owner denials a submit carries. */
export const MAX_OWNER_DENIALS = 32;

/**
 * A request the owner denied earlier in the same conversation, as the model asked for it: policy refuses the same
 * tool with the same canonical arguments again, quoting `reason`, without asking the owner a second time.
 */
export const OwnerDenialV1 = Struct({
  call_id: fragments.identifier,
  /** Tool name as recorded in the conversation. */
  tool: Type.String({ minLength: 1, maxLength: 200 }),
  /** Arguments as the model sent them. */
  arguments: Type.Unsafe<Record<string, unknown>>({ type: 'object' }),
  /** The owner's reason, or null when they gave none. */
  reason: Nullable(Type.String({ maxLength: 1000 })),
});
export type OwnerDenialV1 = Static<typeof OwnerDenialV1>;

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
  /** Untrusted content the conversation read since the user's last message; absent when none. */
  taint: Type.Optional(ConversationTaintV1),
  /** Requests the owner denied earlier in this conversation; absent when none. */
  denials: Type.Optional(List(OwnerDenialV1, { maxItems: MAX_OWNER_DENIALS })),
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

/**
 * `policy.identify`: the id policy gives the call from each origin, and the tool name a transcript shows it under,
 * before anything is submitted. Records nothing and decides nothing. A conversation writes both into the model's
 * reply before it submits the reply's requests (so a restart re-submits the same calls); `policy.submit` answers
 * the same id for the same origin.
 */
export const IdentifyCallsRequestV1 = Struct({
  tenant: fragments.identifier,
  /** At most {@link MAX_TOOL_CALLS_PER_REPLY} (one model reply's requests). */
  calls: List(
    Struct({
      /** Tool name as the model sent it. */
      tool: Type.String({ maxLength: 4096 }),
      origin: callOriginSchema({ maxTurn: 1_000_000, maxIndex: 1000 }),
    }),
    { maxItems: MAX_TOOL_CALLS_PER_REPLY },
  ),
});
export type IdentifyCallsRequestV1 = Static<typeof IdentifyCallsRequestV1>;

/** One call of `policy.identify`'s answer, in the order asked. */
export const IdentifiedCallV1 = Struct({
  call_id: Type.String(),
  /**
   * The name to show the call under: as sent, with a provider encoding (`shop__order_status`) decoded to its dotted
   * form. `policy.submit` reads it as it reads any name (case, `@<n>` versions).
   */
  tool: Type.String(),
});
export type IdentifiedCallV1 = Static<typeof IdentifiedCallV1>;

/** `policy.identify`'s answer. */
export const IdentifyCallsReplyV1 = Struct({ calls: List(IdentifiedCallV1) });
export type IdentifyCallsReplyV1 = Static<typeof IdentifyCallsReplyV1>;

/** `policy.status`: read a call's status from the log. Sends nothing to any executor. */
export const CallStatusRequestV1 = Struct({
  tenant: fragments.identifier,
  call_id: fragments.identifier,
  /** Include every event of the call. Default false. */
  timeline: Type.Optional(Type.Boolean()),
  /** The call as it stood then: folded from its events recorded by that time or sequence. Default: now. */
  as_of: Type.Optional(AsOfV1),
});
export type CallStatusRequestV1 = Static<typeof CallStatusRequestV1>;

/**
 * `policy.seal`: make sure a call that has not started never runs. Who sealed it is the verified caller, never a
 * field of the request.
 */
export const SealCallRequestV1 = Struct({
  tenant: fragments.identifier,
  call_id: fragments.identifier,
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
registerSchema(POLICY_IDENTIFY_V1, IdentifyCallsRequestV1);
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
  /**
   * Who runs a call of it, from its catalog entry: `device` (the device the call targets) or `platform` (the
   * runtime itself: the core tools that read its records).
   */
  executor: Type.Union([Type.Literal('device'), Type.Literal('platform')]),
});
export type OfferedToolV1 = Static<typeof OfferedToolV1>;

/** The body of a grant notice (`grantNoticeSubject`): whose grant changed. */
export const GrantChangedNoticeV1 = Struct({ agent_id: fragments.identifier });
export type GrantChangedNoticeV1 = Static<typeof GrantChangedNoticeV1>;
registerSchema(POLICY_GRANT_NOTICE_V1, GrantChangedNoticeV1);

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

export const POLICY_SET_SETTINGS_V1 = 'policy.settings.set.v1';

/**
 * What a tenant's writes need while a conversation is tainted (untrusted content read since the user's last message).
 * `matching` (the default): a write whose text or target appeared in the untrusted content waits for the owner;
 * `every_write`: every write waits. High risk always waits.
 */
export const TaintRuleV1 = Type.Enum(['matching', 'every_write']);
export type TaintRuleV1 = Static<typeof TaintRuleV1>;

/** `policy.settings.set`: a tenant's policy settings, replacing the ones it had. */
export const SetPolicySettingsRequestV1 = Struct({ tenant: fragments.identifier, taint_rule: TaintRuleV1 });
export type SetPolicySettingsRequestV1 = Static<typeof SetPolicySettingsRequestV1>;

/** `policy.settings.set` and `policy.settings.get`'s answer: the tenant's settings (the defaults when it set none). */
export const PolicySettingsV1 = Struct({ tenant: Type.String(), taint_rule: TaintRuleV1 });
export type PolicySettingsV1 = Static<typeof PolicySettingsV1>;

registerSchema(POLICY_SET_RISK_APPS_V1, SetRiskAppsRequestV1);
registerSchema(POLICY_SET_SETTINGS_V1, SetPolicySettingsRequestV1);
registerSchema(POLICY_TENANT_V1, TenantRequestV1);

export const POLICY_KEYS_ISSUE_V1 = 'policy.keys.issue.v1';
export const POLICY_KEYS_ROTATE_V1 = 'policy.keys.rotate.v1';
export const POLICY_KEYS_REVOKE_V1 = 'policy.keys.revoke.v1';
export const POLICY_KEYS_LIST_V1 = 'policy.keys.list.v1';

/** Longest rotation overlap: one year, as for device credentials. */
const MAX_GRACE_SECONDS = 366 * 24 * 3600;

/**
 * An API key as operators see it: never the key, never its hash. A key leaves policy exactly once, in the answer to
 * `keys.issue` or `keys.rotate`; only its SHA-256 is kept.
 */
export const ApiKeyViewV1 = Struct({
  key_id: Type.String(),
  tenant: Type.String(),
  agent_id: Type.String(),
  /** What the operator called it (`ci`, `laptop of alice`), or null. */
  label: Nullable(Type.String()),
  /** How it came to be: `issue`, or `rotate` (it replaced the agent's other keys). */
  via: Type.Enum(['issue', 'rotate']),
  /** RFC 3339, like every time below. */
  created_at: Type.String(),
  /** When a rotation replaced it, or null. */
  rotated_at: Nullable(Type.String()),
  /** The key that replaced it, or null. */
  replaced_by: Nullable(Type.String()),
  /** When it stops working (the end of a rotation's grace period); null: until revoked. */
  expires_at: Nullable(Type.String()),
  revoked_at: Nullable(Type.String()),
  /** `active`, `expired` or `revoked`, as of the answer. */
  state: Type.Enum(['active', 'expired', 'revoked']),
});
export type ApiKeyViewV1 = Static<typeof ApiKeyViewV1>;

/** An operator's name for a key. */
const keyLabel = Type.String({ minLength: 1, maxLength: 200 });

/** `policy.keys.issue`: a new API key for an agent of a tenant, beside any it already has. */
export const IssueApiKeyRequestV1 = Struct({
  tenant: fragments.identifier,
  agent_id: fragments.identifier,
  label: Type.Optional(keyLabel),
});
export type IssueApiKeyRequestV1 = Static<typeof IssueApiKeyRequestV1>;

/**
 * `policy.keys.rotate`: a new API key, and the agent's other active keys end after `grace_seconds` (default 3600;
 * 0 ends them now).
 */
export const RotateApiKeyRequestV1 = Struct({
  tenant: fragments.identifier,
  agent_id: fragments.identifier,
  label: Type.Optional(keyLabel),
  grace_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_GRACE_SECONDS })),
});
export type RotateApiKeyRequestV1 = Static<typeof RotateApiKeyRequestV1>;

/** Answer to issue and rotate: the only time the key is shown. */
export const IssuedApiKeyV1 = Struct({
  key: ApiKeyViewV1,
  /** The API key itself, `ormz_<key_id>_<secret>`: what the agent presents. Shown only here. */
  api_key: Type.String(),
});
export type IssuedApiKeyV1 = Static<typeof IssuedApiKeyV1>;

/** `policy.keys.revoke`: one key of the agent, or every key of the agent when `key_id` is absent. Immediate. */
export const RevokeApiKeysRequestV1 = Struct({
  tenant: fragments.identifier,
  agent_id: fragments.identifier,
  key_id: Type.Optional(fragments.identifier),
});
export type RevokeApiKeysRequestV1 = Static<typeof RevokeApiKeysRequestV1>;

/** `policy.keys.revoke`'s answer: the keys it ended (none when there was nothing to revoke). */
export const RevokedApiKeysV1 = Struct({ revoked: List(Type.String()) });
export type RevokedApiKeysV1 = Static<typeof RevokedApiKeysV1>;

/** `policy.keys.list`: a tenant's keys, or one agent's. */
export const ListApiKeysRequestV1 = Struct({
  tenant: fragments.identifier,
  agent_id: Type.Optional(fragments.identifier),
});
export type ListApiKeysRequestV1 = Static<typeof ListApiKeysRequestV1>;

/** `policy.keys.list`'s answer, by agent, oldest key first. */
export const ApiKeyListV1 = Struct({ keys: List(ApiKeyViewV1) });
export type ApiKeyListV1 = Static<typeof ApiKeyListV1>;

registerSchema(POLICY_KEYS_ISSUE_V1, IssueApiKeyRequestV1);
registerSchema(POLICY_KEYS_ROTATE_V1, RotateApiKeyRequestV1);
registerSchema(POLICY_KEYS_REVOKE_V1, RevokeApiKeysRequestV1);
registerSchema(POLICY_KEYS_LIST_V1, ListApiKeysRequestV1);
