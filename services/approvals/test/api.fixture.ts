// The platform behind the HTTP API, in-process on a fresh namespace and database: approvals (the edge, serving HTTP)
// and the services its routes forward to. Tests call it over HTTP only, with tokens of the development issuer.
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { connectNats, streamName } from '@ormuz/event-log';
import { startService, type RunningService, type ServiceOptions } from '@ormuz/service-kit';
import { bearerFor, createTestDatabase, randomNamespace, testEnv, type TestDatabase } from '@ormuz/testing';
import type { Role } from '@ormuz/auth';
import { CONTEXTS, type ContextName } from '@ormuz/contracts';
// Tests may start another service in-process; service source never imports one.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { AUDIT_SCHEMA, auditMigrations, AuditModule, AUDITED_CONTEXTS, loadAuditConfig } from '../../audit/src/index.js';
// eslint-disable-next-line @nx/enforce-module-boundaries
import { DEVICE_BRIDGE_SCHEMA, deviceBridgeMigrations, DeviceBridgeModule, loadDeviceBridgeConfig } from '../../device-bridge/src/index.js';
// eslint-disable-next-line @nx/enforce-module-boundaries
import { loadModelLoopConfig, MODEL_LOOP_SCHEMA, MODEL_LOOP_STREAMS, modelLoopMigrations, ModelLoopModule } from '../../model-loop/src/index.js';
// eslint-disable-next-line @nx/enforce-module-boundaries
import { loadPolicyConfig, POLICY_SCHEMA, policyMigrations, PolicyModule } from '../../policy/src/index.js';
import {
  APPROVALS_SCHEMA,
  APPROVALS_STREAMS,
  approvalsMigrations,
  ApprovalsModule,
  loadApprovalsConfig,
} from '../src/index.js';

/** The services a test file needs besides approvals. */
export type Behind = 'policy' | 'audit' | 'device-bridge' | 'model-loop';

export interface HttpAnswer<T = unknown> {
  readonly status: number;
  readonly body: T;
  readonly contentType: string | null;
}

export class ApiPlatform {
  readonly namespace = randomNamespace('api');
  db!: TestDatabase;
  /** Started in order; closed in reverse. */
  private readonly running: RunningService[] = [];
  approvals!: RunningService;
  /** The edge's base URL, `http://127.0.0.1:<port>`. */
  url!: string;
  /** The test's own NATS connection, to look at the streams and their consumers. */
  nc!: NatsConnection;
  jsm!: JetStreamManager;
  private closed = false;

  private env(): Record<string, string> {
    return {
      NATS_URL: testEnv().natsUrl,
      DATABASE_URL: this.db.url,
      ORMUZ_NAMESPACE: this.namespace,
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      APPROVALS_PORT: '0',
      DEVICE_BRIDGE_PORT: '0',
    };
  }

  /** Creates the database and starts `behind`, then approvals serving HTTP. */
  async open(behind: readonly Behind[]): Promise<void> {
    this.db = await createTestDatabase();
    this.nc = await connectNats({ url: testEnv().natsUrl, name: 'api-test' });
    this.jsm = await jetstreamManager(this.nc);
    const env = this.env();
    const options: Record<Behind, () => ServiceOptions> = {
      policy: () => {
        const config = loadPolicyConfig(env);
        return { service: 'policy', config, streams: ['calls'], schema: POLICY_SCHEMA, migrations: policyMigrations, module: (infra) => PolicyModule.with(infra, config) };
      },
      audit: () => {
        const config = loadAuditConfig(env);
        return { service: 'audit', config, streams: AUDITED_CONTEXTS, schema: AUDIT_SCHEMA, migrations: auditMigrations, module: (infra) => AuditModule.with(infra, config) };
      },
      'device-bridge': () => {
        const config = loadDeviceBridgeConfig(env);
        return {
          service: 'device-bridge',
          config,
          streams: ['calls', 'devices'],
          schema: DEVICE_BRIDGE_SCHEMA,
          migrations: deviceBridgeMigrations,
          module: (infra) => DeviceBridgeModule.with(infra, config),
        };
      },
      'model-loop': () => {
        const config = loadModelLoopConfig(env);
        return {
          service: 'model-loop',
          config,
          streams: MODEL_LOOP_STREAMS,
          schema: MODEL_LOOP_SCHEMA,
          migrations: modelLoopMigrations,
          module: (infra) => ModelLoopModule.with(infra, config),
        };
      },
    };
    // One at a time: the first claims the database for the namespace, and each runs its own migrations.
    for (const name of behind) this.running.push(await startService(options[name]()));
    const config = loadApprovalsConfig(env);
    this.approvals = await startService({
      service: 'approvals',
      config,
      streams: APPROVALS_STREAMS,
      schema: APPROVALS_SCHEMA,
      migrations: approvalsMigrations,
      module: (infra) => ApprovalsModule.with(infra, config),
      httpPort: 0,
    });
    this.running.push(this.approvals);
    this.url = this.approvals.httpUrl!;
  }

  /** Stops every service, deletes the namespace's streams and drops the database. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const svc of this.running.reverse()) await svc.close();
    for (const context of Object.keys(CONTEXTS) as ContextName[]) {
      await this.jsm?.streams.delete(streamName(this.namespace, context)).catch(() => false);
    }
    await this.nc?.close();
    await this.db?.drop();
  }

  /** `Bearer <token>` for a person of `tenant` with `roles`. */
  async bearer(tenant: string, roles: readonly Role[], subject?: string): Promise<string> {
    return `Bearer ${(await bearerFor(tenant, roles, subject)).bearer}`;
  }

  /** One HTTP request to the edge; the body is parsed when it is JSON. */
  async request<T = unknown>(
    method: string,
    path: string,
    options: { readonly authorization?: string; readonly json?: unknown; readonly raw?: string; readonly headers?: Record<string, string> } = {},
  ): Promise<HttpAnswer<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.authorization) headers.authorization = options.authorization;
    let body: string | undefined = options.raw;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${this.url}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
    const contentType = res.headers.get('content-type');
    const text = await res.text();
    return { status: res.status, contentType, body: (contentType?.includes('json') && text ? JSON.parse(text) : text) as T };
  }
}
