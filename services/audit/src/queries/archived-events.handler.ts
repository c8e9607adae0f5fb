import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import {
  AUDIT_EVENTS_DEFAULT_LIMIT,
  AUDIT_EVENTS_MAX_LIMIT,
  AUDIT_EVENTS_MAX_REPLY_BYTES,
  type ArchivedEventV1,
  type AuditEventsReplyV1,
  type AuditEventsRequestV1,
  type OrmuzEvent,
} from '@ormuz/contracts';
import { streamName } from '@ormuz/event-log';
import { AUDIT_CONFIG, type AuditConfig } from '../config.js';
import { InvalidAuditQueryError } from '../domain/errors.js';
import { AuditRepository, type ArchivedEventRow, type ReplayedEventRow } from '../persistence/audit.repository.js';

export class ArchivedEventsQuery extends Query<AuditEventsReplyV1> {
  constructor(readonly request: AuditEventsRequestV1) {
    super();
  }
}

/**
 * One page of a tenant's archived events in stream order. The page ends at `limit` or before the reply would exceed
 * {@link AUDIT_EVENTS_MAX_REPLY_BYTES}; either way a partial page says so and names where the next one starts.
 *
 * The cursor is a stream sequence, and the events of one decision share their message's sequence, so a page holds
 * whole messages: it ends before a message that would not fit, and a first message that alone exceeds a bound is
 * returned whole (a page always moves the cursor on).
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
    const filter = {
      tenant: request.tenant,
      stream: streamName(this.config.namespace, context),
      subject: request.call_id,
    };
    // One row more than the page tells whether another page exists.
    const rows = await this.repo.listEvents({ ...filter, fromSeq: request.from_seq ?? 1, limit: limit + 1 });
    const messages = bySequence(rows);
    // The message holding the row past the limit does not fit: the next page starts with it. (It may also be cut
    // short by the limit.)
    let next = rows.length > limit ? messages.pop()![0]!.seq : null;
    if (messages.length === 0 && next !== null) {
      // One message alone is more than the limit: it is returned whole.
      const seq = next;
      messages.push(await this.repo.listEvents({ ...filter, fromSeq: seq, toSeq: seq, limit: AUDIT_EVENTS_MAX_LIMIT }));
      next = (await this.repo.listEvents({ ...filter, fromSeq: seq + 1, limit: 1 }))[0]?.seq ?? null;
    }
    const events: ArchivedEventV1[] = [];
    let bytes = 0;
    for (const message of messages) {
      const items = message.map((row) => ({ stream: row.stream, seq: row.seq, event: toCloudEvent(row) }));
      const size = items.reduce((n, item) => n + Buffer.byteLength(JSON.stringify(item), 'utf8') + 1, 0);
      if (events.length > 0 && bytes + size > AUDIT_EVENTS_MAX_REPLY_BYTES) {
        next = message[0]!.seq;
        break;
      }
      events.push(...items);
      bytes += size;
    }
    return { events, partial: next !== null, next_from_seq: next };
  }
}

/** Rows in stream order, grouped by message (the events of one message share its sequence). */
function bySequence(rows: readonly ArchivedEventRow[]): ArchivedEventRow[][] {
  const out: ArchivedEventRow[][] = [];
  for (const row of rows) {
    const last = out.at(-1);
    if (last && last[0]!.seq === row.seq) last.push(row);
    else out.push([row]);
  }
  return out;
}

/** The CloudEvent as it was appended; `specversion` and `datacontenttype` are constants of the envelope schema. */
export function toCloudEvent(row: ReplayedEventRow): OrmuzEvent {
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
