import { Controller } from '@nestjs/common';
import type { Identity } from '@ormuz/auth';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import type { RpcRequestOf } from '@ormuz/contracts';
import { Rpc } from '@ormuz/service-kit';
import { IssueApiKeyCommand } from '../commands/issue-api-key.handler.js';
import { RevokeApiKeysCommand } from '../commands/revoke-api-keys.handler.js';
import { RotateApiKeyCommand } from '../commands/rotate-api-key.handler.js';
import { SealCallCommand } from '../commands/seal-call.handler.js';
import { SubmitCallCommand } from '../commands/submit-call.handler.js';
import { SetGrantCommand } from '../commands/set-grant.handler.js';
import { SetRiskAppsCommand } from '../commands/set-risk-apps.handler.js';
import { SetPolicySettingsCommand } from '../commands/set-policy-settings.handler.js';
import { ApiKeysQuery } from '../queries/api-keys.handler.js';
import { RiskAppsQuery } from '../queries/risk-apps.handler.js';
import { PolicySettingsQuery } from '../queries/policy-settings.handler.js';
import { CallStatusQuery } from '../queries/call-status.handler.js';
import { IdentifyCallsQuery } from '../queries/identify-calls.handler.js';
import { OfferedToolsQuery, SearchToolsQuery } from '../queries/offered-tools.handler.js';

/** NATS commands of policy: validated against the wire schema by @Rpc, dispatched. Errors map in NatsRpcServer. */
@Controller()
export class PolicyController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Rpc('policy.submit')
  submit(request: RpcRequestOf<'policy.submit'>) {
    return this.commands.execute(new SubmitCallCommand(request));
  }

  /** The ids (and recorded names) calls from these origins get, before they are submitted; records nothing. */
  @Rpc('policy.identify')
  identify(request: RpcRequestOf<'policy.identify'>) {
    return this.queries.execute(new IdentifyCallsQuery(request));
  }

  @Rpc('policy.status')
  status(request: RpcRequestOf<'policy.status'>) {
    return this.queries.execute(new CallStatusQuery(request));
  }

  @Rpc('policy.seal')
  seal(request: RpcRequestOf<'policy.seal'>, caller: Identity) {
    return this.commands.execute(new SealCallCommand(request, caller.subject));
  }

  @Rpc('policy.grants.set')
  setGrant(request: RpcRequestOf<'policy.grants.set'>) {
    return this.commands.execute(new SetGrantCommand(request));
  }

  @Rpc('policy.grants.get')
  async getGrant(request: RpcRequestOf<'policy.grants.get'>) {
    return (await this.queries.execute(new OfferedToolsQuery(request))).grant;
  }

  /** The tools an agent is offered (grant ∩ catalog), as models see them. */
  @Rpc('policy.tools')
  async tools(request: RpcRequestOf<'policy.tools'>) {
    return { tools: (await this.queries.execute(new OfferedToolsQuery(request))).tools };
  }

  @Rpc('policy.tools.search')
  searchTools(request: RpcRequestOf<'policy.tools.search'>) {
    return this.queries.execute(new SearchToolsQuery(request));
  }

  /** A tenant's finance / not-finance app lists, which the risk classifier applies to its screen actions. */
  @Rpc('policy.risk.apps.set')
  setRiskApps(request: RpcRequestOf<'policy.risk.apps.set'>) {
    return this.commands.execute(new SetRiskAppsCommand(request));
  }

  @Rpc('policy.risk.apps.get')
  riskApps(request: RpcRequestOf<'policy.risk.apps.get'>) {
    return this.queries.execute(new RiskAppsQuery(request));
  }

  /** A tenant's policy settings: its taint rule. */
  @Rpc('policy.settings.set')
  setSettings(request: RpcRequestOf<'policy.settings.set'>) {
    return this.commands.execute(new SetPolicySettingsCommand(request));
  }

  @Rpc('policy.settings.get')
  settings(request: RpcRequestOf<'policy.settings.get'>) {
    return this.queries.execute(new PolicySettingsQuery(request));
  }

  /** Agents' API keys: a key is shown once, in the answer to issue or rotate; only its hash is kept. */
  @Rpc('policy.keys.issue')
  issueKey(request: RpcRequestOf<'policy.keys.issue'>) {
    return this.commands.execute(new IssueApiKeyCommand(request));
  }

  @Rpc('policy.keys.rotate')
  rotateKey(request: RpcRequestOf<'policy.keys.rotate'>) {
    return this.commands.execute(new RotateApiKeyCommand(request));
  }

  @Rpc('policy.keys.revoke')
  revokeKeys(request: RpcRequestOf<'policy.keys.revoke'>) {
    return this.commands.execute(new RevokeApiKeysCommand(request));
  }

  @Rpc('policy.keys.list')
  keys(request: RpcRequestOf<'policy.keys.list'>) {
    return this.queries.execute(new ApiKeysQuery(request));
  }
}
