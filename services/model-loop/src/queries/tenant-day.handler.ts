import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type {
  GetTenantLimitsRequestV1,
  GetTenantUsageRequestV1,
  TenantLimitsV1,
  TenantUsageV1,
} from '@ormuz/contracts';
import { TenantDayBudget } from '../commands/tenant-day-budget.js';
import { utcDay } from '../domain/tenant-day.js';
import { TenantLimitsRepository } from '../persistence/tenant-limits.repository.js';

export class GetTenantLimitsQuery extends Query<TenantLimitsV1> {
  constructor(readonly request: GetTenantLimitsRequestV1) {
    super();
  }
}

/** A tenant's daily limits: in force, its own, the defaults. */
@QueryHandler(GetTenantLimitsQuery)
export class GetTenantLimitsHandler implements IQueryHandler<GetTenantLimitsQuery> {
  constructor(private readonly limits: TenantLimitsRepository) {}

  execute({ request }: GetTenantLimitsQuery): Promise<TenantLimitsV1> {
    return this.limits.read(request.tenant);
  }
}

export class GetTenantUsageQuery extends Query<TenantUsageV1> {
  constructor(readonly request: GetTenantUsageRequestV1) {
    super();
  }
}

/** What a tenant used in one UTC day (today unless named), from the log. */
@QueryHandler(GetTenantUsageQuery)
export class GetTenantUsageHandler implements IQueryHandler<GetTenantUsageQuery> {
  constructor(private readonly budget: TenantDayBudget) {}

  execute({ request }: GetTenantUsageQuery): Promise<TenantUsageV1> {
    return this.budget.usage(request.tenant, request.day ?? utcDay(new Date()));
  }
}
