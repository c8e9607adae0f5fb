/**
 * Runs the platform's own tools for calls policy has authorised. Each tool reads (policy's status and tool directory,
 * or the call log through policy) and at most records an activation on the conversation; none acts on a device, so
 * running one again after a crash is safe. The result is shaped by the pure half in `domain/core-tools.ts`.
 */
import { Inject, Injectable } from '@nestjs/common';
import { Catalog, canonicalFromProviderName, CORE_EXTENSION, DEFAULT_DESIGNER_CONFIG } from '@ormuz/catalog';
import {
  isToolCallEvent,
  ToolCallEventType as T,
  type CallOriginV1,
  type CallRequestedV1,
  type CallTimelineEntryV1,
  type JsonValue,
} from '@ormuz/contracts';
import { RemoteError } from '@ormuz/service-kit';
import { MODEL_LOOP_CONFIG, type ModelLoopConfig } from '../config.js';
import {
  activationResult,
  callNotFound,
  callStatusResult,
  CoreTool,
  readMoreResult,
  SEARCH_DEFAULT_RESULTS,
  searchableQuery,
  searchResult,
  type CoreToolOutcome,
} from '../domain/core-tools.js';
import { isConversationNotFoundError } from '../domain/errors.js';
import { fenceSafeJson, parseContinuation, reportOf, resultData } from '@ormuz/tool-call';
import { Conversations } from '../persistence/conversations.js';
import { PolicyClient } from '../transport/policy.client.js';

/** The authorised call a core tool runs for: who asked, from where, with which (verified) arguments. */
export interface CoreToolCall {
  readonly tenant: string;
  readonly call_id: string;
  readonly tool: CoreTool;
  readonly agent_id: string;
  readonly origin: CallOriginV1;
  readonly args: Readonly<Record<string, JsonValue>>;
}

/** Injection token of the catalog of core tools, for their timeouts and output contracts. */
export const CORE_CATALOG = Symbol('model-loop.core-catalog');

/** The core tools' catalog: the platform's own extension and the shipped designer values. */
export function loadCoreCatalog(): Catalog {
  return Catalog.load([], { core: CORE_EXTENSION, designer: DEFAULT_DESIGNER_CONFIG });
}

/** `max_result_chars` when the recorded arguments lack the designer value. */
const DEFAULT_READ_MORE_CHARS = 4000;

@Injectable()
export class CoreToolsExecutor {
  constructor(
    private readonly policy: PolicyClient,
    private readonly conversations: Conversations,
    @Inject(MODEL_LOOP_CONFIG) private readonly config: ModelLoopConfig,
  ) {}

  /** Runs one core tool. Throws only for infrastructure failures (policy or the log unreachable), to be retried. */
  run(call: CoreToolCall): Promise<CoreToolOutcome> {
    switch (call.tool) {
      case CoreTool.SearchTools:
        return this.searchTools(call);
      case CoreTool.ActivateTool:
        return this.activateTool(call);
      case CoreTool.ReadMore:
        return this.readMore(call);
      case CoreTool.CheckCallStatus:
        return this.checkCallStatus(call);
      default:
        return assertNever(call.tool);
    }
  }

  private async searchTools({ tenant, agent_id, args }: CoreToolCall): Promise<CoreToolOutcome> {
    const query = args.query;
    if (!searchableQuery(query)) return searchResult(query, []);
    const limit = typeof args.max_results === 'number' ? args.max_results : SEARCH_DEFAULT_RESULTS;
    return searchResult(query, await this.policy.searchTools({ tenant, agent_id, query, limit }));
  }

  private async activateTool(call: CoreToolCall): Promise<CoreToolOutcome> {
    const { tenant, agent_id, origin, args } = call;
    const raw = args.tool_name;
    const name = typeof raw === 'string' ? (canonicalFromProviderName(raw) ?? raw) : raw;
    const outcome = activationResult(name, await this.policy.tools(tenant, agent_id));
    if (!outcome.ok) return outcome;
    if (origin.kind !== 'conversation') {
      return failure(
        'not_in_conversation',
        'Activating a tool keeps it offered for the rest of a conversation, and this call was not made in one. ' +
          'Call the tool directly by its exact name instead.',
      );
    }
    const activated = outcome.result as { tool_name: string; version: number };
    try {
      await this.conversations.execute(
        tenant,
        origin.conversation_id,
        {
          type: 'ActivateTool',
          data: {
            conversation_id: origin.conversation_id,
            call_id: call.call_id,
            tool: activated.tool_name,
            version: activated.version,
          },
        },
        { correlationid: origin.conversation_id, causationid: call.call_id },
      );
    } catch (err) {
      if (!isConversationNotFoundError(err)) throw err;
      return failure('not_in_conversation', 'This conversation is not run by this deployment; nothing was activated.');
    }
    return outcome;
  }

  private async readMore(call: CoreToolCall): Promise<CoreToolOutcome> {
    const handle = parseContinuation(String(call.args.continuation));
    const invalid = failure(
      'continuation_invalid',
      'That continuation was not issued in this conversation. Pass the continuation of a partial result ' +
        'unchanged, or call the original tool again.',
    );
    if (!handle) return invalid;
    const target = await this.readCall(call, handle.call_id);
    if (!target) return invalid;
    const settled = target.timeline.findLast((e) => e.type === T.Succeeded || e.type === T.Failed);
    const report = settled && isToolCallEvent(settled) ? reportOf(settled) : null;
    const data = report ? resultData(report) : undefined;
    if (data === undefined) {
      return failure(
        'result_not_available',
        `Call ${handle.call_id} has no recorded result to read on from. Check it with ${CoreTool.CheckCallStatus}.`,
      );
    }
    const maxChars =
      typeof call.args.max_result_chars === 'number' ? call.args.max_result_chars : DEFAULT_READ_MORE_CHARS;
    return readMoreResult(fenceSafeJson(data), handle.call_id, handle.offset, maxChars, this.config.toolResultMaxBytes);
  }

  private async checkCallStatus(call: CoreToolCall): Promise<CoreToolOutcome> {
    const callId = call.args.call_id;
    const target = typeof callId === 'string' ? await this.readCall(call, callId) : undefined;
    if (!target) return callNotFound(callId);
    return callStatusResult({
      call_id: target.call_id,
      status: target.view.status,
      outcome: target.view.outcome,
      updated_at: target.timeline.at(-1)!.time,
    });
  }

  /**
   * Another call of the same conversation (or, for an API caller, of the same agent), read from the log through
   * `policy.status`; `undefined` when it does not exist or belongs elsewhere. Reading never acts.
   */
  private async readCall(call: CoreToolCall, callId: string) {
    let reply;
    try {
      reply = await this.policy.status({ tenant: call.tenant, call_id: callId, timeline: true });
    } catch (err) {
      if (err instanceof RemoteError && (err.code === 'call_not_found' || err.code === 'schema_violation')) {
        return undefined;
      }
      throw err;
    }
    const requested = reply.timeline?.find((e) => e.type === T.Requested)?.data as CallRequestedV1 | undefined;
    if (!requested || !sameScope(call, requested)) return undefined;
    const timeline: readonly CallTimelineEntryV1[] = (reply.timeline ?? []).filter((e) =>
      isToolCallEvent({ type: e.type, data: e.data }),
    );
    return { call_id: callId, view: reply.status, timeline };
  }
}

/** True when `target` was requested where `call` was: the same conversation, or by the same agent outside one. */
function sameScope(call: CoreToolCall, target: CallRequestedV1): boolean {
  if (call.origin.kind === 'conversation') {
    return target.origin.kind === 'conversation' && target.origin.conversation_id === call.origin.conversation_id;
  }
  return target.origin.kind === 'operation' && target.agent_id === call.agent_id;
}

function failure(code: string, message: string): CoreToolOutcome {
  return { ok: false, error: { code, message } };
}

function assertNever(value: never): never {
  throw new Error(`unhandled core tool ${JSON.stringify(value)}`);
}
