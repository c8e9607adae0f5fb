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
};
