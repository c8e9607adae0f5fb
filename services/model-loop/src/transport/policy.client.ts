import { Inject, Injectable } from '@nestjs/common';
import { serviceIdentity } from '@ormuz/auth';
import type {
  CallStatusReplyV1,
  CallStatusRequestV1,
  IdentifiedCallV1,
  IdentifyCallsRequestV1,
  OfferedToolV1,
  RpcName,
  RpcReplyOf,
  RpcRequestOf,
  SearchToolsRequestV1,
  SubmitCallReplyV1,
  SubmitCallRequestV1,
} from '@ormuz/contracts';
import {
  callRpc,
  INFRA,
  isTransientRemoteError,
  RemoteError,
  submitUnansweredHint,
  type Infrastructure,
  type UnansweredHint,
} from '@ormuz/service-kit';
import { MODEL_LOOP_CONFIG, type ModelLoopConfig } from '../config.js';
import type { SearchHit } from '../domain/core-tools.js';

/** What came of handing one request to policy. */
export type SubmitOutcome =
  | { readonly kind: 'decided'; readonly reply: SubmitCallReplyV1 }
  /** Policy answered that the request itself cannot be accepted (malformed, conflicting, too large). */
  | { readonly kind: 'rejected'; readonly code: string; readonly message: string };

/** Most agents whose offered tools are kept at once; the oldest entry makes room. */
const MAX_CACHED_AGENTS = 10_000;

/**
 * Step 3 of the loop and the policy reads model-loop needs, over NATS (`<ns>.cmd.policy.<name>`): submit every tool
 * request to the gate; read an agent's offered tools (briefly cached per tenant and agent) and search them; read a
 * call's status from the log (which never acts).
 */
@Injectable()
export class PolicyClient {
  private readonly offered = new Map<
    string,
    { readonly at: number; readonly tools: Promise<readonly OfferedToolV1[]> }
  >();

  constructor(
    @Inject(INFRA) private readonly infra: Infrastructure,
    @Inject(MODEL_LOOP_CONFIG) private readonly config: ModelLoopConfig,
  ) {}

  /**
   * The ids policy gives the calls from these origins and the tool names it records them under, in the order asked.
   * Records nothing. Throws what `callService` throws.
   */
  async identify(request: IdentifyCallsRequestV1): Promise<readonly IdentifiedCallV1[]> {
    if (request.calls.length === 0) return [];
    return (await this.call('policy.identify', request)).calls;
  }

  /**
   * Submits one request, whose id `callId` policy gave it (see {@link identify}). A re-submit of a recorded call is
   * a duplicate that observes the original. Throws ServiceUnavailableError or a transient RemoteError, which the
   * caller retries; their message says that the call may have been recorded and how to find out.
   */
  async submit(request: SubmitCallRequestV1, callId?: string): Promise<SubmitOutcome> {
    try {
      // A lost answer leaves the call possibly recorded: the error says so, and the step's retry (same origin, so
      // the same call id) observes the original rather than running anything twice.
      const reply = await this.call('policy.submit', request, submitUnansweredHint(request, callId));
      return { kind: 'decided', reply };
    } catch (err) {
      if (!isTransientRemoteError(err)) {
        const remote = err as RemoteError;
        return { kind: 'rejected', code: remote.code, message: remote.message };
      }
      throw err;
    }
  }

  /**
   * The tools `agentId` of `tenant` is offered (grant ∩ catalog, model-facing schemas), reused for
   * `toolsCacheMs`. The key holds both tenant and agent, so one tenant's answer never serves another. A failed
   * answer is not kept. Throws what `callRpc` throws.
   */
  tools(tenant: string, agentId: string): Promise<readonly OfferedToolV1[]> {
    const key = JSON.stringify([tenant, agentId]);
    const now = Date.now();
    const hit = this.offered.get(key);
    if (hit && now - hit.at < this.config.toolsCacheMs) return hit.tools;
    const tools = this.call('policy.tools', { tenant, agent_id: agentId }).then((r) => r.tools);
    if (this.config.toolsCacheMs > 0) {
      this.offered.delete(key);
      if (this.offered.size >= MAX_CACHED_AGENTS) this.offered.delete(this.offered.keys().next().value!);
      this.offered.set(key, { at: now, tools });
      tools.catch(() => {
        if (this.offered.get(key)?.tools === tools) this.offered.delete(key);
      });
    }
    return tools;
  }

  /** Searches the tools `agent_id` is offered (what `ormuz.search_tools` runs). */
  async searchTools(request: SearchToolsRequestV1): Promise<readonly SearchHit[]> {
    return (await this.call('policy.tools.search', request)).hits;
  }

  /** A call's status (and events, with `timeline`) from the log; nothing is sent to any executor. */
  status(request: CallStatusRequestV1): Promise<CallStatusReplyV1> {
    return this.call('policy.status', request);
  }

  private call<N extends RpcName>(
    name: N,
    body: NoInfer<RpcRequestOf<N>>,
    ifUnanswered?: UnansweredHint,
  ): Promise<NoInfer<RpcReplyOf<N>>> {
    // Model-loop acts within the request's tenant, for its agent, on the internal subject only services may use.
    const { tenant, agent_id } = body as { readonly tenant: string; readonly agent_id?: string };
    return callRpc(this.infra.nc, this.config.namespace, name, body, {
      timeoutMs: this.config.policyTimeoutMs,
      ifUnanswered,
      credential: { service: serviceIdentity('model-loop', tenant, agent_id) },
    });
  }
}
