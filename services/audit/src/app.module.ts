import { Module, type DynamicModule } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { InfrastructureModule, type Infrastructure } from '@ormuz/service-kit';
import { RebuildProjectionHandler } from './commands/rebuild-projection.handler.js';
import { AUDIT_CONFIG, type AuditConfig } from './config.js';
import { AuditRepository } from './persistence/audit.repository.js';
import { AuditProjections } from './projections/audit-projections.js';
import { ArchivedEventsHandler } from './queries/archived-events.handler.js';
import { CallRecordHandler } from './queries/call-record.handler.js';
import { ProjectionStatusHandler } from './queries/projection-status.handler.js';
import { ReplayEventsHandler } from './queries/replay-events.handler.js';
import { AuditController } from './transport/audit.controller.js';

/**
 * The audit service: archives every stream, keeps an audit row per tool call, and answers `audit.call`,
 * `audit.events`, `audit.replay`, `audit.projections` and `audit.rebuild` over NATS.
 */
@Module({})
export class AuditModule {
  static with(infra: Infrastructure, config: AuditConfig): DynamicModule {
    return {
      module: AuditModule,
      imports: [InfrastructureModule.forRoot(infra), CqrsModule.forRoot()],
      controllers: [AuditController],
      providers: [
        { provide: AUDIT_CONFIG, useValue: config },
        AuditRepository,
        AuditProjections,
        CallRecordHandler,
        ArchivedEventsHandler,
        ReplayEventsHandler,
        ProjectionStatusHandler,
        RebuildProjectionHandler,
      ],
    };
  }
}
