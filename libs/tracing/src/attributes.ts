/**
 * The attribute names Ormuz's spans carry: the OpenTelemetry GenAI semantic conventions for a tool call, and
 * Ormuz's own under `ormuz.`. The GenAI names are still "development" in the conventions, which is why they are
 * spelled here rather than imported from `@opentelemetry/semantic-conventions/incubating` (its README asks runtime
 * code to copy incubating names, since they may change in a minor release).
 */
import type { Attributes } from '@opentelemetry/api';

/** `gen_ai.operation.name`: what the span does; `execute_tool` for a tool call. */
export const GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
/** The `gen_ai.operation.name` of a tool call. */
export const EXECUTE_TOOL = 'execute_tool';
/** `gen_ai.tool.name`: the catalog name of the tool (`device.send_message`). */
export const GEN_AI_TOOL_NAME = 'gen_ai.tool.name';
/** `gen_ai.tool.call.id`: the platform's call id (`call_…`), the same on every hop. */
export const GEN_AI_TOOL_CALL_ID = 'gen_ai.tool.call.id';
/** `gen_ai.tool.type`: `function` for every tool the catalog declares. */
export const GEN_AI_TOOL_TYPE = 'gen_ai.tool.type';
/** `gen_ai.conversation.id`: the model-loop conversation that asked. */
export const GEN_AI_CONVERSATION_ID = 'gen_ai.conversation.id';
/** `gen_ai.agent.id`: the agent the call is made for. */
export const GEN_AI_AGENT_ID = 'gen_ai.agent.id';

/** The tenant the call belongs to. */
export const ORMUZ_TENANT = 'ormuz.tenant';
/** The gate's risk level (`low`, `medium`, `high`, `critical`). */
export const ORMUZ_RISK_LEVEL = 'ormuz.risk_level';
/** What was decided at this hop: the gate's `authorize` / `stage` / `refuse`, an owner's `approve` / `deny`. */
export const ORMUZ_DECISION = 'ormuz.decision';
/** The call's status after this hop (`authorized`, `staged`, `succeeded`, …). */
export const ORMUZ_CALL_STATUS = 'ormuz.call.status';
/** The approval a staged call waits on. */
export const ORMUZ_APPROVAL_ID = 'ormuz.approval_id';
/** The device a call runs on. */
export const ORMUZ_DEVICE_ID = 'ormuz.device_id';

/** The attributes every span of one tool call carries. */
export function toolCallAttributes(call: {
  readonly tenant: string;
  readonly tool: string;
  readonly callId: string;
}): Attributes {
  return { [ORMUZ_TENANT]: call.tenant, [GEN_AI_TOOL_NAME]: call.tool, [GEN_AI_TOOL_CALL_ID]: call.callId };
}
