/**
 * Puts a call on the log the way policy would, for tests of what comes after policy (the bridge, approvals, audit,
 * the consumers): a submit, then its decision. Takes anything with the `execute` of service-kit's `ToolCalls`, so this
 * library needs no runtime package (the tool-call domain library only for its command types).
 */
import { canonicalPayload, type CallOriginV1, type CallRequestedV1 } from '@ormuz/contracts';
import type { ApproveCall, ClaimStart, DenyCall, DispatchCall, MarkOutcomeUnknown, SealCall } from '@ormuz/tool-call';

/** The two commands a seeded call is made of, as the tool-call decider takes them. */
export type SeedCommand =
  | { readonly type: 'SubmitCall'; readonly data: CallRequestedV1 }
  | {
      readonly type: 'AuthorizeCall';
      readonly data: {
        readonly call_id: string;
        readonly verdict: { readonly level: 'low'; readonly reasons: string[] };
      };
    };

/** Where the commands go: `ToolCalls` of `@ormuz/service-kit`, opened with the source of the service it stands for. */
export interface CallAppender {
  execute(
    tenant: string,
    callId: string,
    command: SeedCommand,
    cause: { readonly correlationid: string; readonly causationid: string },
  ): Promise<unknown>;
}

export interface SeededCall {
  readonly tenant: string;
  /** The call id, derived by the caller from the origin (`deriveCallId` of `@ormuz/tool-call`). */
  readonly callId: string;
  readonly tool: string;
  /** The arguments; canonicalised here. Default `{}`. */
  readonly args?: unknown;
  readonly origin: CallOriginV1;
  /** Default `agent-1`. */
  readonly agentId?: string;
  /** The target device, or none. Default `phone-1`. */
  readonly deviceId?: string | null;
}

/** What was appended: the canonical payload and its hash, as the device will be sent them. */
export interface SeedResult {
  readonly callId: string;
  readonly payload: string;
  readonly sha256: string;
}

/** The `SubmitCall` command of a seeded call, with its canonical payload and hash: for deciders folded in memory. */
export function seededSubmit(call: SeededCall): SeedResult & { readonly command: SeedCommand } {
  const { payload, sha256 } = canonicalPayload(call.args ?? {});
  const deviceId = call.deviceId === undefined ? 'phone-1' : call.deviceId;
  const command: SeedCommand = {
    type: 'SubmitCall',
    data: {
      call_id: call.callId,
      tool: call.tool,
      contract_version: '1',
      payload,
      payload_sha256: sha256,
      origin: call.origin,
      agent_id: call.agentId ?? 'agent-1',
      target: deviceId === null ? null : { device_id: deviceId },
    },
  };
  return { callId: call.callId, payload, sha256, command };
}

/** Appends the call's request (no decision yet). */
export async function submitSeededCall(
  calls: CallAppender,
  call: SeededCall,
  cause = causeOf(call),
): Promise<SeedResult> {
  const { command, ...seeded } = seededSubmit(call);
  await calls.execute(call.tenant, call.callId, command, cause);
  return seeded;
}

/** Appends the call's request, then authorizes it as low risk: the call is ready to run. */
export async function authorizeSeededCall(
  calls: CallAppender,
  call: SeededCall,
  cause = causeOf(call),
): Promise<SeedResult> {
  const seeded = await submitSeededCall(calls, call, cause);
  await calls.execute(
    call.tenant,
    call.callId,
    { type: 'AuthorizeCall', data: { call_id: call.callId, verdict: { level: 'low', reasons: ['test'] } } },
    cause,
  );
  return seeded;
}

function causeOf(call: SeededCall): { correlationid: string; causationid: string } {
  const id = call.origin.kind === 'operation' ? call.origin.operation_id : call.callId;
  return { correlationid: id, causationid: id };
}

/** Who decides, seals and runs the calls that tests drive through their lifecycles. */
const OWNER = 'owner@acme';
const OPERATOR = 'ops@acme';

/**
 * The commands that take one call past its decision, as approvals, an operator and an executor send them: for tests
 * that drive calls through every lifecycle with the real decider (read models, their crash tests).
 */
export function lifecycleCommands(callId: string, sha256: string, contractVersion = 'v1-test') {
  return {
    approve: (approvalId: string): ApproveCall => ({
      type: 'ApproveCall',
      data: {
        call_id: callId,
        approval_id: approvalId,
        decided_by: OWNER,
        payload_sha256: sha256,
        contract_version: contractVersion,
      },
    }),
    deny: (approvalId: string): DenyCall => ({
      type: 'DenyCall',
      data: { call_id: callId, approval_id: approvalId, decided_by: OWNER, reason: null },
    }),
    seal: (): SealCall => ({ type: 'SealCall', data: { call_id: callId, sealed_by: OPERATOR, reason: 'wrong target' } }),
    /** Dispatches to the target device, or to model-loop when the call has none. */
    dispatch: (requestId: string, device: { readonly device_id: string } | null, deadline: string): DispatchCall => ({
      type: 'DispatchCall',
      data: {
        call_id: callId,
        request_id: requestId,
        executor: device ? { kind: 'device', device_id: device.device_id } : { kind: 'platform', service: 'model-loop' },
        deadline,
      },
    }),
    claimStart: (requestId: string, device: { readonly device_id: string } | null, bootId = 'boot-1'): ClaimStart => ({
      type: 'ClaimStart',
      data: { call_id: callId, request_id: requestId, executor_id: device?.device_id ?? 'model-loop', boot_id: bootId },
    }),
    connectionLost: (requestId: string): MarkOutcomeUnknown => ({
      type: 'MarkOutcomeUnknown',
      data: { call_id: callId, request_id: requestId, cause: 'connection_lost', detail: 'the device went away' },
    }),
  };
}
