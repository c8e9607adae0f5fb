/**
 * kill -9 of model-loop while conversations run: its conversation view and its three reactors (call outcomes, the
 * conversation driver, core tools) resume from their checkpoints. Conversations are started (again with the same
 * conversation id when model-loop was down), model-loop is killed while the agents work and again while the owner's
 * approvals flow back; every conversation completes, every tool call was requested once and ran once, and the
 * conversation view equals a rebuild from sequence 1.
 */
import { jest } from '@jest/globals';
import { jetstream } from '@nats-io/jetstream';
import { sql } from 'kysely';
import type { ConversationViewV1, StartConversationRequestV1 } from '@ormuz/contracts';
import { ProjectionRunner } from '@ormuz/event-log';
import { migrateSchema, openDatabase } from '@ormuz/postgres';
import { createTestDatabase, waitFor } from '@ormuz/testing';
import { modelLoopMigrations, MODEL_LOOP_SCHEMA } from '../../services/model-loop/src/persistence/migrations.js';
import { conversationViewProjection } from '../../services/model-loop/src/projections/conversation-view.projection.js';
import { dumpReadModels } from '../crash/support/crash-trial.js';
import { startPlatform, type Platform } from './support/platform.js';

jest.setTimeout(240_000);

const CONVERSATIONS = 16;

describe('kill -9 of model-loop while conversations run', () => {
  let platform: Platform;

  beforeAll(async () => {
    platform = await startPlatform({ devices: ['phone-1', 'phone-2'] });
  }, 120_000);
  afterAll(() => platform?.close(), 60_000);

  it('completes every conversation once, and its view equals a rebuild from the log', async () => {
    const { tenant } = platform;
    const ids = Array.from({ length: CONVERSATIONS }, (_, i) => `conv-${i}`);
    const start = async (id: string, i: number) => {
      const body: StartConversationRequestV1 = {
        tenant,
        agent_id: 'demo-agent',
        task: 'Tell Alice I am running ten minutes late.',
        device_id: platform.devices[i % 2]!,
        model: 'scripted:demo',
        conversation_id: id,
      };
      // Asked again while model-loop is down (killed), every 100 ms; a start is idempotent by its conversation id.
      return waitFor(() => platform.call('model-loop.start', body), {
        timeoutMs: 90_000,
        intervalMs: 100,
        message: `conversation ${id} started`,
      });
    };
    const view = (id: string) =>
      platform.call('model-loop.get', { tenant, conversation_id: id }, 3000).catch(() => undefined);

    // Killed while the conversations start and the agents ask for their tools.
    const starting = Promise.all(ids.map(start));
    await platform.kill9('model-loop');
    await platform.start('model-loop');
    await starting;

    // Every conversation pauses on its staged send_message; the owner approves each.
    const paused = await waitFor(
      async () => {
        const views = await Promise.all(ids.map(view));
        return views.every((v) => v && v.status === 'paused' && v.pending.length === 1)
          ? (views as ConversationViewV1[])
          : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 250, message: `all ${CONVERSATIONS} conversations paused for approval` },
    );
    for (const v of paused) {
      await platform.call('approvals.approve', {
        tenant,
        approval_id: v.pending[0]!.approval_id,
      });
    }
    // Killed again while the outcomes of the approved calls flow back into the conversations.
    await platform.kill9('model-loop');
    await platform.start('model-loop');
    await waitFor(async () => (await Promise.all(ids.map(view))).every((v) => v?.status === 'completed'), {
      timeoutMs: 90_000,
      intervalMs: 250,
      message: `all ${CONVERSATIONS} conversations completed`,
    });

    // Each conversation asked for each tool once, and each call ran once.
    const calls = await sql<{ tool: string; status: string; n: number }>`
      select tool, status, count(*)::int as n from policy.call_status group by tool, status order by tool`.execute(
      platform.db,
    );
    expect(calls.rows).toEqual([
      { tool: 'device.screen_observe', status: 'succeeded', n: CONVERSATIONS },
      { tool: 'device.send_message', status: 'succeeded', n: CONVERSATIONS },
    ]);
    const started = await sql<{
      n: number;
    }>`select count(*)::int as n from audit.events where type = 'ormuz.toolcall.started.v1'`.execute(platform.db);
    expect(started.rows[0]!.n).toBe(2 * CONVERSATIONS);

    // The conversation view equals a rebuild from sequence 1 in a fresh database.
    const fresh = await createTestDatabase();
    const freshDb = await openDatabase<any>({ url: fresh.url });
    try {
      await migrateSchema(freshDb, MODEL_LOOP_SCHEMA, modelLoopMigrations);
      const rebuild = new ProjectionRunner(
        jetstream(platform.nc),
        platform.jsm,
        freshDb,
        conversationViewProjection(platform.namespace),
      );
      await rebuild.start();
      await rebuild.catchUp(30_000);
      await rebuild.stop();
      const consumers = (await platform.ormuz('projections', 'status')).json as {
        services: { service: string; consumers: { name: string; lag: number; parked: number }[] }[];
      };
      const view = consumers.services
        .find((s) => s.service === 'model-loop')!
        .consumers.find((c) => c.name === 'model_loop_conversation_view')!;
      await waitFor(
        async () => {
          const r = (await platform.ormuz('projections', 'status')).json as typeof consumers;
          return r.services
            .find((s) => s.service === 'model-loop')!
            .consumers.every((c) => c.lag === 0 && c.parked === 0);
        },
        { timeoutMs: 30_000, message: 'model-loop caught up with nothing parked' },
      );
      expect(view.parked).toBe(0);
      const rebuilt = await dumpReadModels(freshDb, [MODEL_LOOP_SCHEMA]);
      const live = await dumpReadModels(platform.db, [MODEL_LOOP_SCHEMA]);
      for (const table of Object.keys(rebuilt))
        expect({ table, rows: live[table] }).toEqual({ table, rows: rebuilt[table] });
    } finally {
      await freshDb.destroy();
      await fresh.drop();
    }
  });
});
