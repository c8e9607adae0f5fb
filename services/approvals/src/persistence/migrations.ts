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
  '0004_webhooks': {
    async up(db) {
      // A tenant's endpoints. The secret is kept as issued: the platform signs with it, so it cannot be a hash.
      // Removal is a mark, so the delivery log keeps naming the endpoint it went to.
      await db.schema
        .createTable('webhooks')
        .addColumn('tenant', 'text', (c) => c.notNull())
        .addColumn('webhook_id', 'text', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('events', sql`text[]`, (c) => c.notNull())
        .addColumn('enabled', 'boolean', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('secret_issued_at', 'timestamptz', (c) => c.notNull())
        .addColumn('created_at', 'timestamptz', (c) => c.notNull())
        .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
        .addColumn('removed_at', 'timestamptz')
        .addPrimaryKeyConstraint('webhooks_pk', ['tenant', 'webhook_id'])
        .execute();
      // One row per event and endpoint: the unique key makes a reaction that runs again (after a crash, or a replay
      // of the log) find the row it made instead of making a second one.
      await db.schema
        .createTable('webhook_deliveries')
        .addColumn('delivery_id', 'text', (c) => c.primaryKey())
        .addColumn('tenant', 'text', (c) => c.notNull())
        .addColumn('webhook_id', 'text', (c) => c.notNull())
        .addColumn('event_id', 'text', (c) => c.notNull())
        .addColumn('event', 'text', (c) => c.notNull())
        .addColumn('approval_id', 'text', (c) => c.notNull())
        .addColumn('call_id', 'text', (c) => c.notNull())
        .addColumn('agent_id', 'text')
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', 'timestamptz')
        .addColumn('last_status_code', 'integer')
        .addColumn('last_error', 'text')
        .addColumn('created_at', 'timestamptz', (c) => c.notNull())
        .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
        .addColumn('delivered_at', 'timestamptz')
        .addUniqueConstraint('webhook_deliveries_once', ['webhook_id', 'event_id'])
        .addForeignKeyConstraint('webhook_deliveries_webhook', ['tenant', 'webhook_id'], 'webhooks', [
          'tenant',
          'webhook_id',
        ])
        .execute();
      // What the deliverer polls: pending rows by when they are due.
      await db.schema
        .createIndex('webhook_deliveries_due')
        .on('webhook_deliveries')
        .column('next_attempt_at')
        .where(sql.ref('status'), '=', 'pending')
        .execute();
      await db.schema
        .createIndex('webhook_deliveries_log')
        .on('webhook_deliveries')
        .columns(['tenant', 'created_at'])
        .execute();
      // Every POST of a delivery, with what came back.
      await db.schema
        .createTable('webhook_attempts')
        .addColumn('delivery_id', 'text', (c) => c.notNull().references('webhook_deliveries.delivery_id'))
        .addColumn('attempt', 'integer', (c) => c.notNull())
        .addColumn('started_at', 'timestamptz', (c) => c.notNull())
        .addColumn('finished_at', 'timestamptz')
        .addColumn('status_code', 'integer')
        .addColumn('error', 'text')
        .addPrimaryKeyConstraint('webhook_attempts_pk', ['delivery_id', 'attempt'])
        .execute();
    },
  },
  '0005_webhook_secrets_sealed': {
    async up(db) {
      // With ORMUZ_WEBHOOKS_SECRET_KEY a secret is kept sealed (AES-256-GCM) and `secret` is null; rows from before
      // the key keep theirs in `secret` until their endpoint is next set. One of the two is always there.
      await db.schema.alterTable('webhooks').addColumn('secret_sealed', 'text').execute();
      await db.schema
        .alterTable('webhooks')
        .alterColumn('secret', (c) => c.dropNotNull())
        .execute();
      await db.schema
        .alterTable('webhooks')
        .addCheckConstraint('webhooks_secret_kept', sql`secret is not null or secret_sealed is not null`)
        .execute();
    },
  },
};
