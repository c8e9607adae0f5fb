// model-loop under test beside the real policy service, on a fresh namespace and database. The test itself plays
// the device-bridge and the approvals service, appending through the tool-call decider.
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { connectNats, EventStore, streamName } from '@ormuz/event-log';
import { startService, ToolCalls, waitUntilServing, type RunningService } from '@ormuz/service-kit';
import { createTestDatabase, randomNamespace, testEnv, type TestDatabase } from '@ormuz/testing';
// Tests may start another service in-process; service source never imports one.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { loadPolicyConfig, policyService } from '../../policy/src/index.js';
import { loadModelLoopConfig, ModelLoopModule, modelLoopService } from '../src/index.js';

type ModelLoopDeps = Parameters<typeof ModelLoopModule.with>[2];

export class TestPlatform {
  readonly namespace = randomNamespace();
  db!: TestDatabase;
  policy!: RunningService;
  nc!: NatsConnection;
  jsm!: JetStreamManager;
  store!: EventStore;
  /** Appends as the device-bridge would. */
  bridge!: ToolCalls;
  /** Appends as the approvals service would. */
  owner!: ToolCalls;

  env() {
    return {
      NATS_URL: testEnv().natsUrl,
      DATABASE_URL: this.db.url,
      ORMUZ_NAMESPACE: this.namespace,
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    };
  }

  /** Creates the database, starts policy and connects the test's own log client. */
  async open(clientName: string): Promise<void> {
    this.db = await createTestDatabase();
    const policyConfig = loadPolicyConfig(this.env());
    this.policy = await startService(policyService(policyConfig));
    this.nc = await connectNats({ url: testEnv().natsUrl, name: clientName });
    await waitUntilServing(this.nc, this.namespace, 'policy');
    this.jsm = await jetstreamManager(this.nc);
    this.store = new EventStore(jetstream(this.nc), this.jsm);
    this.bridge = new ToolCalls(this.store, this.namespace, '/ormuz/device-bridge');
    this.owner = new ToolCalls(this.store, this.namespace, '/ormuz/approvals');
  }

  /** Starts model-loop (again, after a stop: a restart), with `env` added to its environment. */
  async startLoop(deps?: ModelLoopDeps, env: Record<string, string> = {}): Promise<RunningService> {
    const config = loadModelLoopConfig({ ...this.env(), ...env });
    const loop = await startService(modelLoopService(config, deps));
    await waitUntilServing(this.nc, this.namespace, 'model-loop');
    return loop;
  }

  /** Stops `loop` and policy, deletes the streams and drops the database. */
  async close(loop: RunningService | undefined): Promise<void> {
    await loop?.close();
    await this.policy?.close();
    for (const context of ['conversations', 'usage', 'calls'] as const) {
      await this.jsm?.streams.delete(streamName(this.namespace, context)).catch(() => false);
    }
    await this.nc?.close();
    await this.db?.drop();
  }
}
