/**
 * docker-compose.yml, checked offline (no Docker engine is needed): Docker Compose itself reads it (`docker compose
 * config`, the binary tools/fetch-docker-compose.sh fetches), and it runs NATS as a three-server JetStream cluster
 * whose routes name every server, on NATS >= 2.11 syncing every write, and every Ormuz container knows all three
 * servers, waits for them, and declares its streams at three replicas.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ROOT } from './support/processes.js';

interface ComposeService {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
}

const NATS_NODES = ['nats-1', 'nats-2', 'nats-3'];

describe('docker-compose.yml', () => {
  const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
    services: Record<string, ComposeService>;
    volumes: Record<string, unknown>;
  };
  const conf = readFileSync(join(ROOT, 'infra', 'nats', 'nats-server.conf'), 'utf8');
  const services = compose.services;

  it('runs three NATS >= 2.11 servers, each named and stored apart, healthy only once in the cluster', () => {
    const nats = Object.keys(services).filter((name) => services[name]!.image?.startsWith('nats:'));
    expect(nats.sort()).toEqual(NATS_NODES);
    const stores = new Set<string>();
    for (const name of NATS_NODES) {
      const node = services[name]!;
      const [, major, minor] = /^nats:(\d+)\.(\d+)\.\d+/.exec(node.image!) ?? [];
      expect(Number(major) * 100 + Number(minor)).toBeGreaterThanOrEqual(211);
      expect(node.command).toEqual(['nats-server', '--config', '/etc/nats/nats-server.conf']);
      expect(node.environment?.NATS_SERVER_NAME).toBe(name);
      expect(node.environment?.NATS_CLI_PASSWORD).toBeDefined();
      expect(node.volumes).toContain('./infra/nats/nats-server.conf:/etc/nats/nats-server.conf:ro');
      const store = node.volumes!.find((v) => v.endsWith(':/data'))!.split(':')[0]!;
      expect(compose.volumes).toHaveProperty(store);
      stores.add(store);
      // Plain /healthz: 200 only once the server sees a JetStream meta leader and is current, not merely JS enabled.
      expect(node.healthcheck?.test.join(' ')).toMatch(/\/healthz$/);
    }
    expect(stores.size).toBe(3);
  });

  it('routes every server to all three, names each from its environment and syncs every write', () => {
    expect(conf).toMatch(/^server_name: \$NATS_SERVER_NAME$/m);
    expect(conf).toMatch(/^\s*sync_interval: always$/m);
    const cluster = /^cluster \{([\s\S]*?)^\}/m.exec(conf)?.[1] ?? '';
    expect(cluster).toMatch(/^\s*listen: 0\.0\.0\.0:6222$/m);
    const routes = [...cluster.matchAll(/nats:\/\/([a-z0-9-]+):6222/g)].map((m) => m[1]);
    expect(routes).toEqual(NATS_NODES);
  });

  it('gives every Ormuz container all three servers and streams at three replicas, after the cluster is healthy', () => {
    const ormuz = Object.entries(services).filter(([, s]) => s.image === 'ormuz:local');
    expect(ormuz.map(([name]) => name)).toContain('migrate');
    for (const [name, service] of ormuz) {
      const env = service.environment ?? {};
      expect({ name, urls: env.NATS_URL?.split(',') }).toEqual({
        name,
        urls: NATS_NODES.map((n) => `nats://${n}:4222`),
      });
      expect({ name, replicas: env.ORMUZ_STREAM_REPLICAS }).toEqual({ name, replicas: String(NATS_NODES.length) });
      for (const node of NATS_NODES) {
        expect({ name, node, condition: service.depends_on?.[node]?.condition }).toEqual({
          name,
          node,
          condition: 'service_healthy',
        });
      }
    }
  });

  describe('as Docker Compose reads it (`docker compose config`)', () => {
    const USERS = ['POLICY', 'APPROVALS', 'DEVICE_BRIDGE', 'MODEL_LOOP', 'AUDIT', 'MCP_GATEWAY', 'CLI'];
    const passwords = Object.fromEntries(
      USERS.map((u) => [`NATS_${u}_PASSWORD`, `p${u.toLowerCase().replace('_', '')}1`]),
    );
    let compose: string;

    beforeAll(() => {
      // Prints the binary's path; fetches it from Debian trixie the first time (.ci/run fetches it before the tests).
      compose = execFileSync('bash', [join(ROOT, 'tools', 'fetch-docker-compose.sh')], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
        timeout: 120_000,
      }).trim();
    });

    function config(env: Record<string, string>): ReturnType<typeof spawnSync> & { stdout: string; stderr: string } {
      return spawnSync(
        compose,
        ['--project-directory', ROOT, '-f', 'docker-compose.yml', 'config', '--format', 'json'],
        {
          cwd: ROOT,
          // Only what is given: nothing of the caller's environment may stand in for a password.
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', ...env },
          encoding: 'utf8',
          timeout: 60_000,
        },
      ) as ReturnType<typeof spawnSync> & { stdout: string; stderr: string };
    }

    it('is valid, gives each service its own NATS user and password, and runs two replicas where no host port is bound', () => {
      const r = config(passwords);
      expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
      const model = JSON.parse(r.stdout) as {
        services: Record<string, ComposeService & { deploy?: { replicas?: number }; ports?: unknown[] }>;
      };
      expect(Object.keys(model.services).sort()).toEqual(Object.keys(services).sort());
      for (const [name, service] of Object.entries(model.services)) {
        if (service.image !== 'ormuz:local') continue;
        const user = service.environment?.NATS_USER;
        if (name === 'migrate') {
          // Runs each service's migrations as that service's NATS user.
          expect(service.environment).toEqual(expect.objectContaining(passwords));
          continue;
        }
        expect({ name, user }).toEqual({ name, user: expect.any(String) });
        const variable = `NATS_${user!.toUpperCase().replace('-', '_')}_PASSWORD`;
        expect({ name, password: service.environment?.NATS_PASSWORD }).toEqual({ name, password: passwords[variable] });
        const replicas = service.deploy?.replicas ?? 1;
        if (replicas > 1) expect({ name, ports: service.ports }).toEqual({ name, ports: undefined });
      }
      const scaled = Object.entries(model.services).filter(([, s]) => (s.deploy?.replicas ?? 1) === 2);
      expect(scaled.map(([name]) => name).sort()).toEqual(['audit', 'model-loop', 'policy']);
    });

    it('refuses to render without the NATS passwords, naming the variable and where to set it', () => {
      const { NATS_AUDIT_PASSWORD: _, ...withoutOne } = passwords;
      const r = config(withoutOne);
      expect(r.status).not.toBe(0);
      expect(r.stderr).toMatch(/NATS_AUDIT_PASSWORD.*set the NATS passwords in \.env, see infra\/README\.md/);
    });
  });
});
