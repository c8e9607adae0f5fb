import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { tenantAppListProblems } from '@ormuz/risk';
import type { RiskAppsV1, SetRiskAppsRequestV1 } from '@ormuz/contracts';
import { RiskAppsError } from '../domain/errors.js';
import { RiskAppsRepository } from '../persistence/risk-apps.repository.js';

export class SetRiskAppsCommand extends Command<RiskAppsV1> {
  constructor(readonly request: SetRiskAppsRequestV1) {
    super();
  }
}

/** Replaces a tenant's finance / not-finance app lists; bad lists are refused whole, with the fix, storing nothing. */
@CommandHandler(SetRiskAppsCommand)
export class SetRiskAppsHandler implements ICommandHandler<SetRiskAppsCommand> {
  constructor(private readonly apps: RiskAppsRepository) {}

  async execute({ request }: SetRiskAppsCommand): Promise<RiskAppsV1> {
    const lists = { finance: request.finance, not_finance: request.not_finance };
    const problems = tenantAppListProblems(lists);
    if (problems.length > 0) throw new RiskAppsError(problems.join(' '));
    return { tenant: request.tenant, ...(await this.apps.save(request.tenant, lists)) };
  }
}
