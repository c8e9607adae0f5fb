import { Controller } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  assertValid,
  AUDIT_CALL_V1,
  AUDIT_EVENTS_V1,
  AUDIT_PROJECTIONS_V1,
  AUDIT_REBUILD_V1,
  type AuditCallRequestV1,
  type AuditEventsRequestV1,
  type AuditRebuildRequestV1,
} from '@ormuz/contracts';
import { RebuildProjectionCommand } from '../commands/rebuild-projection.handler.js';
import { ArchivedEventsQuery } from '../queries/archived-events.handler.js';
import { CallRecordQuery } from '../queries/call-record.handler.js';
import { ProjectionStatusQuery } from '../queries/projection-status.handler.js';

/** NATS commands of audit: decode, validate against the wire schema, dispatch. Errors map in NatsRpcServer. */
@Controller()
export class AuditController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @MessagePattern('call')
  call(@Payload() body: unknown) {
    return this.queries.execute(new CallRecordQuery(assertValid<AuditCallRequestV1>(AUDIT_CALL_V1, body)));
  }

  @MessagePattern('events')
  events(@Payload() body: unknown) {
    return this.queries.execute(new ArchivedEventsQuery(assertValid<AuditEventsRequestV1>(AUDIT_EVENTS_V1, body)));
  }

  @MessagePattern('projections')
  projections(@Payload() body: unknown) {
    assertValid(AUDIT_PROJECTIONS_V1, body);
    return this.queries.execute(new ProjectionStatusQuery());
  }

  @MessagePattern('rebuild')
  rebuild(@Payload() body: unknown) {
    return this.commands.execute(
      new RebuildProjectionCommand(assertValid<AuditRebuildRequestV1>(AUDIT_REBUILD_V1, body)),
    );
  }
}
