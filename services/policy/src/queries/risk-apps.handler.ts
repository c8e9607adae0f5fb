import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { TenantAppListsV1 } from '@ormuz/risk';
import type { TenantRequestV1 } from '@ormuz/contracts';
import { RiskAppsRepository } from '../persistence/risk-apps.repository.js';

export class RiskAppsQuery extends Query<TenantAppListsV1 & { tenant: string }> {
  constructor(readonly request: TenantRequestV1) {
    super();
  }
}

/** A tenant's finance app lists as stored (both empty when it set none). */
@QueryHandler(RiskAppsQuery)
export class RiskAppsHandler implements IQueryHandler<RiskAppsQuery> {
  constructor(private readonly apps: RiskAppsRepository) {}

  async execute({ request }: RiskAppsQuery): Promise<TenantAppListsV1 & { tenant: string }> {
    return { tenant: request.tenant, ...(await this.apps.read(request.tenant)) };
  }
}
