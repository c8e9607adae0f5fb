import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { PolicySettingsV1, SetPolicySettingsRequestV1 } from '@ormuz/contracts';
import { TenantSettingsRepository } from '../persistence/tenant-settings.repository.js';

export class SetPolicySettingsCommand extends Command<PolicySettingsV1> {
  constructor(readonly request: SetPolicySettingsRequestV1) {
    super();
  }
}

/** Replaces a tenant's policy settings (the schema has checked the rule is one policy knows). */
@CommandHandler(SetPolicySettingsCommand)
export class SetPolicySettingsHandler implements ICommandHandler<SetPolicySettingsCommand> {
  constructor(private readonly settings: TenantSettingsRepository) {}

  async execute({ request }: SetPolicySettingsCommand): Promise<PolicySettingsV1> {
    return {
      tenant: request.tenant,
      ...(await this.settings.save(request.tenant, { taint_rule: request.taint_rule })),
    };
  }
}
