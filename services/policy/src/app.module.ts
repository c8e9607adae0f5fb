import { Injectable, Module, type DynamicModule, Inject } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { ProjectionRunner } from '@ormuz/event-log';
import { INFRA, InfrastructureModule, ToolCalls, type Infrastructure } from '@ormuz/service-kit';
import { LeadingConsumers, LeadingConsumersHost } from '@ormuz/service-kit';
import { IssueApiKeyHandler } from './commands/issue-api-key.handler.js';
import { RevokeApiKeysHandler } from './commands/revoke-api-keys.handler.js';
import { RotateApiKeyHandler } from './commands/rotate-api-key.handler.js';
import { SealCallHandler } from './commands/seal-call.handler.js';
import { SetGrantHandler } from './commands/set-grant.handler.js';
import { SetRiskAppsHandler } from './commands/set-risk-apps.handler.js';
import { SetPolicySettingsHandler } from './commands/set-policy-settings.handler.js';
import { ApiKeysHandler } from './queries/api-keys.handler.js';
import { RiskAppsHandler } from './queries/risk-apps.handler.js';
import { PolicySettingsHandler } from './queries/policy-settings.handler.js';
import { apiKeyStoreProvider } from './persistence/api-keys.provider.js';
import { RiskAppsRepository } from './persistence/risk-apps.repository.js';
import { TenantSettingsRepository } from './persistence/tenant-settings.repository.js';
import { catalogProvider } from './domain/catalog.provider.js';
import { GrantsRepository } from './persistence/grants.repository.js';
import { OfferedToolsHandler, SearchToolsHandler } from './queries/offered-tools.handler.js';
import { SubmitCallHandler } from './commands/submit-call.handler.js';
import { POLICY_CONFIG, type PolicyConfig } from './config.js';
import { callStatusProjection } from './projections/call-status.projection.js';
import { deviceScreensProjection } from './projections/device-screens.projection.js';
import { DeviceScreensRepository } from './persistence/device-screens.repository.js';
import { CallStatusHandler } from './queries/call-status.handler.js';
import { IdentifyCallsHandler } from './queries/identify-calls.handler.js';
import { PolicyController } from './transport/policy.controller.js';
import { PolicyMetrics } from './metrics.js';

/** Runs policy's projections in the read-models replica that holds their lease (LeadingConsumers). */
@Injectable()
class PolicyProjections extends LeadingConsumersHost {
  protected readonly leading: LeadingConsumers;
  constructor(@Inject(INFRA) infra: Infrastructure) {
    super();
    const ns = infra.config.namespace;
    this.leading = new LeadingConsumers(infra, 'policy.read-models', [
      new ProjectionRunner(infra.js, infra.jsm, infra.db, callStatusProjection(ns), { logger: infra.logger }),
      new ProjectionRunner(infra.js, infra.jsm, infra.db, deviceScreensProjection(ns), { logger: infra.logger }),
    ]);
  }
}

@Module({})
export class PolicyModule {
  static with(infra: Infrastructure, config: PolicyConfig): DynamicModule {
    const commands = config.roles.has('commands');
    return {
      module: PolicyModule,
      imports: [InfrastructureModule.forRoot(infra), CqrsModule.forRoot()],
      controllers: commands ? [PolicyController] : [],
      providers: [
        { provide: POLICY_CONFIG, useValue: config },
        ...(commands
          ? [
              { provide: ToolCalls, useFactory: () => new ToolCalls(infra.store, config.namespace, '/ormuz/policy') },
              { provide: PolicyMetrics, useFactory: () => new PolicyMetrics(infra.metrics) },
              catalogProvider,
              GrantsRepository,
              RiskAppsRepository,
              TenantSettingsRepository,
              DeviceScreensRepository,
              apiKeyStoreProvider,
              SubmitCallHandler,
              SealCallHandler,
              SetGrantHandler,
              SetRiskAppsHandler,
              SetPolicySettingsHandler,
              IssueApiKeyHandler,
              RotateApiKeyHandler,
              RevokeApiKeysHandler,
              ApiKeysHandler,
              RiskAppsHandler,
              PolicySettingsHandler,
              CallStatusHandler,
              IdentifyCallsHandler,
              OfferedToolsHandler,
              SearchToolsHandler,
            ]
          : []),
        ...(config.roles.has('read-models') ? [PolicyProjections] : []),
      ],
    };
  }
}
