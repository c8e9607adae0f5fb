import { Inject, Injectable } from '@nestjs/common';
import { serviceIdentity } from '@ormuz/auth';
import type { RpcName, RpcReplyOf, RpcRequestOf } from '@ormuz/contracts';
import { callRpc, INFRA, type Infrastructure, type UnansweredHint } from '@ormuz/service-kit';
import { MCP_GATEWAY_CONFIG, type McpGatewayConfig } from '../config.js';

/**
 * The gateway's questions to policy, on the internal subject (`<ns>.int.policy.<name>`), as the service acting for
 * one agent of one tenant, exactly as model-loop asks them: what the agent is offered (`policy.tools`), the id of a
 * call (`policy.identify`), the gate (`policy.submit`), a call's status (`policy.status`), and sealing a call whose
 * request the client cancelled (`policy.seal`). The agent is the one behind the session's API key, never one a client
 * names.
 */
@Injectable()
export class PolicyClient {
  constructor(
    @Inject(INFRA) private readonly infra: Infrastructure,
    @Inject(MCP_GATEWAY_CONFIG) private readonly config: McpGatewayConfig,
  ) {}

  call<N extends 'policy.tools' | 'policy.identify' | 'policy.submit' | 'policy.status' | 'policy.seal'>(
    name: N,
    agentId: string,
    body: NoInfer<RpcRequestOf<N>>,
    ifUnanswered?: UnansweredHint,
  ): Promise<NoInfer<RpcReplyOf<N>>> {
    const { tenant } = body as { readonly tenant: string };
    return callRpc(this.infra.nc, this.config.namespace, name as RpcName & N, body, {
      timeoutMs: this.config.policyTimeoutMs,
      ifUnanswered,
      credential: { service: serviceIdentity('mcp-gateway', tenant, agentId) },
    });
  }
}
