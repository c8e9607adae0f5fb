import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { parseDeviceFrame, sha256Hex, type DeviceFrame } from '@ormuz/contracts';
import { submitFrame, waitFor } from '@ormuz/testing';
import {
  DeviceClient,
  NODE_SCHEDULER,
  SimulatedDevice,
  type DeviceExecutor,
  type DeviceScheduler,
} from '../src/index.js';

/**
 * A bridge stand-in that speaks the wire protocol by hand, so a test can send what a real bridge never would
 * (tampered payloads, malformed text) and decide when to answer claims.
 */
class FakeBridge {
  readonly received: DeviceFrame[] = [];
  private socket: WebSocket | undefined;
  private seq = 0;
  /** When set, every hello is refused with this fatal error and close 1008, as a bridge refuses a credential. */
  refuseHello: { code: string; message: string } | undefined;
  private constructor(readonly server: WebSocketServer) {
    server.on('connection', (ws: WebSocket) => {
      this.socket = ws;
      this.seq = 0;
      ws.on('message', (data: Buffer) => {
        const frame = parseDeviceFrame(data.toString('utf8'));
        this.received.push(frame);
        if (frame.type === 'hello' && this.refuseHello) {
          this.send({ type: 'error', ...this.refuseHello, fatal: true });
          ws.close(1008, this.refuseHello.code);
        } else if (frame.type === 'hello') {
          this.send({
            type: 'welcome',
            tenant: frame.tenant,
            device_id: frame.device_id,
            session_id: `s${this.connections}`,
            protocol_version: 1,
            server_time: new Date().toISOString(),
            heartbeat_interval_ms: 10_000,
            max_frame_bytes: 256 * 1024,
          });
        }
      });
    });
  }

  connections = 0;

  static async start(): Promise<FakeBridge> {
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise((resolve) => server.once('listening', resolve));
    const bridge = new FakeBridge(server);
    server.on('connection', () => {
      bridge.connections += 1;
    });
    return bridge;
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1/devices`;
  }

  /** Sends any object as a frame with the next seq, without validating it. */
  send(frame: Record<string, unknown>): void {
    this.seq += 1;
    this.socket?.send(JSON.stringify({ v: 1, seq: this.seq, ...frame }));
  }

  sendText(text: string): void {
    this.socket?.send(text);
  }

  drop(): void {
    this.socket?.terminate();
  }

  closeWith(code: number, reason: string): void {
    this.socket?.close(code, reason);
  }

  of<T extends DeviceFrame['type']>(type: T): Extract<DeviceFrame, { type: T }>[] {
    return this.received.filter((f): f is Extract<DeviceFrame, { type: T }> => f.type === type);
  }

  async close(): Promise<void> {
    for (const client of this.server.clients) client.terminate();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

describe('DeviceClient against a hand-driven bridge', () => {
  let bridge: FakeBridge;
  let dir: string;
  const clients: DeviceClient[] = [];
  let device: SimulatedDevice;

  beforeEach(async () => {
    bridge = await FakeBridge.start();
    dir = mkdtempSync(join(tmpdir(), 'ormuz-device-client-'));
    device = new SimulatedDevice();
  });

  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close();
    await bridge.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function connect(executor: DeviceExecutor = device.execute, closeGraceMs?: number): Promise<DeviceClient> {
    const client = new DeviceClient({
      url: bridge.url,
      tenant: 'acme',
      deviceId: 'phone-1',
      token: 'token',
      journalDir: join(dir, 'journal'),
      executor,
      targetPackage: device.targetPackage,
      backoff: { initialDelayMs: 20, maxDelayMs: 100 },
      ...(closeGraceMs === undefined ? {} : { closeGraceMs }),
    }).start();
    clients.push(client);
    await waitFor(() => client.connected, { message: 'the welcome' });
    return client;
  }

  it('announces in hello how many requests it takes in flight', async () => {
    await connect();
    expect(bridge.of('hello')[0]?.max_in_flight).toBe(32);
    const small = new DeviceClient({
      url: bridge.url,
      tenant: 'acme',
      deviceId: 'phone-2',
      token: 'token',
      journalDir: join(dir, 'journal-2'),
      executor: device.execute,
      targetPackage: device.targetPackage,
      maxInFlight: 4,
    }).start();
    clients.push(small);
    await waitFor(() => bridge.of('hello').find((h) => h.device_id === 'phone-2'), { message: 'the second hello' });
    expect(bridge.of('hello').find((h) => h.device_id === 'phone-2')?.max_in_flight).toBe(4);
  });

  it('tells its owner when the bridge refuses its credential', async () => {
    bridge.refuseHello = { code: 'unauthenticated', message: 'The device credential was not accepted.' };
    const refusals: { code: string; message: string }[] = [];
    const client = new DeviceClient({
      url: bridge.url,
      tenant: 'acme',
      deviceId: 'phone-1',
      token: 'bad',
      journalDir: join(dir, 'journal'),
      executor: device.execute,
      targetPackage: device.targetPackage,
      backoff: { initialDelayMs: 20, maxDelayMs: 40 },
      onAuthenticationRefused: (error) => {
        refusals.push(error);
        void client.close();
      },
    }).start();
    clients.push(client);
    await waitFor(() => refusals.length > 0, { message: 'the refusal' });
    expect(refusals[0]).toEqual({ code: 'unauthenticated', message: 'The device credential was not accepted.' });
    expect(client.connected).toBe(false);
  });

  it('runs nothing when the payload does not match its hash, and says so', async () => {
    const client = await connect();
    bridge.send({
      ...submitFrame('r1', 'device.send_message', { recipient: 'Alice Martin', message_body: 'Hi' }),
      payload: '{"body":"Pay 500","to":"Alice Martin"}',
    });

    const error = await waitFor(() => bridge.of('error')[0], { message: 'the error frame' });
    expect(error).toMatchObject({ code: 'payload_mismatch', request_id: 'r1', fatal: false });
    expect(bridge.of('start_claim')).toEqual([]);
    expect(client.requestState('r1')).toBe('unknown');
    expect(device.history).toEqual([]);
  });

  it('answers a malformed frame with an error frame and stays connected', async () => {
    const client = await connect();
    bridge.sendText('{not json');
    bridge.send({ type: 'submit', request_id: 'r1' });
    await waitFor(() => bridge.of('error').length === 2, { message: 'two error frames' });
    expect(bridge.of('error').map((e) => e.code)).toEqual(['malformed_json', 'schema']);
    expect(client.connected).toBe(true);
  });

  it('runs only after the grant and resends the outcome until it is acknowledged', async () => {
    const client = await connect();
    bridge.send(submitFrame('r1', 'device.list_contacts', { limit: 2 }));
    await waitFor(() => bridge.of('start_claim')[0], { message: 'the claim' });
    expect(device.history).toEqual([]);
    expect(client.requestState('r1')).toBe('claimed');

    bridge.send({ type: 'start_granted', request_id: 'r1' });
    const outcome = await waitFor(() => bridge.of('outcome')[0], { message: 'the outcome' });
    expect(outcome).toMatchObject({
      status: 'succeeded',
      result: { total: 4, partial: true, continuation: expect.any(String) },
    });

    bridge.drop();
    await waitFor(() => bridge.connections === 2 && bridge.of('outcome').length === 2, {
      message: 'the outcome to be resent',
    });
    bridge.send({ type: 'outcome_ack', request_id: 'r1' });
    await waitFor(() => client.journalEntry('r1')?.acked, { message: 'the acknowledgement' });

    bridge.drop();
    await waitFor(() => bridge.connections === 3 && client.connected, { message: 'the third connection' });
    bridge.send({ type: 'status_query', request_id: 'r1' });
    await waitFor(() => bridge.of('status_report')[0], { message: 'the status report' });
    expect(bridge.of('outcome')).toHaveLength(2);
    expect(device.history).toHaveLength(1);
  });

  it('waits the longest backoff after its current connection was replaced, and reconnects sooner after a drop', async () => {
    // Reconnect delays the client asks for; timers still run on Node's clock.
    const delays: number[] = [];
    const scheduler: DeviceScheduler = {
      timeout: (fn, ms, keepAlive) => {
        delays.push(ms);
        return NODE_SCHEDULER.timeout(fn, ms, keepAlive);
      },
      interval: (fn, ms, keepAlive) => NODE_SCHEDULER.interval(fn, ms, keepAlive),
    };
    const client = new DeviceClient({
      url: bridge.url,
      tenant: 'acme',
      deviceId: 'phone-1',
      token: 'token',
      journalDir: join(dir, 'journal'),
      executor: device.execute,
      targetPackage: device.targetPackage,
      backoff: { initialDelayMs: 20, maxDelayMs: 400 },
      scheduler,
      random: () => 0,
    }).start();
    clients.push(client);
    await waitFor(() => client.connected, { message: 'the welcome' });
    const before = delays.length;
    bridge.drop();
    await waitFor(() => bridge.connections === 2 && client.connected, { message: 'the reconnect after a drop' });
    // Equal jitter with random 0: half of the first ceiling (20 ms).
    expect(delays.slice(before)).toContain(10);
    const afterDrop = delays.length;
    bridge.send({
      type: 'error',
      code: 'replaced',
      message: 'A newer connection of this device took over.',
      fatal: true,
    });
    bridge.closeWith(4001, 'replaced');
    await waitFor(() => delays.length > afterDrop && !client.connected, {
      message: 'the reconnect scheduled after the replacement',
    });
    expect(delays.slice(afterDrop)).toContain(200);
    expect(delays.slice(afterDrop)).not.toContain(10);
  });

  it('claims again after a reconnect when the grant was lost, and runs once', async () => {
    await connect();
    bridge.send(submitFrame('r1', 'device.open_app', { package_name: 'com.example.messages' }));
    await waitFor(() => bridge.of('start_claim')[0], { message: 'the first claim' });

    bridge.drop();
    await waitFor(() => bridge.of('start_claim').length === 2, { message: 'the claim to be sent again' });
    bridge.send({ type: 'start_granted', request_id: 'r1' });
    await waitFor(() => bridge.of('outcome')[0], { message: 'the outcome' });
    expect(device.history).toHaveLength(1);
    expect(device.foreground?.package).toBe('com.example.messages');
  });

  it('reports a run cut short by a restart as interrupted and never runs it again', async () => {
    const first = await connect(() => new Promise(() => undefined), 50);
    const frame = submitFrame('r1', 'device.tap', { ref: 'e2' });
    bridge.send(frame);
    await waitFor(() => bridge.of('start_claim')[0], { message: 'the claim' });
    bridge.send({ type: 'start_granted', request_id: 'r1' });
    await waitFor(() => first.requestState('r1') === 'started', { message: 'the start' });
    await first.close();

    const second = await connect();
    const report = await waitFor(() => bridge.of('status_report').find((r) => r.request_id === 'r1'), {
      message: 'the unsolicited report',
    });
    expect(report).toMatchObject({ state: 'interrupted', payload_sha256: sha256Hex(String(frame['payload'])) });
    bridge.send(frame);
    await waitFor(() => bridge.of('status_report').filter((r) => r.request_id === 'r1').length === 2, {
      message: 'the duplicate to be answered',
    });
    expect(second.requestState('r1')).toBe('interrupted');
    expect(bridge.of('start_claim')).toHaveLength(1);
    expect(device.history).toEqual([]);
  });

  it('does not start a request that arrives after its deadline', async () => {
    const client = await connect();
    bridge.send({
      ...submitFrame('r1', 'device.list_contacts', {}),
      deadline: new Date(Date.now() - 1_000).toISOString(),
    });
    const report = await waitFor(() => bridge.of('status_report')[0], { message: 'the refusal' });
    expect(report).toMatchObject({ state: 'rejected', reason: { code: 'deadline_passed' } });
    expect(client.requestState('r1')).toBe('rejected');
    expect(bridge.of('start_claim')).toEqual([]);
  });

  it('stops a running request when cancelled and reports the failure', async () => {
    let running = false;
    const client = await connect(
      (_tool, _args, context) =>
        new Promise((_resolve, reject) => {
          running = true;
          context.signal.addEventListener('abort', () => reject(new Error('Stopped before sending.')));
        }),
    );
    bridge.send(submitFrame('r1', 'device.list_contacts', {}));
    await waitFor(() => bridge.of('start_claim')[0], { message: 'the claim' });
    bridge.send({ type: 'start_granted', request_id: 'r1' });
    await waitFor(() => running, { message: 'the executor to run' });
    expect(client.requestState('r1')).toBe('started');
    bridge.send({ type: 'cancel', request_id: 'r1', reason: 'The owner changed their mind.' });
    const outcome = await waitFor(() => bridge.of('outcome')[0], { message: 'the outcome' });
    expect(outcome).toMatchObject({
      status: 'failed',
      error: { code: 'cancelled', message: 'Stopped before sending.' },
    });
  });
});
