import { Controller } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import type { RpcRequestOf } from '@ormuz/contracts';
import { Rpc } from '@ormuz/service-kit';
import { EraseCommand } from '../commands/erase.handler.js';
import { RebuildProjectionCommand } from '../commands/rebuild-projection.handler.js';
import { GetRetentionQuery, SetRetentionCommand } from '../commands/retention.handler.js';
import { ArchivedEventsQuery } from '../queries/archived-events.handler.js';
import { CallRecordQuery } from '../queries/call-record.handler.js';
import { ProjectionStatusQuery } from '../queries/projection-status.handler.js';
import { VerifyChainQuery } from '../queries/verify-chain.handler.js';
import { ReplayEventsQuery } from '../queries/replay-events.handler.js';
import { ExportEventsQuery } from '../queries/export-events.handler.js';

/** NATS commands of audit: validated against the wire schema by @Rpc, dispatched. Errors map in NatsRpcServer. */
@Controller()
export class AuditController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Rpc('audit.call')
  call(request: RpcRequestOf<'audit.call'>) {
    return this.queries.execute(new CallRecordQuery(request));
  }

  @Rpc('audit.events')
  events(request: RpcRequestOf<'audit.events'>) {
    return this.queries.execute(new ArchivedEventsQuery(request));
  }

  @Rpc('audit.replay')
  replay(request: RpcRequestOf<'audit.replay'>) {
    return this.queries.execute(new ReplayEventsQuery(request));
  }

  @Rpc('audit.export')
  export(request: RpcRequestOf<'audit.export'>) {
    return this.queries.execute(new ExportEventsQuery(request));
  }

  @Rpc('audit.projections')
  projections() {
    return this.queries.execute(new ProjectionStatusQuery());
  }

  @Rpc('audit.rebuild')
  rebuild(request: RpcRequestOf<'audit.rebuild'>) {
    return this.commands.execute(new RebuildProjectionCommand(request));
  }

  @Rpc('audit.verify')
  verify(request: RpcRequestOf<'audit.verify'>) {
    return this.queries.execute(new VerifyChainQuery(request));
  }

  @Rpc('audit.erase')
  erase(request: RpcRequestOf<'audit.erase'>) {
    return this.commands.execute(new EraseCommand(request));
  }

  @Rpc('audit.retention.set')
  setRetention(request: RpcRequestOf<'audit.retention.set'>) {
    return this.commands.execute(new SetRetentionCommand(request));
  }

  @Rpc('audit.retention.get')
  retention(request: RpcRequestOf<'audit.retention.get'>) {
    return this.queries.execute(new GetRetentionQuery(request));
  }
}
