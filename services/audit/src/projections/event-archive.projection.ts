import type { Transaction } from 'kysely';
import { contextFilter, type ContextName, type OrmuzEvent } from '@ormuz/contracts';
import { streamName, type AfterCommit, type AppliedEvent, type Projection } from '@ormuz/event-log';
import { appendToArchive } from '../persistence/archive-appender.js';
import type { AuditDB } from '../persistence/audit.tables.js';
import { AUDIT_SCHEMA } from '../persistence/migrations.js';

/** Name of the archive projection of one context (also its durable consumer and checkpoint key). */
export const archiveProjectionName = (context: ContextName): string => `archive_${context}`;

/**
 * The chain's columns: a rebuild of one stream's archive cannot reproduce them (the chain runs through the tenant's
 * events of every stream), so a rebuild leaves them out of its comparison; `ormuz audit verify` checks them.
 */
const CHAIN_COLUMNS = ['chain_pos', 'prev_hash', 'row_hash'] as const;

/**
 * Builds `audit.events` for one context's stream: every event as it was on the log, one row per event, named by its
 * message's stream sequence and its index in that message (a decision's events are one message).
 *
 * Each tenant's rows form a hash chain in the order they are archived (archive-appender.ts, docs/archive-chain.md).
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
    tables: [{ name: 'events', rows: { column: 'stream', value: stream }, uncompared: CHAIN_COLUMNS }],
    stream,
    filterSubject: contextFilter(namespace, context),
    // One row per (sequence, index): a parked message retried later lands where it would have.
    appliesOutOfOrder: true,
    async apply(trx: Transaction<AuditDB>, event: OrmuzEvent, seq: number, _after: AfterCommit, index: number) {
      await appendToArchive(trx, stream, [{ event, seq, index }]);
    },
    async applyBatch(trx: Transaction<AuditDB>, items: readonly AppliedEvent[]) {
      await appendToArchive(trx, stream, items);
    },
    // The archive is append-only (its writer role may not delete) and hash-chained: a rebuild keeps every archived row
    // and re-reads the stream from sequence 1, appending only what is missing (docs/decisions/0026).
    async reset() {},
  };
}
