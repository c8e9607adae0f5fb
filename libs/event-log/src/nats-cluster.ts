/**
 * A JetStream cluster of a process's own: `nodes` nats-server processes on free loopback ports, routed to each other,
 * each with its own store, for tests and chaos runs that need what one server cannot show (replicated streams, the
 * loss and return of a server, leader elections). Beside {@link startNatsServer}, whose process handling it shares.
 *
 * A node can be killed (SIGKILL: a crash, nothing flushed) and restarted on the same ports and the same store, as a
 * pod of the StatefulSet in infra/k8s comes back with its volume. Stores are temporary, removed on stop.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  clusterNatsServer,
  freePort,
  PortTakenError,
  spawnNatsServer,
  unheldPasswords,
  writeServerConfig,
  type NatsServerProcess,
} from './nats-server.js';

export interface NatsClusterOptions {
  /** Servers in the cluster. Default 3: the smallest that keeps a quorum when one is lost. */
  readonly nodes?: number;
  /** The cluster's name (`cluster { name }`). Default `ormuz`. */
  readonly name?: string;
  /** Configuration files every server includes (the shipped authorization), as for {@link startNatsServer}. */
  readonly include?: readonly string[];
  /** The servers' whole environment, as for {@link startNatsServer}. */
  readonly env?: Readonly<Record<string, string>>;
  /** The binary. Default: {@link clusterNatsServer} (a server without the replicas-3 sequence race, when fetched). */
  readonly binary?: string;
  /** How long the cluster may take to answer and elect its JetStream meta leader, in milliseconds. Default 30 000. */
  readonly timeoutMs?: number;
}

/** One server of a {@link NatsClusterHandle}. */
export interface NatsClusterNode {
  /** Its `server_name` (`n1`, `n2`, …): what JetStream names leaders and replicas by. */
  readonly name: string;
  /** `nats://127.0.0.1:<port>`, its client port. */
  readonly url: string;
  readonly port: number;
  /** Its route port (`cluster { listen }`). */
  readonly clusterPort: number;
  /** `http://127.0.0.1:<port>`: its monitoring endpoints (/healthz, /jsz, /varz). */
  readonly monitorUrl: string;
  /** Its JetStream store, kept across {@link kill} and {@link restart}. */
  readonly storeDir: string;
  /** True while its process runs. */
  running(): boolean;
  /** What it printed since it last started. */
  log(): string;
  /** Kills it with SIGKILL (nothing flushed, no goodbye to its routes) and resolves once it has exited. */
  kill(): Promise<void>;
  /**
   * Starts it again on the same ports and store, and resolves once it answers clients and reports JetStream current
   * (its /healthz: the meta leader known, every stream and consumer it holds caught up).
   */
  restart(): Promise<void>;
}

export interface NatsClusterHandle {
  /** Every node's client URL, comma separated: what `connectNats` and `NATS_URL` take. */
  readonly url: string;
  readonly nodes: readonly NatsClusterNode[];
  /** The node named `name`; throws for an unknown name. */
  node(name: string): NatsClusterNode;
  /** The server name of the JetStream meta leader as a running node sees it, or undefined while there is none. */
  metaLeader(): Promise<string | undefined>;
  /** Resolves once every running node reports JetStream healthy under one meta leader. */
  waitUntilHealthy(timeoutMs?: number): Promise<void>;
  /** Stops every node (SIGTERM) and removes the stores. Safe to call twice. */
  stop(): Promise<void>;
}

/** Attempts when a chosen port was taken by another process before a server bound it. */
const PORT_ATTEMPTS = 3;

/**
 * Starts the cluster and resolves once every node answers and JetStream has a meta leader, so that streams at
 * `nodes` replicas can be created at once. Throws with the servers' output when it does not come up.
 */
export async function startNatsCluster(opts: NatsClusterOptions = {}): Promise<NatsClusterHandle> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(opts);
    } catch (err) {
      if (!(err instanceof PortTakenError) || attempt >= PORT_ATTEMPTS) throw err;
    }
  }
}

interface NodePorts {
  readonly name: string;
  readonly port: number;
  readonly clusterPort: number;
  readonly monitorPort: number;
}

async function startOnce(opts: NatsClusterOptions): Promise<NatsClusterHandle> {
  const binary = opts.binary ?? clusterNatsServer();
  const count = opts.nodes ?? 3;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const env = { ...unheldPasswords(opts.include ?? []), ...opts.env };
  const ports: NodePorts[] = [];
  for (let i = 1; i <= count; i++) {
    ports.push({ name: `n${i}`, port: await freePort(), clusterPort: await freePort(), monitorPort: await freePort() });
  }
  const routes = ports.map((p) => `nats://127.0.0.1:${p.clusterPort}`);
  const root = mkdtempSync(join(tmpdir(), 'ormuz-nats-cluster-'));
  const nodes = ports.map((p) => clusterNode(binary, root, p, routes, opts, env, timeoutMs));

  let stopping: Promise<void> | undefined;
  const handle: NatsClusterHandle = {
    url: nodes.map((n) => n.url).join(','),
    nodes,
    node(name) {
      const found = nodes.find((n) => n.name === name);
      if (!found) throw new Error(`No node ${name} in the cluster (${nodes.map((n) => n.name).join(', ')}).`);
      return found;
    },
    metaLeader: () => metaLeader(nodes),
    waitUntilHealthy: (ms = timeoutMs) => waitUntilHealthy(nodes, ms),
    stop: () =>
      (stopping ??= (async () => {
        await Promise.all(nodes.map((n) => n.stop()));
        rmSync(root, { recursive: true, force: true });
      })()),
  };
  try {
    // All at once: a server waits for its routes, so starting them one after another would stall.
    await Promise.all(nodes.map((n) => n.start()));
    await handle.waitUntilHealthy();
  } catch (err) {
    await handle.stop();
    throw err;
  }
  return handle;
}

function clusterNode(
  binary: string,
  root: string,
  p: NodePorts,
  routes: readonly string[],
  opts: NatsClusterOptions,
  env: Readonly<Record<string, string>>,
  timeoutMs: number,
): NatsClusterNode & { start(): Promise<void>; stop(): Promise<void> } {
  const dir = join(root, p.name);
  const storeDir = join(dir, 'jetstream');
  mkdirSync(dir, { recursive: true });
  const config = writeServerConfig(
    dir,
    [
      '# Generated by @ormuz/event-log startNatsCluster.',
      `server_name: ${p.name}`,
      `listen: ${JSON.stringify(`127.0.0.1:${p.port}`)}`,
      `http: ${JSON.stringify(`127.0.0.1:${p.monitorPort}`)}`,
      `jetstream { store_dir: ${JSON.stringify(storeDir)} }`,
      'cluster {',
      `  name: ${JSON.stringify(opts.name ?? 'ormuz')}`,
      `  listen: ${JSON.stringify(`127.0.0.1:${p.clusterPort}`)}`,
      `  routes: [ ${routes.map((r) => JSON.stringify(r)).join(', ')} ]`,
      '}',
    ],
    opts.include ?? [],
  );
  let server: NatsServerProcess | undefined;
  const monitorUrl = `http://127.0.0.1:${p.monitorPort}`;
  const start = async () => {
    server = spawnNatsServer(binary, config, { env });
    await server.answered(p.port, timeoutMs);
  };
  const node = {
    name: p.name,
    url: `nats://127.0.0.1:${p.port}`,
    port: p.port,
    clusterPort: p.clusterPort,
    monitorUrl,
    storeDir,
    running: () => server !== undefined && !server.exited(),
    log: () => server?.log() ?? '',
    start,
    kill: async () => {
      await server?.terminate('SIGKILL');
    },
    stop: async () => {
      await server?.terminate();
    },
    restart: async () => {
      if (node.running()) throw new Error(`Node ${p.name} is running: kill it first.`);
      await start();
      await waitUntilHealthy([node], timeoutMs);
    },
  };
  return node;
}

/** What a node's /jsz says of the meta group. */
interface Jsz {
  readonly meta_cluster?: { readonly leader?: string };
}

async function monitorJson<T>(node: NatsClusterNode, path: string): Promise<{ status: number; body: T } | undefined> {
  try {
    const res = await fetch(new URL(path, node.monitorUrl), { signal: AbortSignal.timeout(2000) });
    return { status: res.status, body: (await res.json()) as T };
  } catch {
    return undefined;
  }
}

async function metaLeader(nodes: readonly NatsClusterNode[]): Promise<string | undefined> {
  for (const node of nodes.filter((n) => n.running())) {
    const leader = (await monitorJson<Jsz>(node, '/jsz'))?.body.meta_cluster?.leader;
    if (leader) return leader;
  }
  return undefined;
}

/** Polls each running node's /healthz (200 once JetStream is current on it) and /jsz until all name one leader. */
async function waitUntilHealthy(nodes: readonly NatsClusterNode[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    const running = nodes.filter((n) => n.running());
    const states = await Promise.all(
      running.map(async (n) => {
        const health = await monitorJson<{ status?: string; error?: string }>(n, '/healthz');
        const leader = (await monitorJson<Jsz>(n, '/jsz'))?.body.meta_cluster?.leader;
        return { name: n.name, healthy: health?.status === 200, error: health?.body.error, leader };
      }),
    );
    const leaders = new Set(states.map((s) => s.leader));
    if (states.every((s) => s.healthy && s.leader) && leaders.size === 1) return;
    last = states
      .map((s) => `${s.name}: ${s.healthy ? 'healthy' : (s.error ?? 'no answer')}, leader ${s.leader ?? 'none'}`)
      .join('; ');
    if (Date.now() > deadline) {
      const logs = running.map((n) => `--- ${n.name}\n${n.log().trim().split('\n').slice(-15).join('\n')}`).join('\n');
      throw new Error(`The NATS cluster was not healthy within ${timeoutMs} ms (${last}).\n${logs}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
