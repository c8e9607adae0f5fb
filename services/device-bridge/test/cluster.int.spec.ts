/**
 * The bridge on a three-node NATS cluster with its streams at replicas 3: an authorized call runs once on the phone
 * and its outcome is recorded, also while the calls stream's leader is killed (kill -9) and after it returns.
 */
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { runSimulatedDevice, type SimulatedDeviceHandle } from '@ormuz/device-sdk';
import { checkStreamSequences, describeAnomaly, streamName } from '@ormuz/event-log';
import { startNatsCluster, waitFor, type NatsClusterHandle } from '@ormuz/testing';
import { authorizeCall, startBridge, type BridgeUnderTest } from './bridge.fixture.js';

const TENANT = 'acme';

describe('device-bridge on a three-node NATS cluster', () => {
  let cluster: NatsClusterHandle;
  let bridge: BridgeUnderTest;
  let phone: SimulatedDeviceHandle;

  beforeAll(async () => {
    cluster = await startNatsCluster({ nodes: 3 });
    bridge = await startBridge(
      { NATS_URL: cluster.url, ORMUZ_STREAM_REPLICAS: '3', DEVICE_TOKENS: `${TENANT}:phone-1:secret-1` },
      'ormuz-bridge-cluster-',
    );
    phone = runSimulatedDevice({
      url: bridge.url,
      tenant: TENANT,
      deviceId: 'phone-1',
      token: 'secret-1',
      journalDir: join(bridge.dir, 'phone-1'),
      backoff: { initialDelayMs: 20, maxDelayMs: 200 },
    });
  });
  afterAll(async () => {
    await phone?.close();
    await bridge?.close();
    await cluster?.stop();
  });

  const runCall = async (operation: string) => {
    const { callId } = await authorizeCall(
      bridge.calls,
      TENANT,
      operation,
      'device.list_contacts',
      { name_query: 'Alice' },
      'phone-1',
    );
    await waitFor(async () => (await bridge.calls.load(TENANT, callId)).state.status === 'succeeded', {
      message: `${operation} to succeed`,
      timeoutMs: 60_000,
    });
    const types = (await bridge.calls.timeline(TENANT, callId)).map((t) => t.event.type.split('.')[2]);
    expect(types).toEqual(['requested', 'authorized', 'dispatched', 'started', 'succeeded']);
  };

  it('runs calls once each before, during and after the loss of the calls stream leader', async () => {
    const jsm = await jetstreamManager(bridge.svc.infra.nc);
    const stream = streamName(bridge.namespace, 'calls');
    expect((await jsm.streams.info(stream)).config.num_replicas).toBe(3);
    await runCall('op-before');

    const leader = (await jsm.streams.info(stream)).cluster!.leader!;
    await cluster.node(leader).kill();
    await runCall('op-during');
    await cluster.node(leader).restart();
    await runCall('op-after');

    expect(phone.device.history.filter((h) => h.tool === 'device.list_contacts')).toHaveLength(3);
    const anomalies = await checkStreamSequences(bridge.svc.infra.js, stream);
    expect(anomalies.map(describeAnomaly)).toEqual([]);
  });
});
