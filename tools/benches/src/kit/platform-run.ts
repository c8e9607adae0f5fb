import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { CONTEXTS, type ContextName } from '@ormuz/contracts';
import { connectNats, streamName } from '@ormuz/event-log';
import { fmt } from './format.js';
import { benchDbName, createDatabase, databaseUrl, dropDatabase } from './postgres.js';
import { errorRow, printRunReport, progress, type BenchRow, type RunHead } from './report.js';
import { bounded } from './run.js';
import { startServiceProcess, type ServiceProcess } from './services.js';
import { now } from './stats.js';

/**
 * What a bench that runs the platform's services as processes creates, and its teardown: a random namespace (its
 * streams), one database, the services, child processes, NATS connections, a journal directory and the services'
 * logs. `cleanup` removes all of it, once however often it is called (the end of the run, a failure, Ctrl-C, the
 * watchdog); a failed run sets `keepLogs` to keep the logs and print where.
 */
export class PlatformRun {
  readonly namespace: string;
  readonly dbName = benchDbName();
  readonly services: ServiceProcess[] = [];
  readonly children = new Set<ChildProcess>();
  /** Streams of the run beside its contexts' (deleted at the end). */
  readonly extraStreams = new Set<string>();
  keepLogs = false;
  logDir: string | undefined;
  journalRoot: string | undefined;
  private dbCreated = false;
  private readonly connections = new Set<NatsConnection>();
  private cleaning: Promise<void> | undefined;

  /**
   * `bench` names the run's connections and directories; the namespace is `prefix` and 8 hex digits. `stopSignal`
   * says how each service is stopped (default SIGKILL); `beforeCleanup` runs first (closing a client of the services).
   */
  constructor(
    private readonly bench: string,
    prefix: string,
    private readonly urls: { readonly nats: string; readonly adminDb: string },
    private readonly hooks: {
      readonly stopSignal?: (service: string) => NodeJS.Signals;
      readonly beforeCleanup?: () => Promise<void>;
    } = {},
  ) {
    this.namespace = `${prefix}${randomBytes(4).toString('hex')}`;
  }

  /** A NATS connection of the run's, closed by the cleanup. */
  async connection(name: string): Promise<NatsConnection> {
    const nc = await connectNats({ url: this.urls.nats, name: `ormuz-bench-${this.bench}-${name}` });
    this.connections.add(nc);
    return nc;
  }

  /** Creates the run's database and its log directory; the database's URL. */
  async createDatabase(): Promise<string> {
    await createDatabase(this.urls.adminDb, this.dbName);
    this.dbCreated = true;
    this.logDir = mkdtempSync(join(tmpdir(), `ormuz-${this.bench}-bench-logs-`));
    return databaseUrl(this.urls.adminDb, this.dbName);
  }

  /** Starts `services/<name>/dist/main.js` with `env` and waits until it serves, saying how long it took. */
  async startService(nc: NatsConnection, name: string, env: NodeJS.ProcessEnv): Promise<ServiceProcess> {
    if (!this.logDir) throw new Error('createDatabase comes before the services');
    const t = now();
    const service = await startServiceProcess(nc, this.namespace, name, env, this.logDir);
    this.services.push(service);
    progress(`${name} serves (${fmt((now() - t) / 1000, 1)} s)`);
    return service;
  }

  /** A directory for devices' journals, in /dev/shm where there is one. */
  createJournalRoot(): string {
    this.journalRoot = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), `ormuz-${this.bench}-bench-`));
    return this.journalRoot;
  }

  /** The run failed with `err`: its logs are kept, and `rows` get an error row `id`. */
  failedWith(id: string, err: unknown, rows: BenchRow[]): void {
    this.keepLogs = true;
    console.error('bench failed:', err);
    rows.push(errorRow(id, err, 70));
  }

  /** Prints the report, cleans up and exits: 1 when the run `failed`, else 0. */
  async finish(
    head: RunHead,
    report: { rows: readonly BenchRow[]; detail: unknown; json: boolean; failed: boolean },
    watchdog: NodeJS.Timeout,
  ): Promise<never> {
    printRunReport(head, report.rows, report.detail, report.json);
    await this.cleanup();
    clearTimeout(watchdog);
    process.exit(report.failed ? 1 : 0);
  }

  cleanup(): Promise<void> {
    this.cleaning ??= (async () => {
      if (this.hooks.beforeCleanup) await bounded('closing clients', this.hooks.beforeCleanup());
      for (const c of this.children) c.kill('SIGKILL');
      for (const s of this.services) {
        s.child.kill(this.hooks.stopSignal?.(s.name) ?? 'SIGKILL');
        await bounded(`stopping ${s.name}`, s.exited, 15_000);
      }
      await bounded('deleting the streams', this.deleteStreams());
      for (const nc of this.connections) await bounded('closing a NATS connection', nc.close());
      if (this.dbCreated) {
        await bounded(`dropping ${this.dbName}`, dropDatabase(this.urls.adminDb, this.dbName), 30_000);
      }
      if (this.journalRoot) rmSync(this.journalRoot, { recursive: true, force: true });
      if (this.logDir && !this.keepLogs) rmSync(this.logDir, { recursive: true, force: true });
      else if (this.logDir) progress(`the services' logs are kept in ${this.logDir}`);
    })();
    return this.cleaning;
  }

  private async deleteStreams(): Promise<void> {
    const nc = await connectNats({ url: this.urls.nats, name: `ormuz-bench-${this.bench}-cleanup` });
    try {
      const jsm = await jetstreamManager(nc);
      const names = [...(Object.keys(CONTEXTS) as ContextName[]).map((c) => streamName(this.namespace, c))];
      for (const name of [...names, ...this.extraStreams]) await jsm.streams.delete(name).catch(() => undefined);
    } finally {
      await nc.close();
    }
  }
}
