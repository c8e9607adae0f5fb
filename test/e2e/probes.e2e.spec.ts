/**
 * Every service, as the manifests and compose run it (`node services/<name>/dist/main.js` with HEALTH_PORT set), serves
 * its probes: /livez 200, /readyz 200 with its own consumers of the log, the container healthcheck
 * (infra/healthcheck.mjs) passes against it, and the probes stop answering once SIGTERM has closed the service.
 * Runs the compiled services: `npm run build` first.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { CONTEXTS, type ContextName, type ReadinessV1 } from '@ormuz/contracts';
import { connectNats, streamName } from '@ormuz/event-log';
import { createTestDatabase, freePort, randomNamespace, testEnv, waitFor, type TestDatabase } from '@ormuz/testing';
import { exitWithin, killAll, ROOT, spawnTracked, type Tracked } from './support/processes.js';

/** Each service, and the consumers of the log its one process runs (with policy's two roles in one process). */
const SERVICES: Record<string, readonly string[] | 'some'> = {
  policy: 'some',
  approvals: 'some',
  'device-bridge': 'some',
  'model-loop': 'some',
  audit: 'some',
  'mcp-gateway': [],
};

describe('the probes of every service, started as a container starts it', () => {
  const namespace = randomNamespace('probes');
  let database: TestDatabase;
  const running: { name: string; proc: Tracked; port: number }[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    for (const name of Object.keys(SERVICES)) {
      const port = await freePort();
      const proc = spawnTracked(process.execPath, [join(ROOT, 'services', name, 'dist', 'main.js')], {
        NATS_URL: testEnv().natsUrl,
        DATABASE_URL: database.url,
        ORMUZ_NAMESPACE: namespace,
        LOG_LEVEL: 'warn',
        HEALTH_PORT: String(port),
        APPROVALS_PORT: '0',
        DEVICE_BRIDGE_PORT: '0',
        MCP_GATEWAY_PORT: '0',
      });
      running.push({ name, proc, port });
    }
  });
  afterAll(async () => {
    await killAll();
    const nc = await connectNats({ url: testEnv().natsUrl, name: 'probes-e2e-cleanup' });
    const jsm = await jetstreamManager(nc);
    for (const context of Object.keys(CONTEXTS) as ContextName[]) {
      await jsm.streams.delete(streamName(namespace, context)).catch(() => undefined);
    }
    await nc.close();
    await database?.drop();
  });

  it('answers /livez and /readyz on HEALTH_PORT for each service, ready with its own consumers', async () => {
    for (const { name, proc, port } of running) {
      const ready = await waitFor(
        async () => {
          if (proc.hasExited()) throw new Error(`${name} exited: ${proc.stderr()}`);
          const res = await fetch(`http://127.0.0.1:${port}/readyz`);
          return res.status === 200 && ((await res.json()) as ReadinessV1);
        },
        { timeoutMs: 90_000, message: `${name} to be ready on its probes` },
      );
      expect(ready).toMatchObject({ service: name, ready: true, failed: [] });
      expect(ready.checks.map((c) => c.name)).toEqual(['nats', 'streams', 'postgres', 'consumers']);
      const consumers = ready.checks.find((c) => c.name === 'consumers')?.consumers ?? [];
      if (SERVICES[name] === 'some') expect(consumers.length).toBeGreaterThan(0);
      else expect(consumers).toEqual(SERVICES[name]);
      for (const c of consumers) expect(c).toMatchObject({ running: true });

      const live = await fetch(`http://127.0.0.1:${port}/livez`);
      expect(live.status).toBe(200);
      expect(await live.json()).toEqual({ service: name, alive: true, pid: proc.pid });
    }
  });

  it('passes the container healthcheck (infra/healthcheck.mjs) over HTTP', () => {
    for (const { name, port } of running) {
      const r = spawnSync(process.execPath, [join(ROOT, 'infra', 'healthcheck.mjs'), name], {
        env: { ...process.env, HEALTH_PORT: String(port) },
        encoding: 'utf8',
      });
      expect({ name, status: r.status, stderr: r.stderr }).toEqual({ name, status: 0, stderr: '' });
    }
  });

  it('stops answering its probes once SIGTERM has closed it, and the healthcheck says so', async () => {
    const { name, proc, port } = running.find((r) => r.name === 'audit')!;
    proc.child.kill('SIGTERM');
    await exitWithin(proc, 20_000, `${name} to stop on SIGTERM`);
    await expect(fetch(`http://127.0.0.1:${port}/livez`)).rejects.toThrow();
    const r = spawnSync(process.execPath, [join(ROOT, 'infra', 'healthcheck.mjs'), name], {
      env: { ...process.env, HEALTH_PORT: String(port) },
      encoding: 'utf8',
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^audit is not healthy: /);
  });
});
