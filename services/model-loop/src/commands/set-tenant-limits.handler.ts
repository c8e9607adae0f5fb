import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { SetTenantLimitsRequestV1, TenantLimitsV1 } from '@ormuz/contracts';
import { TenantLimitsRepository } from '../persistence/tenant-limits.repository.js';

export class SetTenantLimitsCommand extends Command<TenantLimitsV1> {
  constructor(
    readonly request: SetTenantLimitsRequestV1,
    /** The subject of the caller's credential, recorded as who set them. */
    readonly by: string,
  ) {
    super();
  }
}

/** Changes a tenant's own daily limits; the next claim of each of its conversations is decided against them. */
@CommandHandler(SetTenantLimitsCommand)
export class SetTenantLimitsHandler implements ICommandHandler<SetTenantLimitsCommand> {
  constructor(private readonly limits: TenantLimitsRepository) {}

  execute({ request: { tenant, ...change }, by }: SetTenantLimitsCommand): Promise<TenantLimitsV1> {
    return this.limits.change(tenant, change, by);
  }
}
