/**
 * Two platforms with different namespaces on one Postgres server: the second can never open the first one's
 * database (it is refused at boot, before any migration or row), and on NATS neither reaches the other's services.
 */
import { Module } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import { streamName } from '@ormuz/event-log';
import { NamespaceMismatchError, openDatabase } from '@ormuz/postgres';
import { createTestDatabase, randomNamespace, testEnv, type TestDatabase } from '@ormuz/testing';
import { callService, defaultDatabaseUrl, loadBaseConfig, startService, type RunningService } from '../src/index.js';

@Module({})
class ProbeModule {}

const SCHEMA = 'probe';
const migrations = {
  '0001_secrets': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('secrets')
        .addColumn('owner', 'text', (c) => c.notNull())
        .execute();
    },
  },
};

describe('namespace isolation at boot', () => {
  let database: TestDatabase;
  const running: RunningService[] = [];
  const alpha = randomNamespace('a');
  const beta = randomNamespace('b');

  const start = (namespace: string, databaseUrl: string) =>
    startService({
      service: 'probe',
      config: loadBaseConfig({
        NATS_URL: testEnv().natsUrl,
        DATABASE_URL: databaseUrl,
        ORMUZ_NAMESPACE: namespace,
        LOG_LEVEL: 'silent',
      }),
      streams: ['calls'],
      schema: SCHEMA,
      migrations,
      module: () => ({ module: ProbeModule }),
    }).then((svc) => {
      running.push(svc);
      return svc;
    });

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await running[0]?.infra.jsm.streams.delete(streamName(alpha, 'calls')).catch(() => undefined);
    for (const svc of running) await svc.close();
    await database?.drop();
  });

  it("refuses a second namespace on the first one's database, naming both and the fix, and creates nothing", async () => {
    const first = await start(alpha, database.url);
    await sql`insert into probe.secrets (owner) values (${alpha})`.execute(first.infra.db);

    const err = await start(beta, database.url).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NamespaceMismatchError);
    expect((err as Error).message).toContain(`belongs to namespace ${alpha}, not ${beta}`);
    expect((err as Error).message).toContain(`ORMUZ_NAMESPACE=${alpha}`);

    // Nothing of beta reached NATS or the database: no stream, one row (alpha's), and alpha still the owner.
    await expect(first.infra.jsm.streams.info(streamName(beta, 'calls'))).rejects.toThrow();
    const db = await openDatabase<unknown>({ url: database.url, max: 1 });
    try {
      const { rows } = await sql<{ owner: string }>`select owner from probe.secrets`.execute(db);
      expect(rows).toEqual([{ owner: alpha }]);
      const ns = await sql<{ namespace: string }>`select namespace from ormuz_platform.namespace`.execute(db);
      expect(ns.rows).toEqual([{ namespace: alpha }]);
    } finally {
      await db.destroy();
    }
  });

  it('keeps NATS commands apart: a service answers in its own namespace only', async () => {
    const [svc] = running;
    if (!svc) throw new Error('the first test did not start alpha');
    await expect(callService(svc.infra.nc, alpha, 'probe', 'health', {}, 2000)).resolves.toMatchObject({
      service: 'probe',
    });
    await expect(callService(svc.infra.nc, beta, 'probe', 'health', {}, 500)).rejects.toThrow();
  });

  it('gives every namespace a database of its own when DATABASE_URL is unset', () => {
    const a = loadBaseConfig({ ORMUZ_NAMESPACE: alpha });
    const b = loadBaseConfig({ ORMUZ_NAMESPACE: beta });
    expect(a.databaseUrl).toBe(defaultDatabaseUrl(alpha));
    expect(new URL(a.databaseUrl).pathname).toBe(`/${alpha}`);
    expect(new URL(b.databaseUrl).pathname).toBe(`/${beta}`);
    expect([a.createDatabase, b.createDatabase]).toEqual([true, true]);
    expect(loadBaseConfig({ DATABASE_URL: database.url }).createDatabase).toBe(false);
  });
});
