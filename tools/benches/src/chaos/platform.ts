/**
 * The platform a chaos run attacks: its own NATS JetStream cluster of three nodes (each with a kept store on fixed
 * ports, so a node can be killed with SIGKILL and started again where the services reconnect; the services' streams
 * at replicas 3) and the services as processes, some as several replicas. Each process is a {@link NemesisTarget}:
 * kill -9 it, start it again with the same environment; the cluster is one target too, one node down at a time.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { startNatsCluster, type NatsClusterHandle, type NatsClusterNode } from '@ormuz/event-log';
import type { NemesisTarget } from './nemesis.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

/** How many processes of each service run; a service absent here does not run. */
export type Replicas = Readonly<Record<string, number>>;

export interface PlatformOptions {
  readonly databaseUrl: string;
  readonly namespace: string;
  readonly replicas: Replicas;
  /** Service environment added to NATS_URL, DATABASE_URL and ORMUZ_NAMESPACE (device tokens, timeouts). */
  readonly env: Readonly<Record<string, string>>;
  /** Uniform in [0, 1): the run's seeded generator, which picks the NATS node each fault kills. */
  readonly random: () => number;
  readonly say: (line: string) => void;
}

/** Lines of a process's log shown when it failed to start: enough for its last `start: still waiting on …`. */
const LOG_TAIL_LINES = 12;

interface Running {
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
}

/** A service process the platform started; `kill()` is a SIGKILL, `restart()` starts it again until it serves. */
export class ServiceProcess implements NemesisTarget {
  /** Exits it made by itself (each followed by a start again, as an orchestrator would). */
  selfExits = 0;
  private running: Running | undefined;
  private starting: Promise<void> | undefined;
  private stopped = false;
  /**
   * Its ports, chosen at its first start and kept for every start after it has served (devices reconnect to the same
   * address). A port another process took between being chosen and being bound is chosen again before it first serves.
   */
  private ports: { readonly health: number; readonly devices?: number } | undefined;
  private served = false;

  constructor(
    readonly name: string,
    readonly service: string,
    /** 1 for the first process of its service, 2 for the second, … */
    readonly replica: number,
    private readonly env: NodeJS.ProcessEnv,
    private readonly logFile: string,
    private readonly say: (line: string) => void,
  ) {}

  /** The device-bridge's WebSocket endpoint, once it has started (`DEVICE_BRIDGE_PORT`). */
  get deviceUrl(): string | undefined {
    return this.ports?.devices === undefined ? undefined : `ws://127.0.0.1:${this.ports.devices}/v1/devices`;
  }

  /**
   * Starts the process and resolves once it serves (at most 5 attempts with backoff, as an orchestrator would). One
   * start at a time: the nemesis's mend may come while the process starts again after an exit of its own, and two
   * starts would each kill the other's process.
   */
  restart(): Promise<void> {
    this.starting ??= this.startWithRetries().finally(() => (this.starting = undefined));
    return this.starting;
  }

  private async startWithRetries(): Promise<void> {
    for (let attempt = 1; !this.stopped; attempt++) {
      try {
        return await this.startOnce();
      } catch (err) {
        const tail = this.logTail();
        if (!this.served && tail.includes('EADDRINUSE')) this.ports = undefined;
        if (attempt >= 5) throw new Error(`${(err as Error).message}; its log ends:\n${tail}`);
        this.say(`start ${attempt} of ${this.name} failed, again: ${(err as Error).message}; its log ends:\n${tail}`);
        // A start fails at once while NATS is down (the nemesis may have killed it too): back off, 1 s more each time.
        await new Promise((resolve) => setTimeout(resolve, attempt * 1000));
      }
    }
  }

  /** Kills it for good: no start again after this. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.kill();
  }

  async kill(): Promise<void> {
    const running = this.running;
    if (!running) return;
    running.child.kill('SIGKILL');
    await running.exited;
    this.running = undefined;
  }

  private async startOnce(): Promise<void> {
    await this.kill();
    // Its probes' port (`HEALTH_PORT`): `/livez` answers once the process serves.
    this.ports ??= {
      health: await freePort(),
      ...(this.service === 'device-bridge' ? { devices: await freePort() } : {}),
    };
    const ports = this.ports;
    const env = {
      ...this.env,
      HEALTH_PORT: String(ports.health),
      ...(ports.devices === undefined ? {} : { DEVICE_BRIDGE_PORT: String(ports.devices) }),
    };
    const log = openSync(this.logFile, 'a');
    const child = spawn(process.execPath, [join(ROOT, 'services', this.service, 'dist', 'main.js')], {
      env,
      stdio: ['ignore', log, log],
    });
    closeSync(log);
    let gone = false;
    let served = false;
    const exited = new Promise<void>((resolve) =>
      child.once('exit', (code, signal) => {
        gone = true;
        resolve();
        // An exit before it served is the start's failure, which the start's own attempts answer.
        if (signal === 'SIGKILL' || this.stopped || !served || this.running?.child !== child) return;
        this.selfExits++;
        const tail = readFileSync(this.logFile, 'utf8').trim().split('\n').slice(-2).join(' | ');
        this.say(`${this.name} exited by itself (code ${code}, signal ${signal}): starting it again; it said: ${tail}`);
        this.running = undefined;
        setTimeout(() => {
          if (!this.stopped && !this.running) this.restart().catch((err) => this.say(`${this.name}: ${String(err)}`));
        }, 500);
      }),
    );
    this.running = { child, exited };
    try {
      // Health over NATS is answered by every replica, the first answer wins: this process's own probe says it serves.
      const deadline = Date.now() + 120_000;
      for (;;) {
        if (await live(ports.health)) {
          served = true;
          this.served = true;
          return;
        }
        if (gone) throw new Error(`${this.name} exited before it served`);
        if (Date.now() > deadline) throw new Error(`${this.name} (pid ${child.pid}) did not serve within 120 s`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } catch (err) {
      throw new Error(`${this.name} did not start: ${(err as Error).message}`);
    }
  }

  /** The last lines of its log (all its starts), indented. */
  private logTail(): string {
    const lines = readFileSync(this.logFile, 'utf8').trimEnd().split('\n').slice(-LOG_TAIL_LINES);
    return lines.map((line) => `    ${line}`).join('\n');
  }
}

/**
 * The NATS cluster as a target: a fault kills -9 one node, picked by the run's generator, and the mend starts that node
 * again on its ports and store (as a pod of the StatefulSet comes back with its volume) and waits until JetStream is
 * current on it. One node at a time: the other two keep the quorum, so a fault costs leader elections, not the log.
 */
export class NatsClusterTarget implements NemesisTarget {
  readonly name = 'nats';
  private down: NatsClusterNode | undefined;

  constructor(
    readonly cluster: NatsClusterHandle,
    private readonly random: () => number,
    private readonly say: (line: string) => void,
  ) {}

  /** Every node's client URL, comma separated (`NATS_URL`). */
  get url(): string {
    return this.cluster.url;
  }

  async kill(): Promise<void> {
    const nodes = this.cluster.nodes;
    const node = nodes[Math.floor(this.random() * nodes.length)]!;
    this.down = node;
    this.say(`nemesis: kills NATS node ${node.name}`);
    await node.kill();
  }

  /** Starts the killed node again; the ports may stay taken for a moment after the kill, so a few attempts. */
  async restart(): Promise<void> {
    const node = this.down;
    if (!node) return;
    for (let attempt = 1; ; attempt++) {
      try {
        await node.restart();
        this.down = undefined;
        return;
      } catch (err) {
        if (attempt >= 5) throw err;
        this.say(`NATS node ${node.name} did not start again (${(err as Error).message.split('\n')[0]}): again`);
        await node.kill();
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  }

  stop(): Promise<void> {
    return this.cluster.stop();
  }
}

/** The running platform: the NATS cluster, the service processes, and a NATS connection of the run's own. */
export class ChaosPlatform {
  readonly processes: ServiceProcess[] = [];

  private constructor(
    readonly nats: NatsClusterTarget,
    readonly nc: NatsConnection,
    private readonly dirs: readonly string[],
  ) {}

  /** Starts the cluster and every replica of every service (in order: policy and approvals first, then the rest). */
  static async start(opts: PlatformOptions): Promise<ChaosPlatform> {
    const logs = mkdtempSync(join(tmpdir(), 'ormuz-chaos-logs-'));
    // A restarted node catches up every stream before it reports healthy: on a busy machine that takes a while.
    const cluster = await startNatsCluster({ nodes: 3, timeoutMs: 60_000 });
    const nats = new NatsClusterTarget(cluster, opts.random, opts.say);
    const nc = await connect({
      servers: nats.url.split(','),
      name: 'ormuz-chaos',
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
    });
    const platform = new ChaosPlatform(nats, nc, [logs]);
    try {
      for (const [service, count] of Object.entries(opts.replicas)) {
        for (let i = 1; i <= count; i++) {
          const name = count > 1 ? `${service}#${i}` : service;
          const env: NodeJS.ProcessEnv = {
            ...process.env,
            ...opts.env,
            NATS_URL: nats.url,
            ORMUZ_STREAM_REPLICAS: String(cluster.nodes.length),
            DATABASE_URL: opts.databaseUrl,
            ORMUZ_NAMESPACE: opts.namespace,
            APPROVALS_PORT: '0',
            MCP_GATEWAY_PORT: '0',
            LOG_LEVEL: 'warn',
          };
          platform.processes.push(new ServiceProcess(name, service, i, env, join(logs, `${name}.log`), opts.say));
        }
      }
      // The first process of each service alone (each migrates its schemas), then the other replicas together.
      for (const p of platform.processes.filter((p) => p.replica === 1)) {
        await p.restart();
        opts.say(`${p.name} serves`);
      }
      await Promise.all(platform.processes.filter((p) => p.replica > 1).map((p) => p.restart()));
      opts.say('every replica serves');
      return platform;
    } catch (err) {
      await platform.stop();
      throw err;
    }
  }

  /** Each device-bridge replica's WebSocket endpoint, by replica (once the platform has started). */
  get deviceUrls(): string[] {
    return this.processes.flatMap((p) => (p.deviceUrl === undefined ? [] : [p.deviceUrl]));
  }

  /** Kills every process, stops the cluster (removing its stores), and removes the run's directories. */
  async stop(): Promise<void> {
    for (const p of this.processes) await p.stop();
    await this.nc.close().catch(() => undefined);
    await this.nats.stop();
    for (const dir of this.dirs) rmSync(dir, { recursive: true, force: true });
  }
}

/** Whether the probe server on `port` answers `/livez` with 200. */
async function live(port: number): Promise<boolean> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/livez`, { signal: AbortSignal.timeout(2000) });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
