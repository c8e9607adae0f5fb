// The approvals service alone, in-process on a fresh namespace and database of the real NATS and Postgres, as the
// approvals specs (inbox, decisions, console, webhooks) start it; calls are put on the log as policy puts them.
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { connectNats, EventStore, streamName } from '@ormuz/event-log';
import { startService, ToolCalls, waitUntilServing, type Env, type RunningService } from '@ormuz/service-kit';
import { createTestDatabase, randomNamespace, testEnv, type TestDatabase } from '@ormuz/testing';
import { approvalsService, loadApprovalsConfig } from '../src/index.js';

export class ApprovalsUnderTest {
  readonly namespace: string;
  database!: TestDatabase;
  /** The test's own NATS connection: commands are sent on it, as any caller sends them. */
  nc!: NatsConnection;
  jsm!: JetStreamManager;
  /** Appends to the `calls` stream as policy does (`stageCall` in support/calls.ts). */
  policy!: ToolCalls;
  private current: RunningService | undefined;

  /**
   * `prefix` names the namespace; `settings` are approvals' environment variables beyond where NATS and Postgres are
   * (`APPROVAL_SWEEP_MS`, `WEBHOOK_*`, …), the same at every start.
   */
  constructor(
    prefix: string,
    private readonly settings: Env = {},
  ) {
    this.namespace = randomNamespace(prefix);
  }

  /** The running service; throws between {@link stop} and {@link start}. */
  get service(): RunningService {
    if (!this.current) throw new Error('approvals is not running: start() it first');
    return this.current;
  }

  /** Its HTTP base URL, `http://127.0.0.1:<port>` (a new port at each start). */
  get url(): string {
    return this.service.httpUrl!;
  }

  /** Creates the database and the connection, then starts approvals. */
  async open(): Promise<this> {
    this.database = await createTestDatabase();
    this.nc = await connectNats({ url: testEnv().natsUrl, name: `${this.namespace}-test` });
    this.jsm = await jetstreamManager(this.nc);
    this.policy = new ToolCalls(new EventStore(jetstream(this.nc), this.jsm), this.namespace, '/ormuz/policy');
    await this.start();
    return this;
  }

  /** Starts approvals (again) with the same settings; resolves once it answers `health` on the test's connection. */
  async start(): Promise<RunningService> {
    const config = loadApprovalsConfig({
      NATS_URL: testEnv().natsUrl,
      DATABASE_URL: this.database.url,
      ORMUZ_NAMESPACE: this.namespace,
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      APPROVALS_PORT: '0',
      ...this.settings,
    });
    this.current = await startService({ ...approvalsService(config), httpPort: 0 });
    await waitUntilServing(this.nc, this.namespace, 'approvals');
    return this.current;
  }

  /** Stops approvals; the database and the stream stay, for {@link start}. */
  async stop(): Promise<void> {
    const running = this.current;
    this.current = undefined;
    await running?.close();
  }

  /** Stops approvals, deletes the namespace's stream and drops the database. */
  async close(): Promise<void> {
    await this.stop();
    await this.jsm?.streams.delete(streamName(this.namespace, 'calls')).catch(() => undefined);
    await this.nc?.close();
    await this.database?.drop();
  }
}
