import { Controller } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  assertValid,
  POLICY_AGENT_V1,
  POLICY_IDENTIFY_V1,
  POLICY_SEARCH_TOOLS_V1,
  POLICY_SET_GRANT_V1,
  POLICY_SEAL_V1,
  POLICY_STATUS_V1,
  POLICY_SUBMIT_V1,
  POLICY_SET_RISK_APPS_V1,
  POLICY_TENANT_V1,
  type SetRiskAppsRequestV1,
  type TenantRequestV1,
  type AgentRequestV1,
  type CallStatusRequestV1,
  type IdentifyCallsRequestV1,
  type SearchToolsRequestV1,
  type SetGrantRequestV1,
  type SealCallRequestV1,
  type SubmitCallRequestV1,
} from '@ormuz/contracts';
import { SealCallCommand } from '../commands/seal-call.handler.js';
import { SubmitCallCommand } from '../commands/submit-call.handler.js';
import { SetGrantCommand } from '../commands/set-grant.handler.js';
import { SetRiskAppsCommand } from '../commands/set-risk-apps.handler.js';
import { RiskAppsQuery } from '../queries/risk-apps.handler.js';
import { CallStatusQuery } from '../queries/call-status.handler.js';
import { IdentifyCallsQuery } from '../queries/identify-calls.handler.js';
import { OfferedToolsQuery, SearchToolsQuery } from '../queries/offered-tools.handler.js';

/** NATS commands of policy: decode, validate against the wire schema, dispatch. Errors map in NatsRpcServer. */
@Controller()
export class PolicyController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @MessagePattern('submit')
  submit(@Payload() body: unknown) {
    return this.commands.execute(new SubmitCallCommand(assertValid<SubmitCallRequestV1>(POLICY_SUBMIT_V1, body)));
  }

  /** The ids (and recorded names) calls from these origins get, before they are submitted; records nothing. */
  @MessagePattern('identify')
  identify(@Payload() body: unknown) {
    return this.queries.execute(new IdentifyCallsQuery(assertValid<IdentifyCallsRequestV1>(POLICY_IDENTIFY_V1, body)));
  }

  @MessagePattern('status')
  status(@Payload() body: unknown) {
    return this.queries.execute(new CallStatusQuery(assertValid<CallStatusRequestV1>(POLICY_STATUS_V1, body)));
  }

  @MessagePattern('seal')
  seal(@Payload() body: unknown) {
    return this.commands.execute(new SealCallCommand(assertValid<SealCallRequestV1>(POLICY_SEAL_V1, body)));
  }

  @MessagePattern('grants.set')
  setGrant(@Payload() body: unknown) {
    return this.commands.execute(new SetGrantCommand(assertValid<SetGrantRequestV1>(POLICY_SET_GRANT_V1, body)));
  }

  @MessagePattern('grants.get')
  async getGrant(@Payload() body: unknown) {
    return (await this.queries.execute(new OfferedToolsQuery(assertValid<AgentRequestV1>(POLICY_AGENT_V1, body)))).grant;
  }

  /** The tools an agent is offered (grant ∩ catalog), as models see them. */
  @MessagePattern('tools')
  async tools(@Payload() body: unknown) {
    return { tools: (await this.queries.execute(new OfferedToolsQuery(assertValid<AgentRequestV1>(POLICY_AGENT_V1, body)))).tools };
  }

  @MessagePattern('tools.search')
  searchTools(@Payload() body: unknown) {
    return this.queries.execute(new SearchToolsQuery(assertValid<SearchToolsRequestV1>(POLICY_SEARCH_TOOLS_V1, body)));
  }

  /** A tenant's finance / not-finance app lists, which the risk classifier applies to its screen actions. */
  @MessagePattern('risk.apps.set')
  setRiskApps(@Payload() body: unknown) {
    return this.commands.execute(
      new SetRiskAppsCommand(assertValid<SetRiskAppsRequestV1>(POLICY_SET_RISK_APPS_V1, body)),
    );
  }

  @MessagePattern('risk.apps.get')
  riskApps(@Payload() body: unknown) {
    return this.queries.execute(new RiskAppsQuery(assertValid<TenantRequestV1>(POLICY_TENANT_V1, body)));
  }
}
