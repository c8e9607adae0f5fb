import { Module, type DynamicModule } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { InfrastructureModule, type Infrastructure } from '@ormuz/service-kit';
import { EraseHandler } from './commands/erase.handler.js';
import { RebuildProjectionHandler } from './commands/rebuild-projection.handler.js';
import { GetRetentionHandler, SetRetentionHandler } from './commands/retention.handler.js';
import { RetentionSweeper } from './commands/retention-sweeper.js';
import { AUDIT_CONFIG, type AuditConfig } from './config.js';
import { ArchiveChainRepository } from './persistence/archive-chain.repository.js';
import { ArchiveEraser } from './persistence/archive-eraser.js';
import { AuditRepository } from './persistence/audit.repository.js';
import { RetentionRepository } from './persistence/retention.repository.js';
import { AuditProjections } from './projections/audit-projections.js';
import { ArchivedEventsHandler } from './queries/archived-events.handler.js';
import { CallRecordHandler } from './queries/call-record.handler.js';
import { ProjectionStatusHandler } from './queries/projection-status.handler.js';
import { VerifyChainHandler } from './queries/verify-chain.handler.js';
import { ExportEventsHandler } from './queries/export-events.handler.js';
import { ReplayEventsHandler } from './queries/replay-events.handler.js';
import { AuditController } from './transport/audit.controller.js';

/**
 * The audit service: archives every stream, keeps an audit row per tool call, and answers `audit.call`,
 * `audit.events`, `audit.replay`, `audit.export`, `audit.projections`, `audit.rebuild`, `audit.verify`, `audit.erase` and
 * `audit.retention.*` over NATS. Each tenant's archive is a hash chain (docs/archive-chain.md); retention rules are
 * applied periodically.
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
        ExportEventsHandler,
        ProjectionStatusHandler,
        RebuildProjectionHandler,
        ArchiveChainRepository,
        ArchiveEraser,
        RetentionRepository,
        RetentionSweeper,
        VerifyChainHandler,
        EraseHandler,
        SetRetentionHandler,
        GetRetentionHandler,
      ],
    };
  }
}
