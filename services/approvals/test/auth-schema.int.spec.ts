/**
 * Every service migrates libs/auth's `auth` schema at start, not only policy: on a fresh database where policy never
 * ran, an API key nobody issued is refused as unauthenticated (401 over HTTP, `unauthenticated` over NATS), not as a
 * database error; and services starting at once on that fresh database all come up.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { sql } from 'kysely';
import type { NatsConnection } from '@nats-io/transport-node';
import { newApiKey } from '@ormuz/auth';
import { CONTEXTS, type ContextName } from '@ormuz/contracts';
import { connectNats, streamName } from '@ormuz/event-log';
import { callRpc, startService, waitUntilServing, type RunningService } from '@ormuz/service-kit';
import { createTestDatabase, randomNamespace, testEnv, type TestDatabase } from '@ormuz/testing';
// Tests may start another service in-process; service source never imports one.
// eslint-disable-next-line @nx/enforce-module-boundaries
import {
  loadModelLoopConfig,
  MODEL_LOOP_SCHEMA,
  MODEL_LOOP_STREAMS,
  modelLoopMigrations,
  ModelLoopModule,
} from '../../model-loop/src/index.js';
import {
  APPROVALS_SCHEMA,
  APPROVALS_STREAMS,
  approvalsMigrations,
  ApprovalsModule,
  loadApprovalsConfig,
} from '../src/index.js';

describe('the auth schema on a database policy never opened', () => {
  const namespace = randomNamespace('authschema');
  let db: TestDatabase;
  let nc: NatsConnection;
  const running: RunningService[] = [];
  let approvals: RunningService;

  beforeAll(async () => {
    db = await createTestDatabase();
    nc = await connectNats({ url: testEnv().natsUrl, name: 'auth-schema-test' });
    const env = {
      NATS_URL: testEnv().natsUrl,
      DATABASE_URL: db.url,
      ORMUZ_NAMESPACE: namespace,
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    };
    const approvalsConfig = loadApprovalsConfig(env);
    const modelLoopConfig = loadModelLoopConfig(env);
    // At once, on a fresh database: both claim it, both migrate their schema and `auth`.
    const started = await Promise.allSettled([
      startService({
        service: 'approvals',
        config: approvalsConfig,
        streams: APPROVALS_STREAMS,
        schema: APPROVALS_SCHEMA,
        migrations: approvalsMigrations,
        module: (infra) => ApprovalsModule.with(infra, approvalsConfig),
        httpPort: 0,
      }),
      startService({
        service: 'model-loop',
        config: modelLoopConfig,
        streams: MODEL_LOOP_STREAMS,
        schema: MODEL_LOOP_SCHEMA,
        migrations: modelLoopMigrations,
        module: (infra) => ModelLoopModule.with(infra, modelLoopConfig),
      }),
    ]);
    for (const s of started) if (s.status === 'fulfilled') running.push(s.value);
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    approvals = running[0]!;
    await waitUntilServing(nc, namespace, 'model-loop');
  }, 60_000);

  afterAll(async () => {
    for (const svc of running.reverse()) await svc.close();
    const jsm = nc && (await jetstreamManager(nc));
    for (const context of Object.keys(CONTEXTS) as ContextName[]) {
      await jsm?.streams.delete(streamName(namespace, context)).catch(() => false);
    }
    await nc?.close();
    await db?.drop();
  });

  it('both services started concurrently, and the auth schema is migrated once', async () => {
    expect(running).toHaveLength(2);
    const { rows } = await sql<{ name: string }>`select name from auth.kysely_migration order by name`.execute(
      approvals.infra.db,
    );
    expect(rows.map((r) => r.name)).toEqual(['0001_api_keys']);
  });

  it('refuses an API key nobody issued with 401 over HTTP', async () => {
    const res = await fetch(`${approvals.httpUrl}/v1/whoami`, {
      headers: { authorization: `Bearer ${newApiKey().key}` },
    });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'unauthenticated',
      message: expect.stringContaining('is not known'),
    });
  });

  it('refuses it as unauthenticated over NATS, on a service that is not the HTTP edge', async () => {
    await expect(
      callRpc(
        nc,
        namespace,
        'model-loop.get',
        { tenant: 'acme', conversation_id: 'conv-1' },
        {
          credential: { bearer: newApiKey().key },
        },
      ),
    ).rejects.toMatchObject({ code: 'unauthenticated' });
  });
});
