import type { Migration } from 'kysely/migration';
import { projectionBookkeepingMigration } from '@ormuz/event-log';

/** Policy's Postgres schema. */
export const POLICY_SCHEMA = 'policy';

export const policyMigrations: Record<string, Migration> = {
  '0001_projection_bookkeeping': projectionBookkeepingMigration,
  '0002_call_status': {
    async up(db) {
      await db.schema
        .createTable('call_status')
        .addColumn('tenant', 'text', (c) => c.notNull())
        .addColumn('call_id', 'text', (c) => c.notNull())
        .addColumn('tool', 'text', (c) => c.notNull())
        .addColumn('agent_id', 'text', (c) => c.notNull())
        .addColumn('correlation_id', 'text', (c) => c.notNull())
        .addColumn('payload_sha256', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('approval_id', 'text')
        .addColumn('last_seq', 'bigint', (c) => c.notNull())
        .addColumn('requested_at', 'timestamptz', (c) => c.notNull())
        .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
        .addPrimaryKeyConstraint('call_status_pk', ['tenant', 'call_id'])
        .execute();
      await db.schema.createIndex('call_status_by_status').on('call_status').columns(['tenant', 'status']).execute();
    },
  },
  '0003_grants': {
    async up(db) {
      await db.schema
        .createTable('grants')
        .addColumn('tenant', 'text', (c) => c.notNull())
        .addColumn('agent_id', 'text', (c) => c.notNull())
        .addColumn('allow', 'jsonb', (c) => c.notNull())
        .addColumn('deny', 'jsonb', (c) => c.notNull())
        .addColumn('pins', 'jsonb', (c) => c.notNull())
        .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
        .addPrimaryKeyConstraint('grants_pk', ['tenant', 'agent_id'])
        .execute();
    },
  },
  '0004_device_screens': {
    async up(db) {
      // Device calls in flight that read or change a screen, to tell what their outcome means for the screen.
      await db.schema
        .createTable('screen_calls')
        .addColumn('tenant', 'text', (c) => c.notNull())
        .addColumn('call_id', 'text', (c) => c.notNull())
        .addColumn('device_id', 'text', (c) => c.notNull())
        .addColumn('tool', 'text', (c) => c.notNull())
        .addColumn('continued', 'boolean', (c) => c.notNull())
        .addPrimaryKeyConstraint('screen_calls_pk', ['tenant', 'call_id'])
        .execute();
      // Each device's latest observation, and what ran after it.
      await db.schema
        .createTable('device_screens')
        .addColumn('tenant', 'text', (c) => c.notNull())
        .addColumn('device_id', 'text', (c) => c.notNull())
        .addColumn('foreground_package', 'text', (c) => c.notNull())
        .addColumn('screen', 'text', (c) => c.notNull())
        .addColumn('elements', 'jsonb', (c) => c.notNull())
        .addColumn('observed_call_id', 'text', (c) => c.notNull())
        .addColumn('changed_by', 'text')
        .addColumn('last_seq', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
        .addPrimaryKeyConstraint('device_screens_pk', ['tenant', 'device_id'])
        .execute();
    },
  },
  '0005_risk_apps': {
    async up(db) {
      // Each tenant's own finance / not-finance app lists (policy.risk.apps.set), read at every screen action.
      await db.schema
        .createTable('risk_apps')
        .addColumn('tenant', 'text', (c) => c.primaryKey())
        .addColumn('finance', 'jsonb', (c) => c.notNull())
        .addColumn('not_finance', 'jsonb', (c) => c.notNull())
        .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
        .execute();
    },
  },
  '0006_tenant_settings': {
    async up(db) {
      // Each tenant's policy settings (policy.settings.set): its taint rule, read at every submit.
      await db.schema
        .createTable('tenant_settings')
        .addColumn('tenant', 'text', (c) => c.primaryKey())
        .addColumn('taint_rule', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
        .execute();
    },
  },
};
