import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import { projectionBookkeepingMigration } from '@ormuz/event-log';

/** Model-loop's Postgres schema. */
export const MODEL_LOOP_SCHEMA = 'model_loop';

export const modelLoopMigrations: Record<string, Migration> = {
  // Also holds the messages the loop's reactors park after too many failed attempts.
  '0001_projection_bookkeeping': projectionBookkeepingMigration,
  // Raw SQL is not rewritten by withSchema, so it names the schema itself.
  '0002_conversation_view': {
    async up(db) {
      await db.schema
        .createTable('conversations')
        .addColumn('tenant', 'text', (c) => c.notNull())
        .addColumn('conversation_id', 'text', (c) => c.notNull())
        .addColumn('agent_id', 'text', (c) => c.notNull())
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('device_id', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('pending', 'jsonb', (c) => c.notNull())
        .addColumn('final_text', 'text')
        .addColumn('completion_reason', 'text')
        .addColumn('turns', 'integer', (c) => c.notNull())
        .addColumn('last_seq', 'bigint', (c) => c.notNull())
        .addColumn('started_at', 'timestamptz', (c) => c.notNull())
        .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
        .addPrimaryKeyConstraint('conversations_pk', ['tenant', 'conversation_id'])
        .execute();
      await db.schema
        .createIndex('conversations_by_status')
        .on('conversations')
        .columns(['tenant', 'status'])
        .execute();
      await db.schema
        .createTable('conversation_messages')
        .addColumn('tenant', 'text', (c) => c.notNull())
        .addColumn('conversation_id', 'text', (c) => c.notNull())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .addColumn('turn', 'integer', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('content', 'text', (c) => c.notNull())
        .addColumn('tool_calls', 'jsonb')
        .addColumn('tool_call_id', 'text')
        .addColumn('provenance', 'jsonb')
        .addColumn('added_at', 'timestamptz', (c) => c.notNull())
        .addPrimaryKeyConstraint('conversation_messages_pk', ['tenant', 'conversation_id', 'seq'])
        .execute();
      await sql`comment on table ${sql.id(MODEL_LOOP_SCHEMA, 'conversations')} is 'Read model: every conversation and where it stands, built from the conversations stream.'`.execute(
        db,
      );
      await sql`comment on table ${sql.id(MODEL_LOOP_SCHEMA, 'conversation_messages')} is 'Read model: every message of every conversation in log order; NULL where a field does not apply to the role.'`.execute(
        db,
      );
    },
  },
  '0003_message_index': {
    // A decision's events are one log message (docs/decisions/0015): a conversation message is named by its log
    // message's sequence and its place in that message. Rows written before are each alone in their log message (the
    // conversation decider never added two messages in one decision), so their index is 0.
    async up(db) {
      await db.schema
        .alterTable('conversation_messages')
        .addColumn('idx', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable('conversation_messages').dropConstraint('conversation_messages_pk').execute();
      await db.schema
        .alterTable('conversation_messages')
        .addPrimaryKeyConstraint('conversation_messages_pk', ['tenant', 'conversation_id', 'seq', 'idx'])
        .execute();
      await sql`comment on table ${sql.id(MODEL_LOOP_SCHEMA, 'conversation_messages')} is 'Read model: every message of every conversation in log order (the log message''s sequence, then the event''s index in it); NULL where a field does not apply to the role.'`.execute(
        db,
      );
    },
  },
  '0004_conversation_usage': {
    // What each conversation used (for the bounds) and the bound that stopped it. Rows written before hold 0 and NULL
    // until the view is rebuilt from the log (`ormuz projections` after a reset), which fills them in.
    async up(db) {
      await db.schema
        .alterTable('conversations')
        .addColumn('tool_calls_used', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('tokens_used', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('price', 'jsonb')
        .addColumn('cost_usd', 'double precision')
        .addColumn('bound', 'jsonb')
        .execute();
      await sql`comment on column ${sql.id(MODEL_LOOP_SCHEMA, 'conversations', 'cost_usd')} is 'US dollars spent on the model, priced with the start event''s price; NULL when the model had no price.'`.execute(
        db,
      );
      await sql`comment on column ${sql.id(MODEL_LOOP_SCHEMA, 'conversations', 'bound')} is 'The bound that stopped the conversation, with its limit and what was used; NULL when none did.'`.execute(
        db,
      );
    },
  },
  // Per-agent model configuration (docs/decisions/0024): configuration, not a fact, so a table rather than a stream;
  // each conversation records the settings it started with. Holds no key, only where one is read.
  '0005_agent_models': {
    async up(db) {
      await db.schema
        .createTable('agent_models')
        .addColumn('tenant', 'text', (c) => c.notNull())
        .addColumn('agent_id', 'text', (c) => c.notNull())
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('settings', 'jsonb', (c) => c.notNull())
        .addColumn('updated_by', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
        .addPrimaryKeyConstraint('agent_models_pk', ['tenant', 'agent_id'])
        .execute();
      await sql`comment on table ${sql.id(MODEL_LOOP_SCHEMA, 'agent_models')} is 'Each agent''s model and where it is reached (base URL, the variable or file holding the key, never a key).'`.execute(
        db,
      );
    },
  },
  // Per-tenant daily limits (docs/decisions/0036): configuration, like agents' models, so a table; what a tenant used
  // is on the log (the usage stream), never here. A NULL column is no limit of the tenant's own: the default applies.
  '0006_tenant_limits': {
    async up(db) {
      await db.schema
        .createTable('tenant_limits')
        .addColumn('tenant', 'text', (c) => c.primaryKey())
        .addColumn('day_steps', 'bigint')
        .addColumn('day_tool_calls', 'bigint')
        .addColumn('day_tokens', 'bigint')
        .addColumn('day_cost_usd', 'double precision')
        .addColumn('updated_by', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
        .execute();
      await sql`comment on table ${sql.id(MODEL_LOOP_SCHEMA, 'tenant_limits')} is 'Each tenant''s own daily limits on model turns, tool calls, tokens and US dollars; NULL: the configured default applies.'`.execute(
        db,
      );
    },
  },
};
