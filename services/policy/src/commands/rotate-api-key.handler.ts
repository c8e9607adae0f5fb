import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { ApiKeyStore, DEFAULT_API_KEY_GRACE_SECONDS } from '@ormuz/auth';
import type { IssuedApiKeyV1, RotateApiKeyRequestV1 } from '@ormuz/contracts';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';

export class RotateApiKeyCommand extends Command<IssuedApiKeyV1> {
  constructor(readonly request: RotateApiKeyRequestV1) {
    super();
  }
}

/** A new API key for an agent; its other keys keep working until the grace period ends, so it can switch over. */
@CommandHandler(RotateApiKeyCommand)
export class RotateApiKeyHandler implements ICommandHandler<RotateApiKeyCommand> {
  constructor(
    private readonly keys: ApiKeyStore,
    @Inject(INFRA) private readonly infra: Infrastructure,
  ) {}

  async execute({ request }: RotateApiKeyCommand): Promise<IssuedApiKeyV1> {
    const issued = await this.keys.rotate(request);
    this.infra.logger.info(
      {
        tenant: request.tenant,
        agent: request.agent_id,
        key: issued.key.key_id,
        grace: request.grace_seconds ?? DEFAULT_API_KEY_GRACE_SECONDS,
      },
      'API keys rotated',
    );
    return issued;
  }
}
