import { Controller, Get, Headers, Inject, Param, UseGuards } from '@nestjs/common';
import type { RpcName, RpcRequestOf } from '@ormuz/contracts';
import { BearerAuthGuard, callRpc, INFRA, type Infrastructure } from '@ormuz/service-kit';
import { bearerOf } from './bearer.js';

/**
 * What the console shows about one call, from the services that own it: its status and whole event timeline
 * (`policy.status` with `timeline`), its audit row (`audit.call`) and the conversation it came from
 * (`model-loop.get`). Each route forwards the caller's own bearer credential over NATS, so the answering service
 * checks who may read what itself, exactly as for a CLI caller; this service adds no access of its own. Remote errors
 * keep their codes, and so their statuses (404 for an unknown call, 403, 503 when the service is not running).
 */
@Controller('v1/tenants/:tenant')
@UseGuards(BearerAuthGuard)
export class CallDetailController {
  constructor(@Inject(INFRA) private readonly infra: Infrastructure) {}

  @Get('calls/:callId/timeline')
  timeline(
    @Param('tenant') tenant: string,
    @Param('callId') callId: string,
    @Headers('authorization') authorization: string | undefined,
  ) {
    return this.forward('policy.status', { tenant, call_id: callId, timeline: true }, authorization);
  }

  @Get('calls/:callId/audit')
  audit(
    @Param('tenant') tenant: string,
    @Param('callId') callId: string,
    @Headers('authorization') authorization: string | undefined,
  ) {
    return this.forward('audit.call', { tenant, call_id: callId }, authorization);
  }

  @Get('conversations/:conversationId')
  conversation(
    @Param('tenant') tenant: string,
    @Param('conversationId') conversationId: string,
    @Headers('authorization') authorization: string | undefined,
  ) {
    return this.forward('model-loop.get', { tenant, conversation_id: conversationId }, authorization);
  }

  private forward<N extends RpcName>(name: N, body: NoInfer<RpcRequestOf<N>>, authorization: string | undefined) {
    const bearer = bearerOf(authorization);
    return callRpc(this.infra.nc, this.infra.config.namespace, name, body, { credential: { bearer } });
  }
}
