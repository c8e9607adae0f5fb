/**
 * Wire contracts of policy's NATS commands (`<namespace>.cmd.policy.<name>`). Versioned by name; old versions stay
 * readable when a new one is added.
 */
import { MAX_TOOL_CALLS_PER_REPLY } from '../events/conversation.events.js';
import type { CallOriginV1 } from '../events/tool-call.events.js';
import { fragments, registerSchema } from '../schema-registry.js';

/** `policy.submit`: hand one tool request to the gate. Tenant and agent come from the caller's session. */
export interface SubmitCallRequestV1 {
  readonly tenant: string;
  readonly agent_id: string;
  /**
   * Tool name as the model sent it, read leniently by the catalog (case, camelCase, provider encoding, `@<n>` for a
   * version). An unknown tool name is recorded and refused with suggestions; text that is not a tool name at all is
   * refused as `unknown_tool`, with suggestions, before anything is recorded.
   */
  readonly tool: string;
  /** Arguments as the model sent them (a JSON object). */
  readonly arguments: Record<string, unknown>;
  readonly origin: CallOriginV1;
  /** The device this session acts on, or null. */
  readonly device_id: string | null;
  /** Correlation id for the events (the conversation id, or the operation id). */
  readonly correlation_id?: string;
}

/** What the gate decided, or the original record when the same call was submitted before. */
export interface SubmitCallReplyV1 {
  readonly call_id: string;
  /** The call's status after this submit: refused, staged, authorized, or any later status for a duplicate. */
  readonly status: string;
  /**
   * True when this call id was already recorded for the same request (agent, device, tool, contract version and
   * bytes): nothing new happened. The same id for another request is refused as `payload_conflict`.
   */
  readonly duplicate: boolean;
  readonly payload_sha256: string;
  /** Model-facing sentence for refusals and pending confirmations. */
  readonly message: string | null;
  readonly approval_id: string | null;
  readonly summary: string | null;
  readonly expires_at: string | null;
}

/**
 * `policy.identify`: the id policy gives the call from each origin, and the tool name a transcript shows it under,
 * before anything is submitted. Records nothing and decides nothing. A conversation writes both into the model's
 * reply before it submits the reply's requests (so a restart re-submits the same calls); `policy.submit` answers
 * the same id for the same origin.
 */
export interface IdentifyCallsRequestV1 {
  readonly tenant: string;
  /** At most {@link MAX_TOOL_CALLS_PER_REPLY} (one model reply's requests). */
  readonly calls: readonly {
    /** Tool name as the model sent it. */
    readonly tool: string;
    readonly origin: CallOriginV1;
  }[];
}

/** One call of `policy.identify`'s answer, in the order asked. */
export interface IdentifiedCallV1 {
  readonly call_id: string;
  /**
   * The name to show the call under: as sent, with a provider encoding (`shop__order_status`) decoded to its dotted
   * form. `policy.submit` reads it as it reads any name (case, `@<n>` versions).
   */
  readonly tool: string;
}

/** `policy.identify`'s answer. */
export interface IdentifyCallsReplyV1 {
  readonly calls: readonly IdentifiedCallV1[];
}

/** `policy.status`: read a call's status from the log. Sends nothing to any executor. */
export interface CallStatusRequestV1 {
  readonly tenant: string;
  readonly call_id: string;
  /** Include every event of the call. Default false. */
  readonly timeline?: boolean;
}

/** `policy.seal`: make sure a call that has not started never runs. */
export interface SealCallRequestV1 {
  readonly tenant: string;
  readonly call_id: string;
  readonly sealed_by: string;
  readonly reason: string;
}

/**
 * `policy.seal`'s answer, beside the call's status view (as `policy.status` gives it): when the seal was recorded and
 * whether this request found the call already sealed (by `sealed_by`, maybe another operator), changing nothing.
 */
export interface SealCallReplyV1 {
  readonly call_id: string | null;
  /** `sealed`: a call that has started is refused instead (`call_already_started`). */
  readonly status: string;
  readonly sealed_by: string | null;
  /** RFC 3339, from the log. */
  readonly sealed_at: string | null;
  readonly already_sealed: boolean;
  /** One sentence: who sealed the call, when and why, and for a repeat that it changed nothing. */
  readonly message: string;
}

const origin = {
  oneOf: [
    {
      type: 'object',
      additionalProperties: false,
      required: ['kind', 'conversation_id', 'turn', 'index'],
      properties: {
        kind: { const: 'conversation' },
        conversation_id: fragments.identifier,
        turn: { type: 'integer', minimum: 0, maximum: 1_000_000 },
        index: { type: 'integer', minimum: 0, maximum: 1000 },
      },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['kind', 'operation_id'],
      properties: { kind: { const: 'operation' }, operation_id: fragments.identifier },
    },
  ],
};

export const POLICY_SUBMIT_V1 = 'policy.submit.v1';
export const POLICY_IDENTIFY_V1 = 'policy.identify.v1';
export const POLICY_STATUS_V1 = 'policy.status.v1';
export const POLICY_SEAL_V1 = 'policy.seal.v1';

registerSchema(POLICY_SUBMIT_V1, {
  type: 'object',
  additionalProperties: false,
  required: ['tenant', 'agent_id', 'tool', 'arguments', 'origin', 'device_id'],
  properties: {
    tenant: fragments.identifier,
    agent_id: fragments.identifier,
    tool: { type: 'string', minLength: 1, maxLength: 200 },
    arguments: { type: 'object' },
    origin,
    device_id: { oneOf: [fragments.identifier, { type: 'null' }] },
    correlation_id: { type: 'string', minLength: 1, maxLength: 256 },
  },
});
registerSchema(POLICY_IDENTIFY_V1, {
  type: 'object',
  additionalProperties: false,
  required: ['tenant', 'calls'],
  properties: {
    tenant: fragments.identifier,
    calls: {
      type: 'array',
      maxItems: MAX_TOOL_CALLS_PER_REPLY,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['tool', 'origin'],
        properties: { tool: { type: 'string', maxLength: 4096 }, origin },
      },
    },
  },
});
registerSchema(POLICY_STATUS_V1, {
  type: 'object',
  additionalProperties: false,
  required: ['tenant', 'call_id'],
  properties: { tenant: fragments.identifier, call_id: fragments.identifier, timeline: { type: 'boolean' } },
});
registerSchema(POLICY_SEAL_V1, {
  type: 'object',
  additionalProperties: false,
  required: ['tenant', 'call_id', 'sealed_by', 'reason'],
  properties: {
    tenant: fragments.identifier,
    call_id: fragments.identifier,
    sealed_by: { type: 'string', minLength: 1, maxLength: 200 },
    reason: { type: 'string', minLength: 1, maxLength: 1000 },
  },
});

/** `policy.grants.set`: what an agent of a tenant may call. Rules: `device`, `device.tap`, `device.tap@1`. */
export interface SetGrantRequestV1 {
  readonly tenant: string;
  readonly agent_id: string;
  readonly allow: readonly string[];
  readonly deny?: readonly string[];
}

/** `policy.grants.get` and `policy.tools`: for one agent of a tenant. */
export interface AgentRequestV1 {
  readonly tenant: string;
  readonly agent_id: string;
}

/** `policy.tools.search`: search the tools an agent is granted (what `ormuz.search_tools` runs). */
export interface SearchToolsRequestV1 extends AgentRequestV1 {
  readonly query: string;
  readonly limit?: number;
}

/** One tool as a model is offered it. */
export interface OfferedToolV1 {
  readonly name: string;
  readonly version: number;
  readonly description: string;
  /** JSON Schema of the arguments the model may send (designer parameters are absent). */
  readonly parameters: Record<string, unknown>;
  readonly effect: string;
  readonly risk_level: string;
}

export const POLICY_SET_GRANT_V1 = 'policy.grants.set.v1';
export const POLICY_AGENT_V1 = 'policy.agent.v1';
export const POLICY_SEARCH_TOOLS_V1 = 'policy.tools.search.v1';

const grantRules = { type: 'array', maxItems: 500, items: { type: 'string', minLength: 1, maxLength: 200 } };
registerSchema(POLICY_SET_GRANT_V1, {
  type: 'object',
  additionalProperties: false,
  required: ['tenant', 'agent_id', 'allow'],
  properties: { tenant: fragments.identifier, agent_id: fragments.identifier, allow: grantRules, deny: grantRules },
});
registerSchema(POLICY_AGENT_V1, {
  type: 'object',
  additionalProperties: false,
  required: ['tenant', 'agent_id'],
  properties: { tenant: fragments.identifier, agent_id: fragments.identifier },
});
registerSchema(POLICY_SEARCH_TOOLS_V1, {
  type: 'object',
  additionalProperties: false,
  required: ['tenant', 'agent_id', 'query'],
  properties: {
    tenant: fragments.identifier,
    agent_id: fragments.identifier,
    query: { type: 'string', minLength: 1, maxLength: 1000 },
    limit: { type: 'integer', minimum: 1, maximum: 50 },
  },
});

/**
 * `policy.risk.apps.set`: a tenant's own finance app lists, replacing the ones it had. `finance` packages make every
 * screen action in them high; `not_finance` packages are never judged finance apps. Each covers the packages under it.
 */
export interface SetRiskAppsRequestV1 {
  readonly tenant: string;
  readonly finance: readonly string[];
  readonly not_finance: readonly string[];
}

/** `policy.risk.apps.get`: for one tenant. */
export interface TenantRequestV1 {
  readonly tenant: string;
}

export const POLICY_SET_RISK_APPS_V1 = 'policy.risk.apps.set.v1';
export const POLICY_TENANT_V1 = 'policy.tenant.v1';

// Packages are checked by the risk library (tenantAppListProblems), which words the fix; the schema only bounds them.
const packageList = { type: 'array', maxItems: 500, items: { type: 'string', minLength: 1, maxLength: 255 } };
registerSchema(POLICY_SET_RISK_APPS_V1, {
  type: 'object',
  additionalProperties: false,
  required: ['tenant', 'finance', 'not_finance'],
  properties: { tenant: fragments.identifier, finance: packageList, not_finance: packageList },
});
registerSchema(POLICY_TENANT_V1, {
  type: 'object',
  additionalProperties: false,
  required: ['tenant'],
  properties: { tenant: fragments.identifier },
});
