import { Inject, Injectable } from '@nestjs/common';
import type { Kysely, Selectable } from 'kysely';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';
import type { AuditDB, CallRecordsTable, EventsTable } from './audit.tables.js';
import { AUDIT_SCHEMA } from './migrations.js';

export type CallRecordRow = Selectable<CallRecordsTable>;
export type ArchivedEventRow = Selectable<EventsTable>;

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
