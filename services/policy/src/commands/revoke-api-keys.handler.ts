import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { ApiKeyStore } from '@ormuz/auth';
import type { RevokeApiKeysRequestV1, RevokedApiKeysV1 } from '@ormuz/contracts';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';

export class RevokeApiKeysCommand extends Command<RevokedApiKeysV1> {
  constructor(readonly request: RevokeApiKeysRequestV1) {
    super();
  }
}

/** Revokes one API key of an agent, or all of them: the next request presenting one is refused. */
@CommandHandler(RevokeApiKeysCommand)
export class RevokeApiKeysHandler implements ICommandHandler<RevokeApiKeysCommand> {
  constructor(
    private readonly keys: ApiKeyStore,
    @Inject(INFRA) private readonly infra: Infrastructure,
  ) {}

  async execute({ request }: RevokeApiKeysCommand): Promise<RevokedApiKeysV1> {
    const result = await this.keys.revoke(request);
    this.infra.logger.info(
      { tenant: request.tenant, agent: request.agent_id, revoked: result.revoked },
      'API keys revoked',
    );
    return result;
  }
}
