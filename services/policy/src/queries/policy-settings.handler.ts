import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { PolicySettingsV1, TenantRequestV1 } from '@ormuz/contracts';
import { TenantSettingsRepository } from '../persistence/tenant-settings.repository.js';

export class PolicySettingsQuery extends Query<PolicySettingsV1> {
  constructor(readonly request: TenantRequestV1) {
    super();
  }
}

/** A tenant's policy settings as stored (the defaults when it set none). */
@QueryHandler(PolicySettingsQuery)
export class PolicySettingsHandler implements IQueryHandler<PolicySettingsQuery> {
  constructor(private readonly settings: TenantSettingsRepository) {}

  async execute({ request }: PolicySettingsQuery): Promise<PolicySettingsV1> {
    return { tenant: request.tenant, ...(await this.settings.read(request.tenant)) };
  }
}
