import { Inject, Injectable } from '@nestjs/common';
import type { CallStatusReplyV1, OfferedToolV1, SubmitCallReplyV1, SubmitCallRequestV1 } from '@ormuz/contracts';
import { isTransientRemoteError, RemoteError, submitUnansweredHint } from '@ormuz/service-kit';
import { MCP_GATEWAY_CONFIG, type McpGatewayConfig } from '../config.js';
import { reportOfStatus, resultOf, SETTLED, stillRunning, type McpCallResult } from '../domain/call-result.js';
import { isSessionOperationId } from '../domain/operation-id.js';
import { CallAppends } from '../transport/call-appends.js';
import { ResentCalls } from './resent-calls.js';
import { PolicyClient } from '../transport/policy.client.js';

/** Who a session acts for: the tenant and agent of its API key, and the device it named (or none). */
export interface SessionPrincipal {
  readonly tenant: string;
  readonly agentId: string;
  readonly deviceId: string | null;
}

/** One `tools/call` as the gateway hands it on. */
export interface CallAsked {
  readonly tool: string;
  /** What the agent is offered: who runs the tool called (the provenance its result is fenced with). */
  readonly offered: Promise<readonly OfferedToolV1[]>;
  readonly arguments: Record<string, unknown>;
  /** The client's `_meta["ormuz/operation_id"]`, or one derived from the session and request (operation-id.ts). */
  readonly operationId: string;
  /** Told each new status while the gateway waits (MCP progress notifications). */
  readonly onProgress?: (step: number, status: string) => Promise<void>;
  readonly signal?: AbortSignal;
  /**
   * Run as a task: a staged call is waited for past the owner's decision to its real outcome, for at most this many
   * ms, instead of being answered at once as pending.
   */
  readonly taskWaitMs?: number;
}

const SUBMIT_ATTEMPTS = 5;

/**
 * A `tools/call` through policy, as model-loop hands on a model's request: policy identifies the call (its id comes
 * from the operation, never from the client), the gate decides, and a call that runs is waited for, bounded by
 * `callWaitMs`, reading its status from the log. A staged call is answered at once: its outcome waits for the owner.
 * A call without the client's operation id that repeats one made within `resendWindowMs` is submitted under the
 * original's operation id (ResentCalls), so that policy answers the original call.
 */
@Injectable()
export class CallRunner {
  private readonly resent: ResentCalls;

  constructor(
    private readonly policy: PolicyClient,
    private readonly appends: CallAppends,
    @Inject(MCP_GATEWAY_CONFIG) private readonly config: McpGatewayConfig,
  ) {
    this.resent = new ResentCalls(config.resendWindowMs);
  }

  async run(who: SessionPrincipal, asked: CallAsked): Promise<McpCallResult> {
    const { tenant, agentId } = who;
    const operationId = isSessionOperationId(asked.operationId)
      ? this.resent.operationIdOf(who, asked.tool, asked.arguments, asked.operationId)
      : asked.operationId;
    const origin = { kind: 'operation' as const, operation_id: operationId };
    const [identify, offered] = await Promise.all([
      this.policy.call('policy.identify', agentId, { tenant, calls: [{ tool: asked.tool, origin }] }),
      asked.offered,
    ]);
    const [identified] = identify.calls;
    if (!identified) throw new Error('policy identified no call');
    const callId = identified.call_id;
    const tool = identified.tool;
    const executor = offered.find((t) => t.name === tool)?.executor;
    const source = who.deviceId && executor === 'device' ? `device:${who.deviceId}` : 'ormuz';
    const request: SubmitCallRequestV1 = {
      tenant,
      agent_id: agentId,
      tool: asked.tool,
      arguments: asked.arguments,
      origin,
      device_id: who.deviceId,
      correlation_id: operationId,
    };
    const submitted = await this.submit(request, callId);
    if ('rejected' in submitted) {
      return resultOf(callId, tool, 'ormuz', { status: 'rejected', message: submitted.rejected });
    }
    const reply = submitted.reply;
    if (reply.status === 'refused') {
      return resultOf(callId, tool, 'ormuz', { status: 'refused', message: reply.message ?? 'The call was refused.' });
    }
    if (reply.status === 'staged' && reply.approval_id && reply.summary && asked.taskWaitMs === undefined) {
      return resultOf(callId, tool, 'ormuz', {
        status: 'pending_confirmation',
        approval_id: reply.approval_id,
        summary: reply.summary,
      });
    }
    return this.await(who, asked, callId, tool, source, reply);
  }

  /** Submits, asking again while policy's answer says nothing about the request (a re-submit observes the original). */
  private async submit(
    request: SubmitCallRequestV1,
    callId: string,
  ): Promise<{ readonly reply: SubmitCallReplyV1 } | { readonly rejected: string }> {
    for (let attempt = 1; ; attempt++) {
      try {
        return {
          reply: await this.policy.call(
            'policy.submit',
            request.agent_id,
            request,
            submitUnansweredHint(request, callId),
          ),
        };
      } catch (err) {
        if (!isTransientRemoteError(err)) return { rejected: (err as Error).message };
        if (attempt >= SUBMIT_ATTEMPTS) throw err;
        await delay(20 * 2 ** attempt);
      }
    }
  }

  /**
   * The client cancelled its request (`notifications/cancelled`, or it went away) while the call had not settled: a
   * call that has not started is sealed, so that it never runs; one that has started runs to its outcome, recorded
   * as always. Nobody reads this answer (the SDK sends none for a cancelled request); the log holds what happened.
   */
  private async cancelled(
    who: SessionPrincipal,
    callId: string,
    tool: string,
    status: string,
    waited: number,
  ): Promise<McpCallResult> {
    try {
      const sealed = await this.policy.call('policy.seal', who.agentId, {
        tenant: who.tenant,
        call_id: callId,
        reason: 'the MCP client cancelled its request before the call started',
      });
      return resultOf(callId, tool, 'ormuz', { status: 'sealed', reason: sealed.message });
    } catch (err) {
      // Started meanwhile (or sealed by someone else): the call goes on as recorded.
      if (err instanceof RemoteError) return stillRunning(callId, tool, status, waited);
      throw err;
    }
  }

  /**
   * Reads the call's status until it settles or `callWaitMs` passes, telling each new status as progress: again as
   * soon as an append to the call is heard, and at the latest every `callPollMs`.
   */
  private async await(
    who: SessionPrincipal,
    asked: CallAsked,
    callId: string,
    tool: string,
    source: string,
    reply: SubmitCallReplyV1,
  ): Promise<McpCallResult> {
    const watch = this.appends.watch(who.tenant, callId);
    try {
      const started = Date.now();
      let last = reply.status;
      let step = 0;
      if (asked.onProgress) await asked.onProgress(step, last);
      for (;;) {
        const view: CallStatusReplyV1 = await this.policy.call('policy.status', who.agentId, {
          tenant: who.tenant,
          call_id: callId,
        });
        const status = view.status.status;
        // A task waits on through the owner's decision.
        if (SETTLED.has(status) && !(status === 'staged' && asked.taskWaitMs !== undefined)) {
          const report = reportOfStatus(view.status, reply.message);
          if (report) return resultOf(callId, tool, source, report, this.config.resultMaxBytes);
        }
        if (status !== last) {
          last = status;
          step += 1;
          if (asked.onProgress) await asked.onProgress(step, status);
        }
        const waited = Date.now() - started;
        if (asked.signal?.aborted) return this.cancelled(who, callId, tool, status, waited);
        const bound = asked.taskWaitMs ?? this.config.callWaitMs;
        if (waited >= bound) return stillRunning(callId, tool, status, waited);
        await watch.changed(Math.min(this.config.callPollMs, bound - waited), asked.signal);
      }
    } finally {
      watch.close();
    }
  }
}

function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
