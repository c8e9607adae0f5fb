/**
 * Every service, as the manifests and compose run it (`node services/<name>/dist/main.js` with HEALTH_PORT set), serves
 * its probes: /livez 200, /readyz 200 with its own consumers of the log, its Prometheus metrics on /metrics (which the
 * Grafana dashboard, infra/grafana/ormuz-dashboard.json, names and no others), the container healthcheck
 * (infra/healthcheck.mjs) passes against it, and the probes stop answering once SIGTERM has closed the service.
 * Runs the compiled services: `npm run build` first.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { CONTEXTS, type ContextName, type ReadinessV1 } from '@ormuz/contracts';
import { connectNats, streamName } from '@ormuz/event-log';
import {
  createTestDatabase,
  freePort,
  randomNamespace,
  scrapeMetrics,
  testEnv,
  waitFor,
  type Scrape,
  type TestDatabase,
} from '@ormuz/testing';
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

  it('serves its metrics on /metrics, each named ormuz_, and the Grafana dashboard draws them and names no other', async () => {
    const declared = new Map<string, string>();
    const scrapes: Record<string, Scrape> = {};
    for (const { name, port } of running) {
      const scrape = await scrapeMetrics(`http://127.0.0.1:${port}/metrics`);
      scrapes[name] = scrape;
      for (const [metric, type] of scrape.types) declared.set(metric, type);
      expect([...scrape.types.keys()].filter((m) => !m.startsWith('ormuz_'))).toEqual([]);
      expect(scrape.types.get('ormuz_process_cpu_seconds_total')).toBe('counter');
      expect(scrape.samples.every((s) => s.labels.service === name)).toBe(true);
    }
    // Each service's own metrics, and the consumers' gauges wherever consumers run.
    expect(scrapes.policy!.types.get('ormuz_policy_calls_total')).toBe('counter');
    expect(scrapes.policy!.types.get('ormuz_policy_gate_seconds')).toBe('histogram');
    expect(scrapes['device-bridge']!.value('ormuz_bridge_connected_devices')).toBe(0);
    expect(scrapes['device-bridge']!.types.get('ormuz_bridge_call_seconds')).toBe('histogram');
    expect(scrapes.approvals!.value('ormuz_approvals_pending')).toBe(0);
    expect(scrapes['model-loop']!.types.get('ormuz_model_tokens_total')).toBe('counter');
    for (const name of ['policy', 'approvals', 'device-bridge', 'model-loop', 'audit']) {
      expect(scrapes[name]!.samples.some((s) => s.name === 'ormuz_consumer_lag_messages')).toBe(true);
    }

    const dashboard = JSON.parse(readFileSync(join(ROOT, 'infra', 'grafana', 'ormuz-dashboard.json'), 'utf8')) as {
      panels: { id: number; targets?: { expr: string }[] }[];
    };
    const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
    const named = new Set(exprs.flatMap((e) => e.match(/\bormuz_\w+/g) ?? []));
    // A histogram is queried through its series: name_bucket, name_sum, name_count.
    const metricOf = (series: string) => (declared.has(series) ? series : series.replace(/_(bucket|sum|count)$/, ''));
    expect([...named].filter((series) => !declared.has(metricOf(series)))).toEqual([]);
    const drawn = new Set([...named].map(metricOf));
    const ours = [...declared.keys()].filter((m) => !/^ormuz_(process|nodejs)_/.test(m));
    expect(ours.filter((m) => !drawn.has(m))).toEqual([]);
    expect(new Set(dashboard.panels.map((p) => p.id)).size).toBe(dashboard.panels.length);
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
