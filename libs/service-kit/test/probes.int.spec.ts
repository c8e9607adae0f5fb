/**
 * The probes' HTTP listener against the real dependencies: ready when NATS, the streams, Postgres and the consumers of
 * the log all are; not ready (503, naming the failed check) while Postgres is unreachable, while a projection lags
 * past the bound or is stopped, or when a stream is gone; alive throughout.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { Module } from '@nestjs/common';
import {
  aggregateSubject,
  contextFilter,
  envelope,
  hasSchema,
  registerSchema,
  type ReadinessV1,
} from '@ormuz/contracts';
import { projectionBookkeepingMigration, ProjectionRunner, streamName, type Projection } from '@ormuz/event-log';
import { createTestDatabase, freePort, randomNamespace, testEnv, waitFor, type TestDatabase } from '@ormuz/testing';
import { loadBaseConfig, startService, type RunningService } from '../src/index.js';

@Module({})
class ProbedModule {}

const NOTED = 'ormuz.test.probed.v1';
if (!hasSchema(NOTED)) {
  registerSchema(NOTED, {
    type: 'object',
    additionalProperties: false,
    required: ['n'],
    properties: { n: { type: 'integer' } },
  });
}

/**
 * A TCP relay in front of the test Postgres that the test can cut, after which its port refuses connections (a
 * database that went away), and restore on the same port.
 */
class PostgresRelay {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();

  private constructor(
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  static async start(target: { host: string; port: number }): Promise<PostgresRelay> {
    const relay = new PostgresRelay(await freePort(), target);
    await relay.restore();
    return relay;
  }

  restore(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.target.port, this.target.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      const end = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('close', end);
      upstream.on('close', end);
    });
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
  }

  cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }
}

describe('HTTP probes (HEALTH_PORT)', () => {
  const ns = randomNamespace('probe');
  const stream = streamName(ns, 'calls');
  const SCHEMA = 'probed';
  const MAX_LAG = 5;
  let database: TestDatabase;
  let relay: PostgresRelay;
  let svc: RunningService;
  let runner: ProjectionRunner;
  /** While closed, the projection's apply waits: its lag grows with every event appended. */
  let gate: { promise: Promise<void>; open: () => void };
  const closedGate = () => {
    let open!: () => void;
    const promise = new Promise<void>((resolve) => (open = resolve));
    return { promise, open };
  };

  const projection: Projection = {
    name: 'probed_seen',
    schema: SCHEMA,
    stream,
    filterSubject: contextFilter(ns, 'calls'),
    async apply() {
      await gate.promise;
    },
    async reset() {},
  };

  const get = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${svc.healthUrl}${path}`, init);
    return { status: res.status, body: (await res.json()) as ReadinessV1 & Record<string, unknown> };
  };
  const readiness = () => get('/readyz');
  const ORIGIN = { source: '/test', tenant: 'acme', correlationid: 'c', causationid: 'c' };
  const appendEvents = async (count: number, prefix: string) => {
    for (let i = 0; i < count; i++) {
      const id = `${prefix}${i}`;
      const subject = aggregateSubject(ns, 'calls', 'acme', id);
      const event = envelope({ type: NOTED, data: { n: i } }, { ...ORIGIN, subject: id, time: new Date() });
      await svc.infra.store.append(subject, [event], 0);
    }
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    const pg = new URL(database.url);
    relay = await PostgresRelay.start({ host: pg.hostname, port: Number(pg.port || 5432) });
    const relayed = new URL(database.url);
    relayed.hostname = '127.0.0.1';
    relayed.port = String(relay.port);
    svc = await startService({
      service: 'probed',
      config: loadBaseConfig({
        NATS_URL: testEnv().natsUrl,
        DATABASE_URL: relayed.toString(),
        ORMUZ_NAMESPACE: ns,
        LOG_LEVEL: 'silent',
        HEALTH_PORT: '0',
        HEALTH_MAX_LAG: String(MAX_LAG),
        HEALTH_CHECK_TIMEOUT_MS: '1500',
      }),
      streams: ['calls'],
      schema: SCHEMA,
      migrations: { '0001_bookkeeping': projectionBookkeepingMigration },
      module: () => ({ module: ProbedModule }),
    });
    gate = { promise: Promise.resolve(), open: () => undefined };
    runner = new ProjectionRunner(svc.infra.js, svc.infra.jsm, svc.infra.db, projection, { batchSize: 1 });
    svc.infra.consumers.add(runner);
    await runner.start();
  });
  afterAll(async () => {
    gate?.open();
    await runner?.stop();
    await svc?.infra.jsm.streams.delete(stream).catch(() => undefined);
    await svc?.close();
    await relay?.cut();
    await database?.drop();
  });

  it('is ready when NATS, its streams, Postgres and its consumers all are, and reports each check', async () => {
    const { status, body } = await waitFor(
      async () => {
        const r = await readiness();
        return r.status === 200 && r;
      },
      { message: 'the service to be ready' },
    );
    expect(status).toBe(200);
    expect(body).toEqual({
      service: 'probed',
      ready: true,
      failed: [],
      checks: [
        { name: 'nats', ok: true },
        { name: 'streams', ok: true },
        { name: 'postgres', ok: true },
        { name: 'consumers', ok: true, consumers: [{ name: 'probed_seen', running: true, lag: 0 }] },
      ],
    });
    expect(svc.infra.endpoints.health).toBe(svc.healthUrl);
  });

  it('is alive with the process', async () => {
    expect(await get('/livez')).toEqual({ status: 200, body: { service: 'probed', alive: true, pid: process.pid } });
  });

  it('answers what it does not serve with a clear error', async () => {
    const missing = await get('/health');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe('/health is not served here: probes are GET /livez and GET /readyz, metrics GET /metrics');
    const posted = await get('/readyz', { method: 'POST', body: '{}' });
    expect(posted.status).toBe(405);
    expect(posted.body.error).toMatch(/^POST is not served here/);
  });

  it('is not ready while a projection lags past the bound, names it, and is ready again once it catches up', async () => {
    gate = closedGate();
    await appendEvents(MAX_LAG + 4, 'lag');
    const lagging = await waitFor(
      async () => {
        const r = await readiness();
        return r.status === 503 && r;
      },
      { message: 'readiness to fail on the lagging projection' },
    );
    expect(lagging.body.ready).toBe(false);
    expect(lagging.body.failed).toEqual(['consumers']);
    const consumers = lagging.body.checks.find((c) => c.name === 'consumers');
    expect(consumers?.error).toMatch(new RegExp(`^probed_seen lags \\d+ messages \\(bound ${MAX_LAG}\\)$`));
    expect((await get('/livez')).status).toBe(200);

    gate.open();
    await waitFor(async () => (await readiness()).status === 200, {
      message: 'readiness once the projection caught up',
    });
    await waitFor(async () => (await svc.infra.consumers.status())[0]?.lag === 0, {
      message: 'the projection to apply every event',
    });
  });

  it('is not ready while a projection is stopped, and ready again once it runs', async () => {
    await runner.stop();
    const stopped = await readiness();
    expect(stopped.status).toBe(503);
    expect(stopped.body.failed).toEqual(['consumers']);
    expect(stopped.body.checks.find((c) => c.name === 'consumers')).toMatchObject({
      ok: false,
      error: 'probed_seen is stopped',
      consumers: [{ name: 'probed_seen', running: false }],
    });
    expect((await get('/livez')).status).toBe(200);
    await runner.start();
    await waitFor(async () => (await readiness()).status === 200, { message: 'readiness once the projection runs' });
  });

  it('is not ready while Postgres is unreachable, says so, stays alive, and is ready again when it returns', async () => {
    await relay.cut();
    const down = await waitFor(
      async () => {
        const r = await readiness();
        return r.status === 503 && r.body.failed.includes('postgres') && r;
      },
      { message: 'readiness to fail on the unreachable database' },
    );
    const check = down.body.checks.find((c) => c.name === 'postgres');
    expect(check?.ok).toBe(false);
    expect(check?.error).toEqual(expect.any(String));
    expect(check?.error).not.toBe('');
    expect(down.body.checks.find((c) => c.name === 'nats')).toEqual({ name: 'nats', ok: true });
    expect(await get('/livez')).toMatchObject({ status: 200, body: { alive: true } });

    await relay.restore();
    await waitFor(async () => (await readiness()).status === 200, {
      message: 'readiness once the database answers again',
      timeoutMs: 30_000,
    });
  });

  it('refuses to start when the probes port is taken, naming HEALTH_PORT', async () => {
    const port = Number(new URL(svc.healthUrl!).port);
    await expect(
      startService({
        service: 'probed',
        config: loadBaseConfig({
          NATS_URL: testEnv().natsUrl,
          DATABASE_URL: database.url,
          ORMUZ_NAMESPACE: ns,
          LOG_LEVEL: 'silent',
          HEALTH_PORT: String(port),
        }),
        streams: ['calls'],
        schema: SCHEMA,
        migrations: { '0001_bookkeeping': projectionBookkeepingMigration },
        module: () => ({ module: ProbedModule }),
      }),
    ).rejects.toThrow(`the probes cannot listen on 127.0.0.1:${port} (HEALTH_PORT)`);
  });

  it('is not ready when one of its streams is gone, naming it', async () => {
    await runner.stop();
    await svc.infra.jsm.streams.delete(stream);
    const gone = await readiness();
    expect(gone.status).toBe(503);
    expect(gone.body.checks.find((c) => c.name === 'streams')).toEqual({
      name: 'streams',
      ok: false,
      error: `missing stream: ${stream}`,
    });
    expect((await get('/livez')).status).toBe(200);
  });
});
