import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { GrantError, grantProblems, pinGrant, ruleMatchesCatalog, type Catalog, type Grant } from '@ormuz/catalog';
import { grantNoticeSubject, type GrantChangedNoticeV1, type SetGrantRequestV1 } from '@ormuz/contracts';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';
import { CATALOG } from '../domain/catalog.provider.js';
import { GrantsRepository } from '../persistence/grants.repository.js';

export class SetGrantCommand extends Command<Grant> {
  constructor(readonly request: SetGrantRequestV1) {
    super();
  }
}

/**
 * Stores a grant pinned to the versions the catalog has now, so publishing a new (broader) version later never
 * changes what an agent may call without a new grant; then tells whoever listens (the MCP gateway's sessions) that
 * the agent's grant changed.
 */
@CommandHandler(SetGrantCommand)
export class SetGrantHandler implements ICommandHandler<SetGrantCommand> {
  constructor(
    private readonly grants: GrantsRepository,
    @Inject(CATALOG) private readonly catalog: Catalog,
    @Inject(INFRA) private readonly infra: Infrastructure,
  ) {}

  async execute({ request }: SetGrantCommand): Promise<Grant> {
    const grant: Grant = {
      tenant: request.tenant,
      agent_id: request.agent_id,
      allow: request.allow,
      deny: request.deny ?? [],
    };
    const problems = grantProblems(grant);
    if (problems.length > 0) throw new GrantError(problems.join(' '));
    const empty = grant.allow.filter((rule) => !ruleMatchesCatalog(this.catalog, rule));
    if (empty.length > 0) {
      const extensions = [...new Set(this.catalog.toolNames().map((n) => n.split('.')[0]))].join(', ');
      throw new GrantError(
        `The allow rule(s) ${empty.map((r) => JSON.stringify(r)).join(', ')} match no tool in the catalog. ` +
          `Installed extensions: ${extensions}; check the spelling or install the extension first.`,
      );
    }
    const pinned = pinGrant(this.catalog, grant);
    await this.grants.save(pinned);
    const notice: GrantChangedNoticeV1 = { agent_id: pinned.agent_id };
    this.infra.nc.publish(grantNoticeSubject(this.infra.config.namespace, pinned.tenant), JSON.stringify(notice));
    return pinned;
  }
}
