import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { RiskAppsV1, TenantRequestV1 } from '@ormuz/contracts';
import { RiskAppsRepository } from '../persistence/risk-apps.repository.js';

export class RiskAppsQuery extends Query<RiskAppsV1> {
  constructor(readonly request: TenantRequestV1) {
    super();
  }
}

/** A tenant's finance app lists as stored (both empty when it set none). */
@QueryHandler(RiskAppsQuery)
export class RiskAppsHandler implements IQueryHandler<RiskAppsQuery> {
  constructor(private readonly apps: RiskAppsRepository) {}

  async execute({ request }: RiskAppsQuery): Promise<RiskAppsV1> {
    return { tenant: request.tenant, ...(await this.apps.read(request.tenant)) };
  }
}
