/**
 * What a bridge crash does to a call a device is running: the bridge process is SIGKILLed while the call runs on a
 * device that stays up, then started again on the same port. A dead process records nothing, so the call is never
 * marked outcome_unknown; the device reconnects with the same boot id and delivers its outcome, which is recorded
 * once. (A bridge that shuts down in order closes its connections first, and those calls get connection_lost.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { CONTEXTS, type ContextName } from '@ormuz/contracts';
import { runSimulatedDevice, type SimulatedDeviceHandle } from '@ormuz/device-sdk';
import { EventStore, streamName } from '@ormuz/event-log';
import { ToolCalls } from '@ormuz/service-kit';
import {
  authorizeSeededCall,
  createTestDatabase,
  freePort,
  randomNamespace,
  testEnv,
  waitFor,
  type TestDatabase,
} from '@ormuz/testing';
import { deriveCallId } from '@ormuz/tool-call';
import { spawnService, tailLog, waitHealthy, type ServiceProcess } from '../../tools/cli/src/services.js';

const TENANT = 'acme';
const cause = { correlationid: 'bridge-crash-e2e', causationid: 'bridge-crash-e2e' };

describe('a bridge crash while a device runs a call', () => {
  const { natsUrl } = testEnv();
  const namespace = randomNamespace('k');
  const logDir = mkdtempSync(join(tmpdir(), 'ormuz-bridge-crash-'));
  let database: TestDatabase;
  let nc: NatsConnection;
  let calls: ToolCalls;
  let env: NodeJS.ProcessEnv;
  let bridge: ServiceProcess | undefined;
  let handle: SimulatedDeviceHandle | undefined;

  async function startBridge(): Promise<ServiceProcess> {
    const proc = spawnService('device-bridge', env, logDir);
    try {
      await waitHealthy(nc, namespace, [proc], 40_000);
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${tailLog(proc)}`);
    }
    return proc;
  }

  beforeAll(async () => {
    database = await createTestDatabase();
    nc = await connect({ servers: natsUrl, name: 'ormuz-bridge-crash-e2e' });
    env = {
      NATS_URL: natsUrl,
      DATABASE_URL: database.url,
      ORMUZ_NAMESPACE: namespace,
      DEVICE_BRIDGE_PORT: String(await freePort()),
      DEVICE_TOKENS: `${TENANT}:phone-1:crash-e2e-token`,
      LOG_LEVEL: 'info',
    };
    bridge = await startBridge();
    calls = new ToolCalls(new EventStore(jetstream(nc), await jetstreamManager(nc)), namespace, '/test/policy');
  }, 60_000);

  afterAll(async () => {
    await handle?.close();
    if (bridge && !bridge.exited) bridge.child.kill('SIGKILL');
    const jsm = await jetstreamManager(nc);
    for (const context of Object.keys(CONTEXTS) as ContextName[]) {
      await jsm.streams.delete(streamName(namespace, context)).catch(() => undefined);
    }
    await nc.close();
    await database?.drop();
    rmSync(logDir, { recursive: true, force: true });
  }, 30_000);

  it('records the outcome once and never marks the call unknown', async () => {
    handle = runSimulatedDevice({
      url: `ws://127.0.0.1:${env['DEVICE_BRIDGE_PORT']}/v1/devices`,
      tenant: TENANT,
      deviceId: 'phone-1',
      token: 'crash-e2e-token',
      journalDir: join(logDir, 'journal'),
      backoff: { initialDelayMs: 50, maxDelayMs: 250 },
    });
    await waitFor(() => handle!.client.connected, { message: 'the device connected', timeoutMs: 15_000 });
    const bootId = handle.client.bootId;
    // The run takes long enough to span the crash and the restart.
    handle.faults.set({ delayMs: 1_500, once: true });

    const origin = { kind: 'operation', operation_id: 'op-crash' } as const;
    const callId = deriveCallId(TENANT, origin);
    await authorizeSeededCall(
      calls,
      { tenant: TENANT, callId, tool: 'device.list_contacts', args: { name_query: 'Alice' }, origin },
      cause,
    );
    await waitFor(async () => (await calls.load(TENANT, callId)).state.status === 'started', {
      message: 'the call started',
      timeoutMs: 15_000,
    });

    bridge!.child.kill('SIGKILL');
    await waitFor(() => bridge!.exited, { message: 'the bridge died' });
    bridge = await startBridge();

    await waitFor(async () => (await calls.load(TENANT, callId)).state.status === 'succeeded', {
      message: 'the outcome after the restart',
      timeoutMs: 30_000,
    });
    const types = (await calls.timeline(TENANT, callId)).map((t) => t.event.type.split('.')[2]);
    expect(types).toEqual(['requested', 'authorized', 'dispatched', 'started', 'succeeded']);
    expect(handle.device.history.filter((h) => h.tool === 'device.list_contacts')).toHaveLength(1);
    // The same device process all along: no reboot, and its journal has the outcome acknowledged.
    expect(handle.client.bootId).toBe(bootId);
    await waitFor(() => handle!.client.journalEntry(callId)?.acked === true, { message: 'the outcome acknowledged' });
  }, 90_000);
});
