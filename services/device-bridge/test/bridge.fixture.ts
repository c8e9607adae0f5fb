// The bridge under test: started in-process on its own namespace and database, with calls recorded and authorized
// through the same decider policy uses.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connectNats, streamName } from '@ormuz/event-log';
import { startService, ToolCalls, type RunningService } from '@ormuz/service-kit';
import { authorizeSeededCall, createTestDatabase, randomNamespace, testEnv, type TestDatabase } from '@ormuz/testing';
import { deriveCallId } from '@ormuz/tool-call';
import { DeviceLinkHost, loadDeviceBridgeConfig, deviceBridgeService } from '../src/index.js';

const cause = { correlationid: 'test', causationid: 'test' };

/** Records and authorizes a call for `deviceId`, as policy would; returns its id and canonical bytes. */
export async function authorizeCall(
  calls: ToolCalls,
  tenant: string,
  operation: string,
  tool: string,
  args: Record<string, unknown>,
  deviceId: string,
) {
  const origin = { kind: 'operation', operation_id: operation } as const;
  const callId = deriveCallId(tenant, origin);
  return authorizeSeededCall(calls, { tenant, callId, tool, args, origin, deviceId }, cause);
}

export interface BridgeUnderTest {
  readonly namespace: string;
  readonly db: TestDatabase;
  readonly svc: RunningService;
  /** Appends as policy would (source `/test/policy`). */
  readonly calls: ToolCalls;
  /** The device gateway's WebSocket URL. */
  readonly url: string;
  /** A temporary directory for device journals. */
  readonly dir: string;
  close(): Promise<void>;
}

/** Deletes the test's calls stream over a connection of its own (the bridge's may be closed already). */
async function deleteStream(namespace: string): Promise<void> {
  const nc = await connectNats({ url: testEnv().natsUrl, name: 'bridge-fixture-teardown' });
  try {
    const jsm = await jetstreamManager(nc);
    for (const context of ['calls', 'devices'] as const)
      await jsm.streams.delete(streamName(namespace, context)).catch(() => undefined);
  } finally {
    await nc.close();
  }
}

/** One more replica of a running bridge (same namespace and database); close() stops only this replica. */
export interface ReplicaUnderTest {
  readonly svc: RunningService;
  readonly url: string;
  readonly host: DeviceLinkHost;
  /** Appends as policy would, through this replica's connection. */
  readonly calls: ToolCalls;
  close(): Promise<void>;
}

export async function startReplica(
  of: Pick<BridgeUnderTest, 'namespace' | 'db'>,
  env: Record<string, string> = {},
): Promise<ReplicaUnderTest> {
  const svc = await startBridgeService(of.namespace, of.db, env);
  const host = svc.app.get(DeviceLinkHost);
  return {
    svc,
    url: host.gateway.url(),
    host,
    calls: new ToolCalls(svc.infra.store, of.namespace, '/test/policy'),
    close: () => svc.close(),
  };
}

function startBridgeService(namespace: string, db: TestDatabase, env: Record<string, string>): Promise<RunningService> {
  const config = loadDeviceBridgeConfig({
    NATS_URL: testEnv().natsUrl,
    DATABASE_URL: db.url,
    ORMUZ_NAMESPACE: namespace,
    LOG_LEVEL: 'silent',
    DEVICE_BRIDGE_PORT: '0',
    DEVICE_HEARTBEAT_MS: '500',
    ...env,
  });
  return startService(deviceBridgeService(config));
}

/** Starts device-bridge with `env` on top of the test defaults (port 0, silent logs, 500 ms heartbeats). */
export async function startBridge(env: Record<string, string>, dirPrefix: string): Promise<BridgeUnderTest> {
  const namespace = randomNamespace();
  const db = await createTestDatabase();
  const svc = await startBridgeService(namespace, db, env);
  const dir = mkdtempSync(join(tmpdir(), dirPrefix));
  return {
    namespace,
    db,
    svc,
    calls: new ToolCalls(svc.infra.store, namespace, '/test/policy'),
    url: svc.app.get(DeviceLinkHost).gateway.url(),
    dir,
    async close() {
      await svc.close();
      await deleteStream(namespace);
      await db.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
