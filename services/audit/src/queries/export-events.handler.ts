import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import {
  AUDIT_EXPORT_DEFAULT_LIMIT,
  AUDIT_EXPORT_MAX_BYTES,
  AUDIT_EXPORT_PART_BYTES,
  EXPORT_COUNT_HEADER,
  EXPORT_HIGH_SEQ_HEADER,
  EXPORT_LAST_HEADER,
  type AuditExportReplyV1,
  type AuditExportRequestV1,
  type StreamPositionV1,
} from '@ormuz/contracts';
import { StreamedReply, type ReplyPart } from '@ormuz/service-kit';
import { AUDIT_CONFIG, type AuditConfig } from '../config.js';
import { AuditRepository, type ReplayFilter } from '../persistence/audit.repository.js';
import { replayFilterOf } from './replay-events.handler.js';

export class ExportEventsQuery extends Query<AuditExportReplyV1> {
  constructor(readonly request: AuditExportRequestV1) {
    super();
  }
}

/**
 * `ormuz replay`'s export: the events `audit.replay` would page through, streamed as NDJSON in parts of up to
 * {@link AUDIT_EXPORT_PART_BYTES}, up to `limit` events or {@link AUDIT_EXPORT_MAX_BYTES} a request. One query reads them in stream order, a batch of rows at a time, and Postgres writes
 * each line (a replay row or a CloudEvent), so the bytes pass through this service as they are: no event is parsed
 * or built here, and one batch and one part are all it holds whatever the length of the export. The bounds are
 * checked before the first part goes.
 */
@QueryHandler(ExportEventsQuery)
export class ExportEventsHandler implements IQueryHandler<ExportEventsQuery> {
  constructor(
    private readonly repo: AuditRepository,
    @Inject(AUDIT_CONFIG) private readonly config: AuditConfig,
  ) {}

  async execute({ request: r }: ExportEventsQuery): Promise<AuditExportReplyV1> {
    const limit = r.limit ?? AUDIT_EXPORT_DEFAULT_LIMIT;
    // One row more than asked for tells whether more follow.
    const filter = replayFilterOf(r, this.config, limit + 1);
    const highSeq = await this.repo.highSeq(r.tenant, filter.stream, r.to_seq);
    return StreamedReply.of(this.parts(filter, r, limit, highSeq));
  }

  private async *parts(
    filter: ReplayFilter,
    r: AuditExportRequestV1,
    limit: number,
    highSeq: number,
  ): AsyncGenerator<ReplyPart, AuditExportReplyV1> {
    const lines = this.repo.exportLines(filter, r.as === 'cloudevents' ? 'cloudevents' : { rowsOf: r.context });
    let part: string[] = [];
    let bytes = 0;
    let count = 0;
    let last: StreamPositionV1 | undefined;
    const cut = (): ReplyPart => {
      const done = {
        body: Buffer.from(`${part.join('\n')}\n`, 'utf8'),
        headers: headersOf(part.length, last!, highSeq),
      };
      part = [];
      bytes = 0;
      return done;
    };
    let more = false;
    let sent = 0;
    for await (const row of lines) {
      const size = Buffer.byteLength(row.line, 'utf8') + 1;
      if (count === limit || (count > 0 && sent + bytes + size > AUDIT_EXPORT_MAX_BYTES)) {
        more = true;
        // Leaving the loop closes the query's cursor.
        break;
      }
      if (part.length > 0 && bytes + size > AUDIT_EXPORT_PART_BYTES) {
        sent += bytes;
        yield cut();
      }
      part.push(row.line);
      bytes += size;
      count++;
      last = { seq: row.seq, idx: row.idx };
    }
    if (part.length > 0) yield cut();
    // An event archived after `highSeq` was read may be in the parts: the range reaches at least that far.
    return { count, next: more ? last! : null, high_seq: Math.max(highSeq, last?.seq ?? 0) };
  }
}

function headersOf(count: number, last: StreamPositionV1, highSeq: number): Record<string, string> {
  return {
    [EXPORT_COUNT_HEADER]: String(count),
    [EXPORT_LAST_HEADER]: `${last.seq}:${last.idx}`,
    [EXPORT_HIGH_SEQ_HEADER]: String(highSeq),
  };
}
