import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import { projectionBookkeepingMigration } from '@ormuz/event-log';

export const APPROVALS_SCHEMA = 'approvals';

export const approvalsMigrations: Record<string, Migration> = {
  '0001_projection_bookkeeping': projectionBookkeepingMigration,
  '0002_inbox': {
    async up(db) {
      // Tool names of requested calls, so a staged call can be shown with its tool.
      await db.schema
        .createTable('requests')
        .addColumn('tenant', 'text', (c) => c.notNull())
        .addColumn('call_id', 'text', (c) => c.notNull())
        .addColumn('tool', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('requests_pk', ['tenant', 'call_id'])
        .execute();
      await db.schema
        .createTable('inbox')
        .addColumn('tenant', 'text', (c) => c.notNull())
        .addColumn('approval_id', 'text', (c) => c.notNull())
        .addColumn('call_id', 'text', (c) => c.notNull())
        .addColumn('tool', 'text', (c) => c.notNull())
        .addColumn('summary', 'text', (c) => c.notNull())
        .addColumn('payload_sha256', 'text', (c) => c.notNull())
        .addColumn('contract_version', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
        .addColumn('staged_at', 'timestamptz', (c) => c.notNull())
        .addColumn('decided_by', 'text')
        .addColumn('decided_at', 'timestamptz')
        .addPrimaryKeyConstraint('inbox_pk', ['tenant', 'approval_id'])
        .execute();
      await db.schema.createIndex('inbox_pending').on('inbox').columns(['status', 'expires_at']).execute();
    },
  },
  '0003_inbox_detail': {
    async up(db) {
      // What an owner needs to decide: who asked, on which device, with which arguments, and why it is high risk.
      // Null for rows projected before this migration (a rebuild fills them).
      await db.schema
        .alterTable('requests')
        .addColumn('agent_id', 'text')
        .addColumn('device_id', 'text')
        .addColumn('payload', 'text')
        .execute();
      await db.schema
        .alterTable('inbox')
        .addColumn('agent_id', 'text')
        .addColumn('device_id', 'text')
        .addColumn('payload', 'text')
        .addColumn('risk_reasons', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
        .execute();
    },
  },
};
