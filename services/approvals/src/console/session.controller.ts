import { Controller, Get, UseGuards } from '@nestjs/common';
import { UnauthenticatedError, type Identity } from '@ormuz/auth';
import { BearerAuthGuard, Caller } from '@ormuz/service-kit';

/**
 * `GET /v1/whoami`: who the presented credential says the caller is, as this service verified it. The console signs
 * in with it: a pasted token is checked here before it is kept, and the page learns the tenant it acts in (an
 * identity provider may carry it in a claim the page cannot know the name of).
 */
@Controller('v1/whoami')
@UseGuards(BearerAuthGuard)
export class SessionController {
  @Get()
  whoami(@Caller() caller: Identity | undefined) {
    if (!caller) throw new UnauthenticatedError('Present `Authorization: Bearer <token>` to learn who it names.');
    return {
      kind: caller.kind,
      subject: caller.subject,
      tenant: caller.tenant,
      roles: caller.kind === 'person' ? caller.roles : [],
      agents: caller.kind === 'person' ? (caller.agents ?? null) : caller.kind === 'agent' ? [caller.agent_id] : null,
    };
  }
}
