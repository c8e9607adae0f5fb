import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { randomUUID } from 'node:crypto';
import { outputProblems, type Catalog } from '@ormuz/catalog';
import { sha256Hex, ToolCallEventType as T, type JsonValue, type OrmuzEvent } from '@ormuz/contracts';
import { ToolCalls, type CallCausation } from '@ormuz/service-kit';
import { isToolCallError, type CallFacts, type CallOutcome, type ToolCallState } from '@ormuz/tool-call';
import { isCoreTool, type CoreToolOutcome } from '../domain/core-tools.js';
import { CORE_CATALOG, CoreToolsExecutor } from '../executors/core-tools.executor.js';

/** Answers true when this event's call was a core tool call that model-loop ran (or finished running) now. */
export class RunCoreToolCommand extends Command<boolean> {
  constructor(
    readonly event: OrmuzEvent,
    /** 1 on the first delivery of the event. */
    readonly attempt: number,
  ) {
    super();
  }
}

/** The platform executor as the call log names it. */
export const PLATFORM_EXECUTOR = { kind: 'platform', service: 'model-loop' } as const;
/** This process's boot: a restarted model-loop resumes its own earlier start instead of claiming anew. */
const BOOT_ID = `boot_${randomUUID().replaceAll('-', '')}`;
/** Deliveries that may fail on infrastructure before the call is recorded as failed rather than retried. */
const ATTEMPTS = 5;

/**
 * Model-loop is the executor of the platform's own tools. When policy authorises a call with no device target (it
 * gives one to every tool whose catalog entry says the device runs it, so a call without one is the platform's),
 * this hands it to the platform, wins the start claim (an append that loses to a seal), runs the tool and records
 * its outcome on the call, so the log shows the core tool's run like any other executor's. A platform call of a tool
 * this runtime has no executor for fails with `unsupported_tool`. The tools only read, or record an activation
 * idempotently, so a restart resumes a started call by running it again.
 *
 * The dispatch's request id is the call id, as the device bridge's is: a call is dispatched at most once, so its one
 * request needs no name of its own (see docs/decisions/0013-one-identity-one-route.md).
 */
@CommandHandler(RunCoreToolCommand)
export class RunCoreToolHandler implements ICommandHandler<RunCoreToolCommand> {
  constructor(
    private readonly calls: ToolCalls,
    private readonly executor: CoreToolsExecutor,
    @Inject(CORE_CATALOG) private readonly catalog: Catalog,
  ) {}

  async execute({ event, attempt }: RunCoreToolCommand): Promise<boolean> {
    if (event.type !== T.Authorized) return false;
    const { state } = await this.calls.load(event.tenant, event.subject);
    // Routed by what policy recorded: a call with a device target is the device's, whatever its tool is called.
    if (state.status === 'absent' || state.call.target !== null) return false;
    const cause = { correlationid: correlationOf(state), causationid: event.id };
    const requestId = await this.claim(event.tenant, state, cause);
    if (!requestId) return false;
    const outcome = await this.outcome(event.tenant, state.call, attempt);
    await this.calls.execute(
      event.tenant,
      state.call.call_id,
      { type: 'RecordOutcome', data: { call_id: state.call.call_id, request_id: requestId, outcome } },
      cause,
    );
    return true;
  }

  /** Dispatches to the platform and claims the start; the request id once this platform runs it, else null. */
  private async claim(tenant: string, state: ToolCallState, cause: CallCausation): Promise<string | null> {
    if (state.status === 'absent') return null;
    const callId = state.call.call_id;
    const timeoutMs = this.catalog.resolve(state.call.tool)?.definition.timeout_ms ?? 5_000;
    let s: ToolCallState = state;
    try {
      if (s.status === 'authorized') {
        const deadline = new Date(Date.now() + timeoutMs).toISOString();
        const data = { call_id: callId, request_id: callId, executor: PLATFORM_EXECUTOR, deadline };
        s = (await this.calls.execute(tenant, callId, { type: 'DispatchCall', data }, cause)).state;
      }
      if (s.status === 'dispatched' && s.dispatch.executor.kind === 'platform') {
        const data = {
          call_id: callId,
          request_id: s.dispatch.request_id,
          executor_id: 'model-loop',
          boot_id: BOOT_ID,
        };
        s = (await this.calls.execute(tenant, callId, { type: 'ClaimStart', data }, cause)).state;
      }
    } catch (err) {
      // Sealed meanwhile, or started by an earlier boot of model-loop: what the log now says decides.
      if (!isToolCallError(err)) throw err;
      s = (await this.calls.load(tenant, callId)).state;
    }
    return s.status === 'started' && s.dispatch.executor.kind === 'platform' ? s.dispatch.request_id : null;
  }

  private async outcome(tenant: string, call: CallFacts, attempt: number): Promise<CallOutcome> {
    const entry = this.catalog.resolve(call.tool, Number(call.contract_version));
    let result: CoreToolOutcome;
    if (!isCoreTool(call.tool)) {
      result = failed('unsupported_tool', `This runtime has no executor for ${call.tool}; nothing was run.`);
    } else if (!entry) {
      result = failed(
        'unsupported_version',
        `This runtime cannot run version ${call.contract_version} of ${call.tool}.`,
      );
    } else {
      const args = await this.arguments(tenant, call.call_id, call.payload_sha256);
      try {
        result = args
          ? await this.executor.run({ tenant, ...call, tool: call.tool, args })
          : failed('payload_mismatch', 'The recorded arguments do not match their hash; nothing was run.');
      } catch (err) {
        if (attempt < ATTEMPTS) throw err;
        const why = err instanceof Error ? err.message : String(err);
        result = failed(
          'platform_unavailable',
          `The runtime could not complete ${call.tool} (${why}). Try again later.`,
        );
      }
      const problems = result.ok ? outputProblems(entry, result.result) : [];
      if (problems.length > 0) {
        result = failed('output_contract', `The runtime produced a result outside the contract of ${call.tool}.`);
      }
    }
    return result.ok ? { kind: 'succeeded', result: result.result } : { kind: 'failed', error: result.error };
  }

  /** The call's recorded arguments, verified against the recorded hash as every executor must; null on mismatch. */
  private async arguments(tenant: string, callId: string, sha256: string) {
    const [first] = await this.calls.timeline(tenant, callId);
    const requested = first?.event.type === T.Requested ? (first.event.data as { payload?: unknown }) : undefined;
    if (typeof requested?.payload !== 'string' || sha256Hex(requested.payload) !== sha256) return null;
    return JSON.parse(requested.payload) as Record<string, JsonValue>;
  }
}

function correlationOf(state: ToolCallState): string {
  if (state.status === 'absent') return 'unknown';
  const origin = state.call.origin;
  return origin.kind === 'conversation' ? origin.conversation_id : state.call.call_id;
}

function failed(code: string, message: string): CoreToolOutcome {
  return { ok: false, error: { code, message } };
}
