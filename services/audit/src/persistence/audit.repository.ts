import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely, type Selectable } from 'kysely';
import { REPLAY_ROW_OUTCOMES, type ContextName } from '@ormuz/contracts';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';
import type { AuditDB, CallRecordsTable, EventsTable } from './audit.tables.js';
import { AUDIT_SCHEMA } from './migrations.js';

export type CallRecordRow = Selectable<CallRecordsTable>;
export type ArchivedEventRow = Selectable<EventsTable>;
/** What a replay reads of an archived event: the event as it was appended, without the archive's chain columns. */
export type ReplayedEventRow = Pick<
  ArchivedEventRow,
  | 'stream'
  | 'seq'
  | 'idx'
  | 'id'
  | 'type'
  | 'tenant'
  | 'subject'
  | 'time'
  | 'source'
  | 'correlation_id'
  | 'causation_id'
  | 'schema_version'
  | 'data'
>;

export interface EventsFilter {
  readonly tenant: string;
  readonly stream: string;
  /** The aggregate id (CloudEvents `subject`), or every aggregate. */
  readonly subject?: string;
  readonly fromSeq: number;
  /** Last stream sequence to return (inclusive); unbounded when left out. */
  readonly toSeq?: number;
  readonly limit: number;
}

/** One event of a replay page: its place, its CloudEvent as JSON text, and the page's size up to it (bytes). */
export interface ReplayPageRow {
  readonly seq: number;
  readonly idx: number;
  readonly json: string;
  readonly bytes: number;
}

/** Rows an export reads from Postgres at a time. */
const EXPORT_BATCH_ROWS = 1000;

/** Bytes a replay item adds to a reply around its event's JSON: `{"seq":…,"idx":…,"event":…},`. */
const REPLAY_ITEM_OVERHEAD = 48;

/**
 * The archived row as the CloudEvent it was appended as, in JSON text: the SQL twin of `toCloudEvent`
 * (queries/archived-events.handler.ts), field for field and in its order; the time as `Date.toISOString` writes it.
 */
const cloudEventJson = sql<string>`'{"specversion":"1.0","id":' || to_json(id)::text
  || ',"source":' || to_json(source)::text
  || ',"type":' || to_json(type)::text
  || ',"subject":' || to_json(subject)::text
  || ',"time":"' || to_char(time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"'
  || ',"datacontenttype":"application/json","tenant":' || to_json(tenant)::text
  || ',"correlationid":' || to_json(correlation_id)::text
  || ',"causationid":' || to_json(causation_id)::text
  || ',"schemaversion":' || schema_version::text
  || ',"data":' || data::text || '}'`;

/** A string of an event's data (at `data->key->…`) as JSON text; SQL null when absent or not a string. */
function dataString(...path: string[]) {
  const value = sql.join([sql.ref('data'), ...path.map((key) => sql.lit(key))], sql.raw('->'));
  return sql<string | null>`case when jsonb_typeof(${value}) = 'string' then (${value})::text end`;
}

/**
 * The archived row as its replay row in JSON text: the SQL twin of `replayRowOf` (@ormuz/contracts), field for field
 * and in its order; `context` is the stream's.
 */
function replayRowJson(context: ContextName) {
  const inContext = (c: ContextName) => sql.lit(context === c);
  const name = sql`split_part(type, '.', -2)`;
  const outcomes = sql.join(REPLAY_ROW_OUTCOMES.map((o) => sql.lit(o)));
  return sql<string>`'{"seq":' || seq::text || ',"idx":' || idx::text || ',"context":' || ${sql.lit(JSON.stringify(context))}
  || ',"id":' || to_json(id)::text
  || ',"time":"' || to_char(time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"'
  || ',"type":' || to_json(type)::text
  || ',"tenant":' || to_json(tenant)::text
  || ',"subject":' || to_json(subject)::text
  || ',"call_id":' || coalesce(${dataString('call_id')}, case when ${inContext('calls')} then to_json(subject)::text end, 'null')
  || ',"agent_id":' || coalesce(${dataString('agent_id')}, 'null')
  || ',"device_id":' || coalesce(${dataString('device_id')}, ${dataString('target', 'device_id')},
    ${dataString('executor', 'device_id')}, case when ${inContext('devices')} then to_json(subject)::text end, 'null')
  || ',"tool":' || coalesce(${dataString('tool')}, 'null')
  || ',"risk":' || coalesce(${dataString('verdict', 'level')}, 'null')
  || ',"outcome":' || case when ${inContext('calls')} and ${name} in (${outcomes}) then to_json(${name})::text else 'null' end
  || ',"data":' || data::text || '}'`;
}

/** One line of an export: an event's place and its NDJSON line (without the newline). */
export interface ExportLineRow {
  readonly seq: number;
  readonly idx: number;
  readonly line: string;
}

/** What `audit.replay` asks of one stream: every field narrows, an absent one does not. */
export interface ReplayFilter {
  readonly tenant: string;
  readonly stream: string;
  /** Events after this place (exclusive). */
  readonly after: { readonly seq: number; readonly idx: number };
  readonly toSeq?: number;
  readonly fromTime?: Date;
  readonly toTime?: Date;
  readonly subject?: string;
  /** The events of the aggregates that name this agent (domain/event-parties.ts). */
  readonly agentId?: string;
  /** The events of the aggregates that name this device. */
  readonly deviceId?: string;
  readonly types?: readonly string[];
  readonly limit: number;
}

/** Reads of the audit schema. Every read is scoped to one tenant. */
@Injectable()
export class AuditRepository {
  private readonly db: Kysely<AuditDB>;

  constructor(@Inject(INFRA) infra: Infrastructure) {
    this.db = (infra.db as Kysely<AuditDB>).withSchema(AUDIT_SCHEMA);
  }

  findCallRecord(tenant: string, callId: string): Promise<CallRecordRow | undefined> {
    return this.db
      .selectFrom('call_records')
      .selectAll()
      .where('tenant', '=', tenant)
      .where('call_id', '=', callId)
      .executeTakeFirst();
  }

  /**
   * Up to `limit` archived events of the tenant in `stream` from `fromSeq` (inclusive), in stream order: by message
   * sequence, then by place in the message. The last message may be cut short by the limit.
   */
  listEvents(f: EventsFilter): Promise<ArchivedEventRow[]> {
    let q = this.db
      .selectFrom('events')
      .selectAll()
      .where('tenant', '=', f.tenant)
      .where('stream', '=', f.stream)
      .where('seq', '>=', f.fromSeq);
    if (f.toSeq !== undefined) q = q.where('seq', '<=', f.toSeq);
    if (f.subject !== undefined) q = q.where('subject', '=', f.subject);
    return q.orderBy('seq').orderBy('idx').limit(f.limit).execute();
  }

  /**
   * The page of archived events matching `f`, in stream order after `f.after`, as the JSON text of each CloudEvent
   * (written by Postgres, so a page passes through this service without being parsed or serialised again): at most
   * `f.limit` rows, and none after the first whose running size passes `maxBytes` (that one is read, so the caller
   * knows the page is cut short; when the first row alone passes it, the second is). One SQL query on the archive's
   * indexes, keyset-paged on (seq, idx), so a page costs the same at the start and the end of a long range.
   */
  replayPage(f: ReplayFilter, maxBytes: number): Promise<ReplayPageRow[]> {
    const matching = this.matching(f).select(cloudEventJson.as('json'));
    const sized = this.db
      .selectFrom(matching.as('page'))
      .select([
        'seq',
        'idx',
        'json',
        sql<string>`sum(octet_length(json) + ${REPLAY_ITEM_OVERHEAD}) over (order by seq, idx)`.as('bytes'),
        sql<number>`row_number() over (order by seq, idx)`.as('n'),
      ]);
    // The rows that start within `maxBytes`: those that fit and the first that does not; and the first two, for a
    // first row that alone is larger.
    return this.db
      .selectFrom(sized.as('sized'))
      .select(['seq', 'idx', 'json', 'bytes'])
      .where(sql<boolean>`(bytes - octet_length(json) - ${REPLAY_ITEM_OVERHEAD} <= ${maxBytes} or n <= 2)`)
      .orderBy('seq')
      .orderBy('idx')
      .execute()
      .then((rows) => rows.map((r) => ({ seq: Number(r.seq), idx: r.idx, json: r.json, bytes: Number(r.bytes) })));
  }

  /**
   * The archived events matching `f`, in stream order after `f.after`, at most `f.limit`, each as its NDJSON line
   * (its replay row of `context`, or its CloudEvent), written by Postgres and streamed from one query a batch of rows
   * at a time: an export of any length holds one batch here.
   */
  exportLines(
    f: ReplayFilter,
    as: { readonly rowsOf: ContextName } | 'cloudevents',
  ): AsyncIterableIterator<ExportLineRow> {
    const line = as === 'cloudevents' ? cloudEventJson : replayRowJson(as.rowsOf);
    return this.matching(f).select(line.as('line')).stream(EXPORT_BATCH_ROWS);
  }

  /** The events of `f` in stream order after `f.after`, at most `f.limit`: one range of an index whatever the filters. */
  private matching(f: ReplayFilter) {
    let q = this.db
      .selectFrom('events')
      .select(['seq', 'idx'])
      .where('tenant', '=', f.tenant)
      .where('stream', '=', f.stream)
      .where(sql<boolean>`(seq, idx) > (${f.after.seq}, ${f.after.idx})`);
    if (f.toSeq !== undefined) q = q.where('seq', '<=', f.toSeq);
    if (f.fromTime) q = q.where('time', '>=', f.fromTime);
    if (f.toTime) q = q.where('time', '<=', f.toTime);
    if (f.subject !== undefined) q = q.where('subject', '=', f.subject);
    if (f.types) q = q.where('type', 'in', [...f.types]);
    // Each row carries its aggregate's agent and device: one index range (events_of_agent, events_of_device).
    if (f.agentId !== undefined) q = q.where('agent_id', '=', f.agentId);
    if (f.deviceId !== undefined) q = q.where('device_id', '=', f.deviceId);
    return q.orderBy('seq').orderBy('idx').limit(f.limit);
  }

  /** The tenant's highest message sequence in `stream`, at most `toSeq`; 0 when it has none. */
  async highSeq(tenant: string, stream: string, toSeq?: number): Promise<number> {
    let q = this.db.selectFrom('events').select('seq').where('tenant', '=', tenant).where('stream', '=', stream);
    if (toSeq !== undefined) q = q.where('seq', '<=', toSeq);
    const row = await q.orderBy('seq', 'desc').limit(1).executeTakeFirst();
    return row ? Number(row.seq) : 0;
  }

  /** Parked messages per projection (durable consumer name). */
  async parkedCounts(): Promise<Map<string, number>> {
    const rows = await this.db
      .selectFrom('parked_messages')
      .select(['projection', (eb) => eb.fn.countAll<string>().as('n')])
      .groupBy('projection')
      .execute();
    return new Map(rows.map((r) => [r.projection, Number(r.n)]));
  }
}
