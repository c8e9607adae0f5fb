/**
 * The conversation read model takes every event of a message: a decision's events are one message on the log and
 * share its sequence, so the row's `last_seq` guard must let the second one through, and a message row is named by
 * (seq, index), so two conversation messages of one log message are two rows, kept once when the log is replayed.
 */
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Kysely } from 'kysely';
import { ConversationEventType as E, envelope } from '@ormuz/contracts';
import { connectNats, ensureStreams, EventStore, ProjectionRunner, streamName } from '@ormuz/event-log';
import { migrateSchema, openDatabase } from '@ormuz/postgres';
import { createTestDatabase, randomNamespace, testEnv, type TestDatabase } from '@ormuz/testing';
import { MODEL_LOOP_SCHEMA, modelLoopMigrations } from '../src/index.js';
import { Conversations } from '../src/persistence/conversations.js';
import type { ConversationViewDB } from '../src/persistence/conversation-view.tables.js';
import { conversationViewProjection } from '../src/projections/conversation-view.projection.js';

describe('conversation view: messages of several events', () => {
  const ns = randomNamespace();
  const tenant = 'acme';
  const id = 'conv_0123456789abcdef0123456789abcdef';
  const cause = { correlationid: id, causationid: 'test' };
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let database: TestDatabase;
  let db: Kysely<ConversationViewDB>;
  let store: EventStore;
  let conversations: Conversations;

  beforeAll(async () => {
    nc = await connectNats({ url: testEnv().natsUrl, name: 'conversation-view-test' });
    jsm = await jetstreamManager(nc);
    await ensureStreams(jsm, ns, ['conversations']);
    store = new EventStore(jetstream(nc), jsm);
    conversations = new Conversations(store, ns);
    database = await createTestDatabase();
    db = await openDatabase({ url: database.url });
    await migrateSchema(db, MODEL_LOOP_SCHEMA, modelLoopMigrations);
  });
  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
    await jsm?.streams.delete(streamName(ns, 'conversations')).catch(() => false);
    await nc?.close();
  });

  it('applies both events of a message, in order, at the message sequence', async () => {
    // The decider starts a conversation with its task message: one decision, one message of two events.
    const started = await conversations.execute(
      tenant,
      id,
      {
        type: 'StartConversation',
        data: {
          conversation_id: id,
          agent_id: 'agent-1',
          model: 'scripted:demo',
          task: 'Tell Alice I am late.',
          device_id: null,
          limits: { maxSteps: 4, maxToolCalls: 4, maxTokens: 10_000, maxWallTimeMs: 60_000, maxCostUsd: null },
        },
      },
      cause,
    );
    expect(started.events.map((e) => e.type)).toEqual([E.Started, E.MessageAdded]);
    // A message whose second event changes the row the first one changed: the answer and the end of the loop.
    const at = { source: '/test', tenant, subject: id, ...cause, time: new Date() };
    const finished = await store.append(
      conversations.subject(tenant, id),
      [
        envelope(
          {
            type: E.MessageAdded,
            data: {
              turn: 0,
              message: { role: 'assistant', content: 'Done.' },
              usage: { input_tokens: 1, output_tokens: 1 },
            },
          },
          at,
        ),
        envelope({ type: E.Completed, data: { final_text: 'Done.', reason: 'answered' } }, at),
      ],
      started.version,
    );

    const runner = new ProjectionRunner(jetstream(nc), jsm, db, conversationViewProjection(ns));
    await runner.start();
    await runner.waitFor(finished.version);
    await runner.stop();

    const t = db.withSchema(MODEL_LOOP_SCHEMA);
    expect(
      await t
        .selectFrom('conversations')
        .select(['status', 'final_text', 'turns', 'last_seq'])
        .where('conversation_id', '=', id)
        .executeTakeFirst(),
    ).toEqual({ status: 'completed', final_text: 'Done.', turns: 1, last_seq: finished.version });
    expect(
      await t
        .selectFrom('conversation_messages')
        .select(['seq', 'idx', 'role', 'content'])
        .where('conversation_id', '=', id)
        .orderBy('seq')
        .orderBy('idx')
        .execute(),
    ).toEqual([
      // The start's task message is the second event of its log message.
      { seq: started.version, idx: 1, role: 'user', content: 'Tell Alice I am late.' },
      { seq: finished.version, idx: 0, role: 'assistant', content: 'Done.' },
    ]);
  });

  it('keeps two conversation messages of one log message as two rows, once each after a replay', async () => {
    const other = 'conv_fedcba9876543210fedcba9876543210';
    const otherCause = { correlationid: other, causationid: 'test' };
    const started = await conversations.execute(
      tenant,
      other,
      {
        type: 'StartConversation',
        data: {
          conversation_id: other,
          agent_id: 'agent-1',
          model: 'scripted:demo',
          task: 'Tell Bob I am late.',
          device_id: null,
          limits: { maxSteps: 4, maxToolCalls: 4, maxTokens: 10_000, maxWallTimeMs: 60_000, maxCostUsd: null },
        },
      },
      otherCause,
    );
    const at = { source: '/test', tenant, subject: other, ...otherCause, time: new Date() };
    const usage = { input_tokens: 1, output_tokens: 1 };
    const both = await store.append(
      conversations.subject(tenant, other),
      [
        envelope(
          { type: E.MessageAdded, data: { turn: 0, message: { role: 'assistant', content: 'On it.' }, usage } },
          at,
        ),
        envelope(
          { type: E.MessageAdded, data: { turn: 1, message: { role: 'assistant', content: 'Told Bob.' }, usage } },
          at,
        ),
      ],
      started.version,
    );
    expect(both.sequences).toEqual([both.version, both.version]);

    const rows = () =>
      db
        .withSchema(MODEL_LOOP_SCHEMA)
        .selectFrom('conversation_messages')
        .select(['seq', 'idx', 'turn', 'role', 'content'])
        .where('conversation_id', '=', other)
        .orderBy('seq')
        .orderBy('idx')
        .execute();
    const expected = [
      { seq: started.version, idx: 1, turn: 0, role: 'user', content: 'Tell Bob I am late.' },
      { seq: both.version, idx: 0, turn: 0, role: 'assistant', content: 'On it.' },
      { seq: both.version, idx: 1, turn: 1, role: 'assistant', content: 'Told Bob.' },
    ];

    const runner = new ProjectionRunner(jetstream(nc), jsm, db, conversationViewProjection(ns));
    await runner.start();
    await runner.waitFor(both.version);
    await runner.stop();
    expect(await rows()).toEqual(expected);

    // A replay of the whole stream over the kept rows: the same projection under another checkpoint applies every
    // message again, from sequence 1.
    const replayed = new ProjectionRunner(jetstream(nc), jsm, db, {
      ...conversationViewProjection(ns),
      name: 'model_loop_conversation_view_replay',
    });
    await replayed.start();
    await replayed.waitFor(both.version);
    await replayed.stop();
    expect(await rows()).toEqual(expected);
    expect(
      await db
        .withSchema(MODEL_LOOP_SCHEMA)
        .selectFrom('conversations')
        .select(['status', 'turns', 'last_seq'])
        .where('conversation_id', '=', other)
        .executeTakeFirst(),
    ).toEqual({ status: 'running', turns: 2, last_seq: both.version });
  });

  it('sums what a conversation used at its recorded price, and keeps the bound that stopped it with its figures', async () => {
    const priced = 'conv_00000000000000000000000000000c05';
    const c = { correlationid: priced, causationid: 'test' };
    const price = { input_usd_per_mtok: 2, output_usd_per_mtok: 10 };
    const started = await conversations.execute(
      tenant,
      priced,
      {
        type: 'StartConversation',
        data: {
          conversation_id: priced,
          agent_id: 'agent-1',
          model: 'openai:gpt-4o',
          task: 'Look at the screen.',
          device_id: null,
          limits: { maxSteps: 4, maxToolCalls: 4, maxTokens: 10_000, maxWallTimeMs: 60_000, maxCostUsd: 0.01 },
          price,
        },
      },
      c,
    );
    const at = { source: '/test', tenant, subject: priced, ...c, time: new Date() };
    const call = {
      index: 0,
      name: 'device.screen_observe',
      arguments: {},
      call_id: 'call_00000000000000000000000000000c05',
    };
    const bound = { bound: 'cost' as const, limit: 0.01, used: 0.014 };
    const finished = await store.append(
      conversations.subject(tenant, priced),
      [
        envelope(
          {
            type: E.MessageAdded,
            data: {
              turn: 0,
              message: { role: 'assistant', content: '', tool_calls: [call] },
              usage: { input_tokens: 2000, output_tokens: 1000 },
            },
          },
          at,
        ),
        envelope({ type: E.Completed, data: { final_text: 'The agent stopped.', reason: 'cost_limit', bound } }, at),
      ],
      started.version,
    );
    const runner = new ProjectionRunner(jetstream(nc), jsm, db, conversationViewProjection(ns));
    await runner.start();
    await runner.waitFor(finished.version);
    await runner.stop();

    const row = await db
      .withSchema(MODEL_LOOP_SCHEMA)
      .selectFrom('conversations')
      .select(['completion_reason', 'turns', 'tool_calls_used', 'tokens_used', 'price', 'cost_usd', 'bound'])
      .where('conversation_id', '=', priced)
      .executeTakeFirstOrThrow();
    expect({ ...row, tokens_used: Number(row.tokens_used) }).toEqual({
      completion_reason: 'cost_limit',
      turns: 1,
      tool_calls_used: 1,
      tokens_used: 3000,
      price,
      cost_usd: 0.014,
      bound,
    });
  });
});
