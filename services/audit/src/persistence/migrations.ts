import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import { projectionBookkeepingMigration } from '@ormuz/event-log';
import { chainExistingEvents } from './chain-backfill.js';

/** Audit's Postgres schema. */
export const AUDIT_SCHEMA = 'audit';

/**
 * The role the archive is written as (docs/decisions/0026): INSERT and SELECT on `audit.events`, never UPDATE or
 * DELETE. The archive projection and the erase path take it (SET LOCAL ROLE) for their transactions.
 */
export const AUDIT_WRITER_ROLE = 'ormuz_audit';

/** The one way archived rows change: removes rows' erasable fields, run with the schema owner's rights. */
export const ERASE_FUNCTION = 'erase_event_fields';

/**
 * The agent an archived event's data names (a call's request, a conversation's start), as SQL: `partiesNamedBy` of
 * domain/event-parties.ts, for the rows archived before the archive carried each row's parties.
 */
const AGENT_OF_EVENT = sql<string | null>`nullif(data->>'agent_id', '')`;
/** The device an archived event's data names (a device event, a conversation's start, a call's target or executor). */
const DEVICE_OF_EVENT = sql<
  string | null
>`coalesce(nullif(data->>'device_id', ''), nullif(data->'target'->>'device_id', ''), nullif(data->'executor'->>'device_id', ''))`;

// Raw SQL is not rewritten by the migrator's schema plugin, so it names the schema itself.
export const auditMigrations: Record<string, Migration> = {
  '0001_projection_bookkeeping': projectionBookkeepingMigration,
  '0002_event_archive': {
    async up(db) {
      await db.schema
        .createTable('events')
        .addColumn('stream', 'text', (c) => c.notNull())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .addColumn('id', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('tenant', 'text', (c) => c.notNull())
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('time', 'timestamptz', (c) => c.notNull())
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('correlation_id', 'text', (c) => c.notNull())
        .addColumn('causation_id', 'text', (c) => c.notNull())
        .addColumn('schema_version', 'integer', (c) => c.notNull())
        .addColumn('data', 'jsonb', (c) => c.notNull())
        .addPrimaryKeyConstraint('events_pk', ['stream', 'seq'])
        .addUniqueConstraint('events_id_unique', ['id'])
        .execute();
      await db.schema.createIndex('events_by_tenant').on('events').columns(['tenant', 'stream', 'seq']).execute();
      await db.schema
        .createIndex('events_by_aggregate')
        .on('events')
        .columns(['tenant', 'stream', 'subject', 'seq'])
        .execute();
      await db.schema.createIndex('events_by_time').on('events').columns(['tenant', 'time']).execute();
      await sql`comment on table ${sql.id(AUDIT_SCHEMA, 'events')} is 'Archive: every event of every stream, as it was on the log, one row per stream sequence.'`.execute(
        db,
      );
    },
  },
  '0003_call_records': {
    async up(db) {
      await db.schema
        .createTable('call_records')
        .addColumn('tenant', 'text', (c) => c.notNull())
        .addColumn('call_id', 'text', (c) => c.notNull())
        .addColumn('tool', 'text', (c) => c.notNull())
        .addColumn('contract_version', 'text', (c) => c.notNull())
        .addColumn('agent_id', 'text', (c) => c.notNull())
        .addColumn('correlation_id', 'text', (c) => c.notNull())
        .addColumn('origin', 'jsonb', (c) => c.notNull())
        .addColumn('target_device_id', 'text')
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('payload_sha256', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('decision', 'text')
        .addColumn('decided_at', 'timestamptz')
        .addColumn('refusal_code', 'text')
        .addColumn('refusal_message', 'text')
        .addColumn('risk_level', 'text')
        .addColumn('risk_reasons', 'jsonb')
        .addColumn('approval_id', 'text')
        .addColumn('approval_summary', 'text')
        .addColumn('approval_expires_at', 'timestamptz')
        .addColumn('approval_outcome', 'text')
        .addColumn('decided_by', 'text')
        .addColumn('approval_decided_at', 'timestamptz')
        .addColumn('denial_reason', 'text')
        .addColumn('authorized_at', 'timestamptz')
        .addColumn('request_id', 'text')
        .addColumn('executor', 'jsonb')
        .addColumn('deadline', 'timestamptz')
        .addColumn('dispatched_at', 'timestamptz')
        .addColumn('executor_id', 'text')
        .addColumn('boot_id', 'text')
        .addColumn('started_at', 'timestamptz')
        .addColumn('result', 'jsonb')
        .addColumn('error', 'jsonb')
        .addColumn('unknown_cause', 'text')
        .addColumn('unknown_detail', 'text')
        .addColumn('unknown_at', 'timestamptz')
        .addColumn('sealed_by', 'text')
        .addColumn('seal_reason', 'text')
        .addColumn('sealed_at', 'timestamptz')
        .addColumn('requested_at', 'timestamptz', (c) => c.notNull())
        .addColumn('finished_at', 'timestamptz')
        .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
        .addColumn('last_seq', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('call_records_pk', ['tenant', 'call_id'])
        .addCheckConstraint('call_records_decision', sql`decision in ('refused', 'staged', 'authorized')`)
        .addCheckConstraint('call_records_approval_outcome', sql`approval_outcome in ('approved', 'denied', 'expired')`)
        .execute();
      await db.schema.createIndex('call_records_by_status').on('call_records').columns(['tenant', 'status']).execute();
      await db.schema
        .createIndex('call_records_by_requested_at')
        .on('call_records')
        .columns(['tenant', 'requested_at'])
        .execute();
      await sql`comment on table ${sql.id(AUDIT_SCHEMA, 'call_records')} is 'Audit row per tool call, built from the calls stream. A value never recorded is NULL, never a default; result holds JSON null only when the executor returned null.'`.execute(
        db,
      );
    },
  },
  '0004_event_index': {
    // A decision's events are one message (docs/decisions/0015): an archived event is named by its message's sequence
    // and its place in that message. Events archived before are each a message of one event, so their index is 0.
    async up(db) {
      await db.schema
        .alterTable('events')
        .addColumn('idx', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable('events').dropConstraint('events_pk').execute();
      await db.schema.alterTable('events').addPrimaryKeyConstraint('events_pk', ['stream', 'seq', 'idx']).execute();
      await sql`comment on table ${sql.id(AUDIT_SCHEMA, 'events')} is 'Archive: every event of every stream, as it was on the log, one row per event: its message''s stream sequence and its index in that message.'`.execute(
        db,
      );
    },
  },
  '0005_archive_chain': {
    // Each tenant's archived events form a hash chain in archive order (docs/decisions/0026). Rows archived before are
    // chained here in (stream, sequence, index) order per tenant.
    async up(db) {
      await db.schema
        .alterTable('events')
        .addColumn('chain_pos', 'bigint')
        .addColumn('data_sha256', 'text')
        .addColumn('erasable_field', 'text')
        .addColumn('erasable_sha256', 'text')
        .addColumn('prev_hash', 'text')
        .addColumn('row_hash', 'text')
        .addColumn('erased_at', 'timestamptz')
        .execute();
      await db.schema
        .createTable('chain_heads')
        .addColumn('tenant', 'text', (c) => c.primaryKey())
        .addColumn('position', 'bigint', (c) => c.notNull())
        .addColumn('hash', 'text', (c) => c.notNull())
        .execute();
      await chainExistingEvents(db);
      for (const column of ['chain_pos', 'data_sha256', 'prev_hash', 'row_hash']) {
        await db.schema
          .alterTable('events')
          .alterColumn(column, (c) => c.setNotNull())
          .execute();
      }
      await db.schema
        .alterTable('events')
        .addUniqueConstraint('events_chain_unique', ['tenant', 'chain_pos'])
        .execute();
      await db.schema
        .createTable('retention_rules')
        .addColumn('tenant', 'text', (c) => c.primaryKey())
        .addColumn('payloads_days', 'integer')
        .addColumn('results_days', 'integer')
        .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
        .execute();
      await sql`comment on column ${sql.id(AUDIT_SCHEMA, 'events', 'row_hash')} is 'SHA-256 of the canonical link (docs/archive-chain.md): the tenant''s chain in chain_pos order.'`.execute(
        db,
      );
    },
  },
  '0006_archive_writer_role': {
    // Roles belong to the server, not the database: several databases (namespaces) create the same role, maybe at once.
    // Every statement may run again (a projection rebuild builds its copy's tables with these migrations; the copy gets
    // the live schema's privileges from the rebuilder), so the function is created or replaced.
    async up(db) {
      const schema = sql.id(AUDIT_SCHEMA);
      const role = sql.id(AUDIT_WRITER_ROLE);
      const fn = sql.id(AUDIT_SCHEMA, ERASE_FUNCTION);
      await sql`do $$ begin
          create role ${role} login nosuperuser nocreatedb nocreaterole;
        exception when duplicate_object or unique_violation then null;
        end $$`.execute(db);
      await sql`grant ${role} to current_user`.execute(db).catch(() => undefined);
      await sql`grant usage on schema ${schema} to ${role}`.execute(db);
      await sql`revoke all on ${sql.id(AUDIT_SCHEMA, 'events')} from ${role}`.execute(db);
      await sql`grant select, insert on ${sql.id(AUDIT_SCHEMA, 'events')} to ${role}`.execute(db);
      for (const table of [
        'call_records',
        'projection_checkpoints',
        'parked_messages',
        'chain_heads',
        'retention_rules',
      ]) {
        await sql`grant select, insert, update, delete on ${sql.id(AUDIT_SCHEMA, table)} to ${role}`.execute(db);
      }
      await sql`grant select on all tables in schema ${schema} to ${role}`.execute(db);
      await sql`create or replace function ${fn}(p_tenant text, p_before timestamptz, p_fields text[]) returns bigint
        language sql security definer set search_path = pg_catalog, pg_temp as $$
          with erased as (
            update ${sql.id(AUDIT_SCHEMA, 'events')} set data = data - erasable_field, erased_at = now()
            where tenant = p_tenant and time < p_before and erasable_field = any(p_fields) and erased_at is null
            returning 1)
          select count(*) from erased
        $$`.execute(db);
      await sql`revoke all on function ${fn}(text, timestamptz, text[]) from public`.execute(db);
      await sql`grant execute on function ${fn}(text, timestamptz, text[]) to ${role}`.execute(db);
    },
  },
  '0007_call_record_erasure': {
    // Erasure removes a call's payload and result from its audit row too; the row says when (docs/decisions/0026).
    async up(db) {
      await db.schema
        .alterTable('call_records')
        .alterColumn('payload', (c) => c.dropNotNull())
        .execute();
      await db.schema
        .alterTable('call_records')
        .addColumn('payload_erased_at', 'timestamptz')
        .addColumn('result_erased_at', 'timestamptz')
        .execute();
    },
  },
  // Named for what it serves (`ormuz replay`), apart from the archive's other migrations. Expression indexes only: the
  // table's columns are left as they are. An aggregate's agent or device is named in some of its events' data (a
  // call's request, a conversation's start, a device's events); replay finds those aggregates through these indexes,
  // then their events through events_by_aggregate.
  '0008_replay_filters': {
    async up(db) {
      // Built with the schema builder, not raw SQL, so that the table is the migrated schema's (a rebuild's copy too).
      for (const [name, of] of [
        ['events_by_agent', AGENT_OF_EVENT],
        ['events_by_device', DEVICE_OF_EVENT],
      ] as const) {
        await db.schema
          .createIndex(name)
          .on('events')
          .expression(sql`tenant, stream, (${of})`)
          .where(sql<boolean>`(${of}) is not null`)
          .execute();
      }
    },
  },
  // Each row carries its aggregate's agent and device (domain/event-parties.ts), written by the archive projection, so
  // a replay for one is an index range in stream order: a page costs the same at the start and the end of a range.
  // Through 0008 a page found the aggregates through expression indexes and joined them against every event after
  // the cursor, which made each page cost the rest of the range. Rows archived before are filled in here (as the
  // schema's owner: the archive writer role cannot UPDATE), each with the first agent and device its aggregate names.
  '0009_event_parties': {
    async up(db) {
      await db.schema.alterTable('events').addColumn('agent_id', 'text').addColumn('device_id', 'text').execute();
      const named = db
        .selectFrom('events')
        .select([
          'tenant',
          'stream',
          'subject',
          sql<
            string | null
          >`(array_agg(${AGENT_OF_EVENT} order by seq, idx) filter (where ${AGENT_OF_EVENT} is not null))[1]`.as(
            'agent',
          ),
          sql<
            string | null
          >`(array_agg(${DEVICE_OF_EVENT} order by seq, idx) filter (where ${DEVICE_OF_EVENT} is not null))[1]`.as(
            'device',
          ),
        ])
        .where((eb) => eb.or([eb(AGENT_OF_EVENT, 'is not', null), eb(DEVICE_OF_EVENT, 'is not', null)]))
        .groupBy(['tenant', 'stream', 'subject']);
      await db
        .updateTable('events as e')
        .from(named.as('p'))
        .set((eb) => ({ agent_id: eb.ref('p.agent'), device_id: eb.ref('p.device') }))
        .whereRef('e.tenant', '=', 'p.tenant')
        .whereRef('e.stream', '=', 'p.stream')
        .whereRef('e.subject', '=', 'p.subject')
        .execute();
      for (const [name, column] of [
        ['events_of_agent', 'agent_id'],
        ['events_of_device', 'device_id'],
      ] as const) {
        await db.schema
          .createIndex(name)
          .on('events')
          .columns(['tenant', 'stream', column, 'seq', 'idx'])
          .where(sql.ref(column), 'is not', null)
          .execute();
      }
      await db.schema.dropIndex('events_by_agent').ifExists().execute();
      await db.schema.dropIndex('events_by_device').ifExists().execute();
    },
  },
  // A tenant's events of a stream in stream order, (seq, idx) whole: a replay page without filters reads its rows off
  // this index and stops at the page's end. events_by_tenant had no idx, so Postgres sorted every event after the
  // cursor to find a page's first rows, and a page cost the rest of the range.
  '0010_events_in_order': {
    async up(db) {
      await db.schema.createIndex('events_in_order').on('events').columns(['tenant', 'stream', 'seq', 'idx']).execute();
      await db.schema.dropIndex('events_by_tenant').ifExists().execute();
    },
  },
};
