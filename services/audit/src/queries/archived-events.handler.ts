import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import {
  AUDIT_EVENTS_DEFAULT_LIMIT,
  AUDIT_EVENTS_MAX_REPLY_BYTES,
  type ArchivedEventV1,
  type AuditEventsReplyV1,
  type AuditEventsRequestV1,
  type OrmuzEvent,
} from '@ormuz/contracts';
import { streamName } from '@ormuz/event-log';
import { AUDIT_CONFIG, type AuditConfig } from '../config.js';
import { InvalidAuditQueryError } from '../domain/errors.js';
import { AuditRepository, type ArchivedEventRow } from '../persistence/audit.repository.js';

export class ArchivedEventsQuery extends Query<AuditEventsReplyV1> {
  constructor(readonly request: AuditEventsRequestV1) {
    super();
  }
}

/**
 * One page of a tenant's archived events in stream order. The page ends at `limit` or before the reply would exceed
 * {@link AUDIT_EVENTS_MAX_REPLY_BYTES}; either way a partial page says so and names where the next one starts.
 */
@QueryHandler(ArchivedEventsQuery)
export class ArchivedEventsHandler implements IQueryHandler<ArchivedEventsQuery> {
  constructor(
    private readonly repo: AuditRepository,
    @Inject(AUDIT_CONFIG) private readonly config: AuditConfig,
  ) {}

  async execute({ request }: ArchivedEventsQuery): Promise<AuditEventsReplyV1> {
    const context = request.context ?? 'calls';
    if (request.call_id !== undefined && context !== 'calls') {
      throw new InvalidAuditQueryError(
        `call_id filters the calls stream, but context is ${context}. Drop call_id, or drop context to read the call's events.`,
      );
    }
    const limit = request.limit ?? AUDIT_EVENTS_DEFAULT_LIMIT;
    // One row more than the page tells whether another page exists.
    const rows = await this.repo.listEvents({
      tenant: request.tenant,
      stream: streamName(this.config.namespace, context),
      subject: request.call_id,
      fromSeq: request.from_seq ?? 1,
      limit: limit + 1,
    });
    const events: ArchivedEventV1[] = [];
    let bytes = 0;
    for (const row of rows.slice(0, limit)) {
      const item = { stream: row.stream, seq: row.seq, event: toCloudEvent(row) };
      bytes += Buffer.byteLength(JSON.stringify(item), 'utf8') + 1;
      if (events.length > 0 && bytes > AUDIT_EVENTS_MAX_REPLY_BYTES) break;
      events.push(item);
    }
    const next = rows[events.length];
    return { events, partial: next !== undefined, next_from_seq: next?.seq ?? null };
  }
}

/** The CloudEvent as it was appended; `specversion` and `datacontenttype` are constants of the envelope schema. */
export function toCloudEvent(row: ArchivedEventRow): OrmuzEvent {
  return {
    specversion: '1.0',
    id: row.id,
    source: row.source,
    type: row.type,
    subject: row.subject,
    time: row.time.toISOString(),
    datacontenttype: 'application/json',
    tenant: row.tenant,
    correlationid: row.correlation_id,
    causationid: row.causation_id,
    schemaversion: row.schema_version,
    data: row.data,
  };
}
