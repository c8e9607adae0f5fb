import { Command, CommandHandler, Query, QueryHandler, type ICommandHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { AuditRetentionGetRequestV1, AuditRetentionSetRequestV1, AuditRetentionV1 } from '@ormuz/contracts';
import { RetentionRepository, type RetentionRule } from '../persistence/retention.repository.js';
import { RetentionSweeper } from './retention-sweeper.js';

export class SetRetentionCommand extends Command<AuditRetentionV1> {
  constructor(readonly request: AuditRetentionSetRequestV1) {
    super();
  }
}

export class GetRetentionQuery extends Query<AuditRetentionV1> {
  constructor(readonly request: AuditRetentionGetRequestV1) {
    super();
  }
}

const toWire = (tenant: string, rule: RetentionRule | undefined): AuditRetentionV1 => ({
  tenant,
  payloads_days: rule?.payloads_days ?? null,
  results_days: rule?.results_days ?? null,
  updated_at: rule ? rule.updated_at.toISOString() : null,
});

/** Sets a tenant's retention and applies it at once (what it makes overdue is erased before the reply). */
@CommandHandler(SetRetentionCommand)
export class SetRetentionHandler implements ICommandHandler<SetRetentionCommand> {
  constructor(
    private readonly rules: RetentionRepository,
    private readonly sweeper: RetentionSweeper,
  ) {}

  async execute({ request }: SetRetentionCommand): Promise<AuditRetentionV1> {
    const { tenant, ...change } = request;
    const rule = await this.rules.upsert(tenant, change);
    await this.sweeper.apply(rule);
    return toWire(tenant, rule);
  }
}

/** A tenant's retention (nulls when never set: kept forever). */
@QueryHandler(GetRetentionQuery)
export class GetRetentionHandler implements IQueryHandler<GetRetentionQuery> {
  constructor(private readonly rules: RetentionRepository) {}

  async execute({ request }: GetRetentionQuery): Promise<AuditRetentionV1> {
    return toWire(request.tenant, await this.rules.find(request.tenant));
  }
}
