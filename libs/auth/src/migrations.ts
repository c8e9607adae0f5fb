/**
 * The `auth` schema: what libs/auth keeps in Postgres. The library owns the migrations; every service runs them at
 * start (service-kit's `openInfrastructure`, after its own schema's), because every service verifies API keys against
 * these tables, whichever of them starts first. Policy serves the commands that write them.
 */
import type { Migration } from 'kysely/migration';

export const AUTH_SCHEMA = 'auth';

export const authMigrations: Record<string, Migration> = {
  '0001_api_keys': {
    async up(db) {
      // One row per API key ever issued: only the SHA-256 of the key is stored. Rotation adds a row and gives the
      // agent's other keys an end (expires_at, rotated_at, replaced_by); revocation stamps revoked_at. Rows are kept
      // for the audit trail.
      await db.schema
        .createTable('api_keys')
        .addColumn('key_id', 'text', (c) => c.primaryKey())
        .addColumn('tenant', 'text', (c) => c.notNull())
        .addColumn('agent_id', 'text', (c) => c.notNull())
        .addColumn('label', 'text')
        .addColumn('key_sha256', 'bytea', (c) => c.notNull().unique())
        .addColumn('via', 'text', (c) => c.notNull())
        .addColumn('created_at', 'timestamptz', (c) => c.notNull())
        .addColumn('rotated_at', 'timestamptz')
        .addColumn('replaced_by', 'text')
        .addColumn('expires_at', 'timestamptz')
        .addColumn('revoked_at', 'timestamptz')
        .execute();
      await db.schema.createIndex('api_keys_by_agent').on('api_keys').columns(['tenant', 'agent_id']).execute();
    },
  },
};
