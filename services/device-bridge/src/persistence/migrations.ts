import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import { projectionBookkeepingMigration } from '@ormuz/event-log';

export const DEVICE_BRIDGE_SCHEMA = 'device_bridge';

export const deviceBridgeMigrations: Record<string, Migration> = {
  '0001_projection_bookkeeping': projectionBookkeepingMigration,
  '0002_executions': {
    async up(db) {
      // Calls addressed to a device, from request to outcome: what the dispatcher sends and what a reconnect resumes.
      await db.schema
        .createTable('executions')
        .addColumn('tenant', 'text', (c) => c.notNull())
        .addColumn('call_id', 'text', (c) => c.notNull())
        .addColumn('device_id', 'text', (c) => c.notNull())
        .addColumn('tool', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('payload_sha256', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('verdict', 'jsonb')
        .addColumn('request_id', 'text')
        .addColumn('deadline', 'timestamptz')
        .addColumn('boot_id', 'text')
        .addColumn('last_seq', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('executions_pk', ['tenant', 'call_id'])
        .execute();
      await db.schema.createIndex('executions_by_device').on('executions').columns(['tenant', 'device_id', 'status']).execute();
    },
  },
  '0003_offline_deadline_and_refused_reports': {
    async up(db) {
      // When the call was authorized: an authorized call whose device never connects is sealed past its deadline.
      await db.schema.alterTable('executions').addColumn('authorized_at', 'timestamptz').execute();
      await db.schema.createIndex('executions_by_status').on('executions').columns(['status', 'authorized_at']).execute();
      // Claims, outcomes and reports a device sent about a request assigned to another device: refused, kept here.
      await db.schema
        .createTable('refused_reports')
        .addColumn('id', 'bigserial', (c) => c.primaryKey())
        .addColumn('at', 'timestamptz', (c) => c.notNull())
        .addColumn('tenant', 'text', (c) => c.notNull())
        .addColumn('device_id', 'text', (c) => c.notNull())
        .addColumn('session_id', 'text')
        .addColumn('request_id', 'text', (c) => c.notNull())
        .addColumn('frame_type', 'text', (c) => c.notNull())
        .addColumn('assigned_device_id', 'text')
        .addColumn('reason', 'text', (c) => c.notNull())
        .execute();
    },
  },
  '0005_device_credentials': {
    async up(db) {
      // One row per token a device was given: only its SHA-256 is stored. Rotation adds a row and gives the others an
      // expiry; revocation stamps revoked_at. Rows are kept for the audit trail.
      await db.schema
        .createTable('device_credentials')
        .addColumn('credential_id', 'text', (c) => c.primaryKey())
        .addColumn('tenant', 'text', (c) => c.notNull())
        .addColumn('device_id', 'text', (c) => c.notNull())
        .addColumn('token_sha256', 'bytea', (c) => c.notNull().unique())
        .addColumn('created_at', 'timestamptz', (c) => c.notNull())
        .addColumn('expires_at', 'timestamptz')
        .addColumn('revoked_at', 'timestamptz')
        .execute();
      await db.schema.createIndex('device_credentials_by_device').on('device_credentials').columns(['tenant', 'device_id']).execute();
    },
  },
  '0006_ready_by_sequence': {
    async up(db) {
      // The dispatcher's query: ready calls after a stream sequence, in sequence order (a range scan, not a sort).
      await db.schema
        .createIndex('executions_ready_by_seq')
        .on('executions')
        .column('last_seq')
        .where(sql.ref('status'), '=', 'ready')
        .execute();
    },
  },
  '0007_refused_reports_on_the_log': {
    async up(db) {
      // Refused reports are events on the devices stream now (ormuz.device.report_refused.v1), archived by audit.
      await db.schema.dropTable('refused_reports').ifExists().execute();
    },
  },
};
