/**
 * The whole platform for an end-to-end test: the six services as processes (as `ormuz demo` starts them; with
 * `ORMUZ_E2E_REPLICAS=2`, two of each, support/replicas.ts) on a fresh database and a random namespace, simulated phones connected to the bridge, and the means to kill -9 a service and
 * start it again, or to run the built CLI against it. `close()` removes everything it made.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Kysely } from 'kysely';
import {
  CONTEXTS,
  type ApprovalViewV1,
  type ContextName,
  type RpcName,
  type RpcReplyOf,
  type RpcRequestOf,
} from '@ormuz/contracts';
import { runSimulatedDevice, type SimulatedDeviceHandle } from '@ormuz/device-sdk';
import { streamName } from '@ormuz/event-log';
import { openDatabase } from '@ormuz/postgres';
import { callRpc } from '@ormuz/service-kit';
import {
  createTestDatabase,
  freePort,
  randomNamespace,
  testEnv,
  waitFor,
  type TestDatabase,
  adminFor,
  testToken,
} from '@ormuz/testing';
import { SERVICES, stopAll, tailLog, type ServiceName, type ServiceProcess } from '../../../tools/cli/src/services.js';
import { exitWithin, killAll, ROOT, spawnTracked } from './processes.js';
import { spawnReplicas, waitEveryReplica } from './replicas.js';

export interface CliRun {
  readonly code: number | null;
  readonly json: unknown;
  readonly stdout: string;
  readonly stderr: string;
}

export interface Platform {
  readonly namespace: string;
  readonly tenant: string;
  readonly devices: readonly string[];
  readonly nc: NatsConnection;
  readonly jsm: JetStreamManager;
  /** The platform's database, for reading its read models directly. */
  readonly db: Kysely<any>;
  readonly databaseUrl: string;
  /** Sends a command to a service over NATS. */
  /** Sends command `name`, holding the reply to its declared schema. */
  call<N extends RpcName>(name: N, body: NoInfer<RpcRequestOf<N>>, timeoutMs?: number): Promise<NoInfer<RpcReplyOf<N>>>;
  /**
   * Approves or denies an approval of this platform's tenant once the approvals inbox holds it: the inbox is a read
   * model, so a decision sent the moment a call is staged may find nothing yet.
   */
  decide(decision: 'approve' | 'deny', approvalId: string): Promise<ApprovalViewV1>;
  /** Kills the service (every replica of it) with SIGKILL and waits for it to be gone. */
  kill9(service: ServiceName): Promise<void>;
  /** Starts the service (its replicas) again and waits until each answers. */
  start(service: ServiceName): Promise<void>;
  /** Runs `ormuz --json …` against this platform, as a platform administrator, bounded to 20 s. */
  ormuz(...args: string[]): Promise<CliRun>;
  /**
   * {@link ormuz} presenting `token` (default: a platform administrator's), bounded to `timeoutMs` (default 20 s);
   * `onStdout` is told the whole output so far each time more arrives, while the command runs.
   */
  ormuzWith(
    options: {
      readonly token?: string;
      readonly timeoutMs?: number;
      readonly onStdout?: (stdout: string) => void;
    },
    ...args: string[]
  ): Promise<CliRun>;
  close(): Promise<void>;
}

export async function startPlatform(
  opts: {
    tenant?: string;
    devices?: readonly string[];
    /** Added to every service's environment (e.g. the variable holding a model's key, for model-loop). */
    env?: NodeJS.ProcessEnv;
  } = {},
): Promise<Platform> {
  const { natsUrl } = testEnv();
  const tenant = opts.tenant ?? 'acme';
  const devices = opts.devices ?? ['phone-1'];
  const namespace = randomNamespace('p');
  const logDir = mkdtempSync(join(tmpdir(), 'ormuz-e2e-logs-'));
  const journals = mkdtempSync(join(tmpdir(), 'ormuz-e2e-journals-'));
  const database: TestDatabase = await createTestDatabase();
  const db = await openDatabase<any>({ url: database.url });
  const nc = await connect({ servers: natsUrl, name: 'ormuz-e2e-platform' });
  const jsm = await jetstreamManager(nc);
  const env: NodeJS.ProcessEnv = {
    NATS_URL: natsUrl,
    DATABASE_URL: database.url,
    ORMUZ_NAMESPACE: namespace,
    APPROVALS_PORT: '0',
    MCP_GATEWAY_PORT: '0',
    // A fixed port, so that the phones find the bridge again after it restarts.
    DEVICE_BRIDGE_PORT: String(await freePort()),
    DEVICE_TOKENS: devices.map((d) => `${tenant}:${d}:e2e-${d}`).join(','),
    LOG_LEVEL: 'info',
    ...opts.env,
  };
  const running = new Map<ServiceName, ServiceProcess[]>();
  const phones: SimulatedDeviceHandle[] = [];

  const start = async (service: ServiceName) => {
    const procs = spawnReplicas(service, env, logDir);
    running.set(service, procs);
    try {
      await waitEveryReplica(nc, namespace, procs, 40_000);
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${procs.map((p) => tailLog(p, 30)).join('\n')}`);
    }
  };
  const call = <N extends RpcName>(name: N, body: NoInfer<RpcRequestOf<N>>, timeoutMs = 5_000) =>
    adminFor(body).then((credential) =>
      callRpc(nc, namespace, name, body, { credential, timeoutMs, checkReply: true }),
    );

  const platform: Platform = {
    namespace,
    tenant,
    devices,
    nc,
    jsm,
    db,
    databaseUrl: database.url,
    call,
    start,
    async decide(decision, approvalId) {
      await waitFor(
        async () =>
          (await call('approvals.list', { tenant, status: 'all' })).approvals.some((a) => a.approval_id === approvalId),
        { timeoutMs: 30_000, message: `approval ${approvalId} in the inbox` },
      );
      return call(`approvals.${decision}`, { tenant, approval_id: approvalId });
    },
    async kill9(service) {
      const procs = running.get(service)!;
      for (const proc of procs) proc.child.kill('SIGKILL');
      await waitFor(() => procs.every((p) => p.exited), { timeoutMs: 10_000, message: `${service} to die` });
    },
    ormuz(...args) {
      return platform.ormuzWith({}, ...args);
    },
    async ormuzWith(options, ...args) {
      // By default a platform administrator: every tenant's commands, and the platform's (projections).
      const token = options.token ?? (await testToken({ tenant: '*', roles: ['admin'], subject: 'ops@platform' }));
      const t = spawnTracked(
        process.execPath,
        [join(ROOT, 'tools/cli/bin/ormuz.js'), '--json', '--nats', natsUrl, '--namespace', namespace, ...args],
        { ORMUZ_TOKEN: token },
      );
      const { onStdout } = options;
      if (onStdout) t.child.stdout?.on('data', () => onStdout(t.stdout()));
      const { code } = await exitWithin(t, options.timeoutMs ?? 20_000, `ormuz ${args.join(' ')}`);
      let json: unknown;
      try {
        json = JSON.parse(t.stdout());
      } catch {
        json = undefined;
      }
      return { code, json, stdout: t.stdout(), stderr: t.stderr() };
    },
    async close() {
      await Promise.all(phones.map((p) => p.close().catch(() => undefined)));
      const procs = [...running.values()].flat();
      await stopAll(procs, 5_000);
      for (const p of procs) if (!p.exited) p.child.kill('SIGKILL');
      await killAll();
      for (const context of Object.keys(CONTEXTS) as ContextName[]) {
        await jsm.streams.delete(streamName(namespace, context)).catch(() => undefined);
      }
      await nc.close();
      await db.destroy();
      await database.drop();
      rmSync(logDir, { recursive: true, force: true });
      rmSync(journals, { recursive: true, force: true });
    },
  };

  try {
    for (const s of SERVICES) await start(s);
    const health = await waitEveryReplica(nc, namespace, [...running.values()].flat());
    const devicesUrl = health['device-bridge']?.endpoints.devices ?? `ws://127.0.0.1:${env.DEVICE_BRIDGE_PORT}`;
    for (const d of devices) {
      phones.push(
        runSimulatedDevice({
          url: devicesUrl,
          tenant,
          deviceId: d,
          token: `e2e-${d}`,
          journalDir: mkdtempSync(join(journals, `${d}-`)),
          backoff: { initialDelayMs: 50, maxDelayMs: 500 },
        }),
      );
    }
    await waitFor(
      async () => (await call('device-bridge.devices', { tenant }, 2000)).devices.length === devices.length,
      { timeoutMs: 20_000, message: `${devices.length} phones to connect` },
    );
  } catch (err) {
    await platform.close();
    throw err;
  }
  return platform;
}
