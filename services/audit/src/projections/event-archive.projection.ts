import type { Transaction } from 'kysely';
import { contextFilter, type ContextName, type OrmuzEvent } from '@ormuz/contracts';
import { streamName, type AfterCommit, type Projection } from '@ormuz/event-log';
import { StreamSequenceReusedError } from '../domain/errors.js';
import type { AuditDB } from '../persistence/audit.tables.js';
import { AUDIT_SCHEMA } from '../persistence/migrations.js';

/** Name of the archive projection of one context (also its durable consumer and checkpoint key). */
export const archiveProjectionName = (context: ContextName): string => `archive_${context}`;

/**
 * Builds `audit.events` for one context's stream: every event as it was on the log, one row per event, named by its
 * message's stream sequence and its index in that message (a decision's events are one message).
 *
 * Idempotent on (stream, seq, idx): a redelivered message inserts nothing. A different event at an archived place (the
 * stream was deleted and recreated under the same name) or an event id already archived at another place is an
 * error, so the message is parked and reported instead of being silently merged into the archive.
 */
export function eventArchiveProjection(namespace: string, context: ContextName): Projection<AuditDB> {
  const stream = streamName(namespace, context);
  return {
    name: `audit_${archiveProjectionName(context)}`,
    schema: AUDIT_SCHEMA,
    // One table for every context's archive: this one's rows are its stream's.
    tables: [{ name: 'events', rows: { column: 'stream', value: stream } }],
    stream,
    filterSubject: contextFilter(namespace, context),
    // One row per (sequence, index): a parked message retried later lands where it would have.
    appliesOutOfOrder: true,
    async apply(trx: Transaction<AuditDB>, event: OrmuzEvent, seq: number, _after: AfterCommit, index: number) {
      const t = trx.withSchema(AUDIT_SCHEMA);
      const inserted = await t
        .insertInto('events')
        .values({
          stream,
          seq,
          idx: index,
          id: event.id,
          type: event.type,
          tenant: event.tenant,
          subject: event.subject,
          time: new Date(event.time),
          source: event.source,
          correlation_id: event.correlationid,
          causation_id: event.causationid,
          schema_version: event.schemaversion,
          data: JSON.stringify(event.data),
        })
        .onConflict((oc) => oc.columns(['stream', 'seq', 'idx']).doNothing())
        .returning('seq')
        .executeTakeFirst();
      if (inserted) return;
      const archived = await t
        .selectFrom('events')
        .select('id')
        .where('stream', '=', stream)
        .where('seq', '=', seq)
        .where('idx', '=', index)
        .executeTakeFirstOrThrow();
      if (archived.id !== event.id) throw new StreamSequenceReusedError(stream, seq, archived.id, event.id);
    },
    async reset(trx: Transaction<AuditDB>) {
      await trx.withSchema(AUDIT_SCHEMA).deleteFrom('events').where('stream', '=', stream).execute();
    },
  };
}
