import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import {
  AUDIT_EVENTS_MAX_REPLY_BYTES,
  AUDIT_REPLAY_DEFAULT_LIMIT,
  type AuditExportRequestV1,
  type AuditReplayReplyV1,
  type AuditReplayRequestV1,
  type StreamPositionV1,
} from '@ormuz/contracts';
import { streamName } from '@ormuz/event-log';
import { JsonText } from '@ormuz/service-kit';
import { AUDIT_CONFIG, type AuditConfig } from '../config.js';
import { InvalidAuditQueryError } from '../domain/errors.js';
import { AuditRepository, type ReplayFilter } from '../persistence/audit.repository.js';

export class ReplayEventsQuery extends Query<AuditReplayReplyV1> {
  constructor(readonly request: AuditReplayRequestV1) {
    super();
  }
}

/** The archive's filter for a replay or export request, checked: contradictory bounds are refused with the fix. */
export function replayFilterOf(
  r: AuditReplayRequestV1 | AuditExportRequestV1,
  config: AuditConfig,
  limit: number,
): ReplayFilter {
  const fromTime = r.from_time === undefined ? undefined : new Date(r.from_time);
  const toTime = r.to_time === undefined ? undefined : new Date(r.to_time);
  if (fromTime && toTime && fromTime > toTime) {
    throw new InvalidAuditQueryError(`from_time ${r.from_time} is after to_time ${r.to_time}: swap them.`);
  }
  if (r.after && r.to_seq !== undefined && r.after.seq > r.to_seq) {
    throw new InvalidAuditQueryError(`after.seq ${r.after.seq} is beyond to_seq ${r.to_seq}: nothing can match.`);
  }
  return {
    tenant: r.tenant,
    stream: streamName(config.namespace, r.context),
    after: r.after ?? { seq: 0, idx: 0 },
    toSeq: r.to_seq,
    fromTime,
    toTime,
    subject: r.subject,
    agentId: r.agent_id,
    deviceId: r.device_id,
    types: r.types,
    limit,
  };
}

/**
 * One page of `ormuz replay`: the tenant's archived events of one context that match every filter, in stream order
 * after the cursor. The filters run in SQL on the archive's indexes and the cursor is a keyset (seq, idx), so a page
 * may end inside a message and the next one starts right after it. The page ends at `limit` or before the reply would
 * exceed {@link AUDIT_EVENTS_MAX_REPLY_BYTES}; one event is always returned, whatever its size. Postgres writes each
 * event's JSON and sizes the page, and only the rows the page holds (and the one that ends it) come back, into the
 * reply as text. Postgres writes JSON for every row up to the limit, so a caller does well to ask for about what
 * fits. (`ormuz replay` exports through `audit.export`, which streams instead.)
 */
@QueryHandler(ReplayEventsQuery)
export class ReplayEventsHandler implements IQueryHandler<ReplayEventsQuery> {
  constructor(
    private readonly repo: AuditRepository,
    @Inject(AUDIT_CONFIG) private readonly config: AuditConfig,
  ) {}

  async execute({ request: r }: ReplayEventsQuery): Promise<AuditReplayReplyV1> {
    const limit = r.limit ?? AUDIT_REPLAY_DEFAULT_LIMIT;
    // One row more than the page tells whether another page exists.
    const filter = replayFilterOf(r, this.config, limit + 1);
    const [rows, highSeq] = await Promise.all([
      this.repo.replayPage(filter, AUDIT_EVENTS_MAX_REPLY_BYTES),
      this.repo.highSeq(r.tenant, filter.stream, r.to_seq),
    ]);
    // Each event's JSON as the archive wrote it goes into the reply as it is (JsonText): nothing is parsed here.
    const items: string[] = [];
    let last: StreamPositionV1 | undefined;
    for (const row of rows.slice(0, limit)) {
      if (items.length > 0 && row.bytes > AUDIT_EVENTS_MAX_REPLY_BYTES) break;
      items.push(`{"seq":${row.seq},"idx":${row.idx},"event":${row.json}}`);
      last = { seq: row.seq, idx: row.idx };
    }
    const next = items.length < rows.length && last ? last : null;
    return JsonText.of<AuditReplayReplyV1>(
      `{"events":[${items.join(',')}],"next":${JSON.stringify(next)},"high_seq":${highSeq}}`,
    );
  }
}
