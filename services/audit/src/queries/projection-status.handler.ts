import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { AuditProjectionsReplyV1 } from '@ormuz/contracts';
import { AuditRepository } from '../persistence/audit.repository.js';
import { AuditProjections } from '../projections/audit-projections.js';

export class ProjectionStatusQuery extends Query<AuditProjectionsReplyV1> {}

/** Where each projection stands against its stream, and how many messages it parked. */
@QueryHandler(ProjectionStatusQuery)
export class ProjectionStatusHandler implements IQueryHandler<ProjectionStatusQuery> {
  constructor(
    private readonly projections: AuditProjections,
    private readonly repo: AuditRepository,
  ) {}

  async execute(): Promise<AuditProjectionsReplyV1> {
    const parked = await this.repo.parkedCounts();
    const projections = await Promise.all(
      this.projections.list().map(async ({ name, projection, runner }) => {
        // Where the projection stands, from whichever replica runs it (this one, or the leader, via Postgres).
        const checkpoint = await runner.checkpoint();
        return {
          projection: name,
          stream: projection.stream,
          checkpoint,
          stream_last_seq: await this.projections.lastSeq(projection.stream),
          parked: parked.get(projection.name) ?? 0,
          rebuilding: this.projections.isRebuilding(name, checkpoint),
        };
      }),
    );
    return { projections };
  }
}
