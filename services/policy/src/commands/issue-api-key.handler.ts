import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { ApiKeyStore } from '@ormuz/auth';
import type { IssueApiKeyRequestV1, IssuedApiKeyV1 } from '@ormuz/contracts';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';

export class IssueApiKeyCommand extends Command<IssuedApiKeyV1> {
  constructor(readonly request: IssueApiKeyRequestV1) {
    super();
  }
}

/** A new API key for an agent, beside any it has; the answer is the only place the key appears. */
@CommandHandler(IssueApiKeyCommand)
export class IssueApiKeyHandler implements ICommandHandler<IssueApiKeyCommand> {
  constructor(
    private readonly keys: ApiKeyStore,
    @Inject(INFRA) private readonly infra: Infrastructure,
  ) {}

  async execute({ request }: IssueApiKeyCommand): Promise<IssuedApiKeyV1> {
    const issued = await this.keys.issue(request);
    this.infra.logger.info(
      { tenant: request.tenant, agent: request.agent_id, key: issued.key.key_id },
      'API key issued',
    );
    return issued;
  }
}
