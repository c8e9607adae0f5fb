import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import {
  DeviceFrameCodec,
  canonicalPayload,
  type DeviceFrame,
  type DeviceFrameDraft,
  type HelloFrameV1,
  type OutcomeFrameV1,
  type StartClaimFrameV1,
  type StatusReportFrameV1,
} from '@ormuz/contracts';
import { DeviceClient, SimulatedDevice, runSimulatedDevice, type SimulatedDeviceHandle } from '@ormuz/device-sdk';
import { submitFrame, waitFor } from '@ormuz/testing';
import {
  DeviceGateway,
  type ConnectedDevice,
  type DeviceAddress,
  type DeviceAuthenticator,
  type DisconnectCause,
  type ExecutionHandler,
  type StartClaimDecision,
} from '../src/transport/device-gateway.js';

const TENANT = 'acme';
const PHONE: DeviceAddress = { tenant: TENANT, deviceId: 'phone-1' };
const TOKENS: Record<string, DeviceAddress> = {
  'token-phone-1': PHONE,
  'token-phone-2': { tenant: TENANT, deviceId: 'phone-2' },
};

const authenticator: DeviceAuthenticator = {
  authenticate: async (hello) => TOKENS[hello.token] ?? null,
};

/** The log's side of the protocol, in memory: claims win unless the call was sealed first. */
class InMemoryExecutions implements ExecutionHandler {
  readonly sealed = new Set<string>();
  readonly granted = new Map<string, string>();
  readonly claims: StartClaimFrameV1[] = [];
  readonly outcomes: OutcomeFrameV1[] = [];
  readonly reports: StatusReportFrameV1[] = [];
  readonly deviceErrors: DeviceFrame[] = [];
  readonly events: string[] = [];
  readonly connected: ConnectedDevice[] = [];
  readonly disconnects: { device: ConnectedDevice; cause: DisconnectCause; grantedWithoutOutcome: string[] }[] = [];

  onConnected(device: ConnectedDevice, _hello: HelloFrameV1): void {
    this.connected.push(device);
    this.events.push(`connected ${device.sessionId}`);
  }

  async onStartClaim(device: ConnectedDevice, frame: StartClaimFrameV1): Promise<StartClaimDecision> {
    this.claims.push(frame);
    if (this.sealed.has(frame.request_id)) {
      return { granted: false, reason: 'sealed', message: `Request ${frame.request_id} was sealed before it started.` };
    }
    const holder = this.granted.get(frame.request_id);
    if (holder !== undefined && holder !== device.deviceId) {
      return { granted: false, reason: 'already_started', message: 'Another device started it.' };
    }
    this.granted.set(frame.request_id, device.deviceId);
    return { granted: true };
  }

  async onOutcome(_device: ConnectedDevice, frame: OutcomeFrameV1): Promise<void> {
    this.outcomes.push(frame);
  }

  onStatusReport(_device: ConnectedDevice, frame: StatusReportFrameV1): void {
    this.reports.push(frame);
  }

  onDeviceError(_device: ConnectedDevice, frame: DeviceFrame): void {
    this.deviceErrors.push(frame);
  }

  onDisconnected(device: ConnectedDevice, cause: DisconnectCause): void {
    this.events.push(`disconnected ${device.sessionId}`);
    const finished = new Set(this.outcomes.map((o) => o.request_id));
    const inFlight = [...this.granted.keys()].filter((id) => !finished.has(id));
    this.disconnects.push({ device, cause, grantedWithoutOutcome: inFlight });
  }

  outcome(requestId: string): OutcomeFrameV1 | undefined {
    return this.outcomes.find((o) => o.request_id === requestId);
  }

  report(requestId: string, state?: StatusReportFrameV1['state']): StatusReportFrameV1 | undefined {
    return this.reports.find((r) => r.request_id === requestId && (state === undefined || r.state === state));
  }
}

/** A hand-driven device connection, for the cases a well-behaved client never produces. */
class RawDevice {
  readonly frames: DeviceFrame[] = [];
  readonly codec = new DeviceFrameCodec();
  closeCode: number | undefined;
  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => this.frames.push(JSON.parse(data.toString('utf8')) as DeviceFrame));
    ws.on('close', (code: number) => {
      this.closeCode = code;
    });
    ws.on('error', () => undefined);
  }

  static async connect(url: string, options: { autoPong?: boolean } = {}): Promise<RawDevice> {
    const ws = new WebSocket(url, { autoPong: options.autoPong ?? true });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    return new RawDevice(ws);
  }

  send(draft: DeviceFrameDraft): void {
    this.ws.send(this.codec.encode(draft));
  }

  hello(token = 'token-phone-1', deviceId = 'phone-1'): void {
    this.send({
      type: 'hello',
      device_id: deviceId,
      tenant: TENANT,
      boot_id: 'raw-boot',
      protocol_version: 1,
      policy_version: null,
      token,
    });
  }

  frame<T extends DeviceFrame['type']>(type: T): Extract<DeviceFrame, { type: T }> | undefined {
    return this.frames.find((f): f is Extract<DeviceFrame, { type: T }> => f.type === type);
  }
}

describe('DeviceGateway with a simulated device', () => {
  let gateway: DeviceGateway;
  let executions: InMemoryExecutions;
  let dir: string;
  const cleanups: (() => Promise<void> | void)[] = [];

  beforeEach(async () => {
    executions = new InMemoryExecutions();
    gateway = new DeviceGateway({
      host: '127.0.0.1',
      port: 0,
      authenticator,
      handler: executions,
      heartbeatIntervalMs: 200,
      helloTimeoutMs: 1_000,
    });
    await gateway.listen();
    dir = mkdtempSync(join(tmpdir(), 'ormuz-device-gateway-'));
  });

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    await gateway.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function startPhone(device = new SimulatedDevice()): Promise<SimulatedDeviceHandle> {
    const handle = runSimulatedDevice({
      url: gateway.url(),
      tenant: TENANT,
      deviceId: 'phone-1',
      token: 'token-phone-1',
      journalDir: join(dir, 'journal'),
      device,
      backoff: { initialDelayMs: 20, maxDelayMs: 200 },
    });
    cleanups.push(() => handle.close());
    await waitFor(() => handle.client.connected && gateway.isConnected(PHONE), { message: 'the phone to connect' });
    return handle;
  }

  it('runs a submit once and acknowledges its outcome', async () => {
    const phone = await startPhone();
    expect(
      gateway.send(
        PHONE,
        submitFrame('r1', 'device.send_message', { recipient: 'Alice Martin', message_body: 'On my way' }),
      ),
    ).toBe(true);

    const outcome = await waitFor(() => executions.outcome('r1'), { message: 'the outcome' });
    expect(outcome).toMatchObject({
      status: 'succeeded',
      result: { message_id: 'msg-1', to: { name: 'Alice Martin' } },
    });
    expect(phone.device.messages.map((m) => m.body)).toEqual(['On my way']);
    expect(executions.claims.map((c) => c.request_id)).toEqual(['r1']);
    await waitFor(() => phone.client.journalEntry('r1')?.acked, { message: 'the outcome to be acknowledged' });
  });

  it('answers a duplicate submit with the recorded outcome and does not run it again', async () => {
    const phone = await startPhone();
    const frame = submitFrame('r1', 'device.send_message', { recipient: 'Bob Chen', message_body: 'Hi' });
    gateway.send(PHONE, frame);
    await waitFor(() => executions.outcome('r1'), { message: 'the first outcome' });

    gateway.send(PHONE, frame);
    await waitFor(() => executions.outcomes.length === 2, { message: 'the replayed outcome' });
    expect(executions.outcomes[1]).toEqual({ ...executions.outcomes[0], seq: executions.outcomes[1]!.seq });
    expect(phone.device.history).toHaveLength(1);
    expect(phone.device.messages).toHaveLength(1);
    expect(executions.claims).toHaveLength(1);
  });

  it('refuses the same request id with different bytes as a conflict', async () => {
    const phone = await startPhone();
    gateway.send(PHONE, submitFrame('r1', 'device.send_message', { recipient: 'Bob Chen', message_body: 'Hi' }));
    await waitFor(() => executions.outcome('r1'), { message: 'the outcome' });

    gateway.send(
      PHONE,
      submitFrame('r1', 'device.send_message', { recipient: 'Bob Chen', message_body: 'Send me your PIN' }),
    );
    const error = await waitFor(
      () => executions.deviceErrors.find((f) => f.type === 'error' && f.code === 'request_conflict'),
      { message: 'the conflict' },
    );
    expect(error).toMatchObject({ request_id: 'r1', fatal: false });
    expect(phone.device.messages.map((m) => m.body)).toEqual(['Hi']);
  });

  it('never runs a request whose start claim is refused because it was sealed', async () => {
    const phone = await startPhone();
    executions.sealed.add('r1');
    gateway.send(
      PHONE,
      submitFrame('r1', 'device.send_message', { recipient: 'Alice Martin', message_body: 'Too late' }),
    );

    await waitFor(() => phone.client.requestState('r1') === 'refused', { message: 'the refusal to be journaled' });
    expect(phone.client.journalEntry('r1')?.reason).toEqual({
      code: 'sealed',
      message: 'Request r1 was sealed before it started.',
    });
    expect(phone.device.history).toEqual([]);
    expect(executions.outcomes).toEqual([]);

    gateway.send(
      PHONE,
      submitFrame('r1', 'device.send_message', { recipient: 'Alice Martin', message_body: 'Too late' }),
    );
    await waitFor(() => executions.report('r1', 'refused'), { message: 'the duplicate to report the refusal' });
    expect(executions.claims).toHaveLength(1);
  });

  it('honours a seal that reaches the device before the submit', async () => {
    const phone = await startPhone();
    gateway.send(PHONE, { type: 'seal', request_id: 'r1' });
    await waitFor(() => executions.report('r1', 'sealed'), { message: 'the seal to be reported' });

    gateway.send(PHONE, submitFrame('r1', 'device.tap', { ref: 'e2' }));
    await waitFor(() => executions.reports.filter((r) => r.request_id === 'r1').length === 2, {
      message: 'the submit to be answered',
    });
    expect(executions.claims).toEqual([]);
    expect(phone.device.history).toEqual([]);
  });

  it('refuses to send a submit whose payload does not match its hash', async () => {
    const phone = await startPhone();
    const frame = {
      ...submitFrame('r1', 'device.send_message', { recipient: 'Alice Martin', message_body: 'Hi' }),
      payload: '{"body":"Pay 500","to":"Alice Martin"}',
    };
    expect(() => gateway.send(PHONE, frame)).toThrow(expect.objectContaining({ code: 'payload_mismatch' }));
    gateway.send(PHONE, { type: 'status_query', request_id: 'r1' });
    await waitFor(() => executions.report('r1', 'unknown'), { message: 'the status report' });
    expect(phone.device.history).toEqual([]);
  });

  it('answers a status query from the journal without running anything', async () => {
    const phone = await startPhone();
    gateway.send(PHONE, submitFrame('r1', 'device.list_contacts', {}));
    await waitFor(() => executions.outcome('r1'), { message: 'the outcome' });

    gateway.send(PHONE, { type: 'status_query', request_id: 'r1' });
    gateway.send(PHONE, { type: 'status_query', request_id: 'never-sent' });
    await waitFor(() => executions.report('never-sent'), { message: 'both reports' });
    expect(executions.report('r1')).toMatchObject({ state: 'succeeded', payload_sha256: canonicalPayload({}).sha256 });
    expect(executions.report('never-sent')?.state).toBe('unknown');
    expect(phone.device.history).toHaveLength(1);
  });

  it('refuses a denylisted app and an unknown foreground app before claiming', async () => {
    const device = new SimulatedDevice({ foreground: null });
    await startPhone(device);
    gateway.send(PHONE, submitFrame('bank', 'device.open_app', { package_name: 'com.example.bank' }));
    gateway.send(PHONE, submitFrame('blind', 'device.tap', { x: 10, y: 10 }));

    const denied = await waitFor(() => executions.report('bank', 'rejected'), { message: 'the denylist refusal' });
    const blind = await waitFor(() => executions.report('blind', 'rejected'), { message: 'the foreground refusal' });
    expect(denied.reason?.code).toBe('package_denied');
    expect(blind.reason).toMatchObject({
      code: 'foreground_unknown',
      message: expect.stringMatching(/foreground_package/),
    });
    expect(executions.claims).toEqual([]);
    expect(device.history).toEqual([]);
  });

  it('reports an unknown tool as a failed outcome that names the real tools', async () => {
    await startPhone();
    gateway.send(PHONE, submitFrame('r1', 'device.self_destruct', {}));
    const outcome = await waitFor(() => executions.outcome('r1'), { message: 'the outcome' });
    expect(outcome).toMatchObject({
      status: 'failed',
      error: { code: 'unknown_tool', message: expect.stringMatching(/device\.tap/) },
    });
  });

  it('does not run a finished request again after the device restarts with the same journal', async () => {
    const first = await startPhone();
    const frame = submitFrame('r1', 'device.send_message', { recipient: 'Alice Martin', message_body: 'Once' });
    gateway.send(PHONE, frame);
    await waitFor(() => first.client.journalEntry('r1')?.acked, { message: 'the acknowledged outcome' });
    await first.close();
    await waitFor(() => !gateway.isConnected(PHONE), { message: 'the old connection to go' });

    const second = await startPhone();
    expect(executions.connected.at(-1)?.bootId).toBe(second.client.bootId);
    expect(second.client.bootId).not.toBe(first.client.bootId);
    gateway.send(PHONE, frame);
    await waitFor(() => executions.outcomes.length === 2, { message: 'the replayed outcome' });
    expect(executions.outcomes[1]).toMatchObject({ status: 'succeeded', result: { message_id: 'msg-1' } });
    expect(second.device.history).toEqual([]);
    expect(executions.claims).toHaveLength(1);
  });

  it('reports a connection dropped after the start, then delivers the late outcome after reconnecting', async () => {
    const device = new SimulatedDevice();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let runs = 0;
    const client = new DeviceClient({
      url: gateway.url(),
      tenant: TENANT,
      deviceId: 'phone-1',
      token: 'token-phone-1',
      journalDir: join(dir, 'journal'),
      targetPackage: device.targetPackage,
      backoff: { initialDelayMs: 20, maxDelayMs: 100 },
      executor: async (tool, args, context) => {
        runs += 1;
        await gate;
        return device.execute(tool, args, context);
      },
    }).start();
    cleanups.push(() => client.close());
    await waitFor(() => client.connected, { message: 'the phone to connect' });

    gateway.send(
      PHONE,
      submitFrame('r1', 'device.send_message', { recipient: 'Bob Chen', message_body: 'Mid-flight' }),
    );
    await waitFor(() => runs === 1, { message: 'the executor to start' });
    const firstSession = client.session!.session_id;
    gateway.disconnect(PHONE, 'network test');

    const drop = await waitFor(() => executions.disconnects[0], { message: 'onDisconnected' });
    expect(drop.cause).toEqual({ kind: 'disconnected', reason: 'network test' });
    expect(drop.device.sessionId).toBe(firstSession);
    expect(drop.grantedWithoutOutcome).toEqual(['r1']);
    expect(client.requestState('r1')).toBe('started');

    release();
    const outcome = await waitFor(() => executions.outcome('r1'), { message: 'the late outcome' });
    expect(outcome.status).toBe('succeeded');
    expect(executions.connected.length).toBe(2);
    await waitFor(() => client.journalEntry('r1')?.acked, { message: 'the acknowledgement' });
    expect(runs).toBe(1);
    expect(device.messages).toHaveLength(1);
  });
});

describe('DeviceGateway connection rules', () => {
  let gateway: DeviceGateway;
  let executions: InMemoryExecutions;
  const raws: RawDevice[] = [];

  beforeEach(async () => {
    executions = new InMemoryExecutions();
    gateway = new DeviceGateway({
      host: '127.0.0.1',
      port: 0,
      authenticator,
      handler: executions,
      heartbeatIntervalMs: 100,
      helloTimeoutMs: 500,
      maxFrameBytes: 16 * 1024,
    });
    await gateway.listen();
  });

  afterEach(async () => {
    raws.splice(0).forEach((r) => r.ws.terminate());
    await gateway.close();
  });

  async function raw(options?: { autoPong?: boolean }): Promise<RawDevice> {
    const device = await RawDevice.connect(gateway.url(), options);
    raws.push(device);
    return device;
  }

  async function welcomed(options?: { autoPong?: boolean }): Promise<RawDevice> {
    const device = await raw(options);
    device.hello();
    await waitFor(() => device.frame('welcome'), { message: 'the welcome' });
    return device;
  }

  it('closes a device that floods it with 4005 and logs the close at warn with who, why and what was queued', async () => {
    const lines: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow = new InMemoryExecutions();
    slow.onStartClaim = async () => {
      await held;
      return { granted: false, reason: 'unknown_request', message: 'no such request' };
    };
    const flooded = new DeviceGateway({
      host: '127.0.0.1',
      port: 0,
      authenticator,
      handler: slow,
      maxQueuedFrames: 5,
      logger: {
        info: (message, fields) => lines.push({ level: 'info', message, ...(fields ? { fields } : {}) }),
        warn: (message, fields) => lines.push({ level: 'warn', message, ...(fields ? { fields } : {}) }),
      },
    });
    await flooded.listen();
    try {
      const device = await RawDevice.connect(flooded.url());
      device.hello();
      await waitFor(() => device.frame('welcome'), { message: 'the welcome' });
      for (let i = 0; i < 10; i++) device.send({ type: 'start_claim', request_id: `r${i}` });
      await waitFor(() => device.closeCode, { message: 'the close' });
      expect(device.closeCode).toBe(4005);
      const closed = await waitFor(() => lines.find((l) => l.message === 'device connection closed'), {
        message: 'the log line',
      });
      expect(closed).toMatchObject({
        level: 'warn',
        fields: { tenant: TENANT, deviceId: 'phone-1', code: 4005, cause: 'overloaded', welcomed: true },
      });
      expect(lines.find((l) => l.message === 'device connected')).toMatchObject({
        level: 'info',
        fields: { maxInFlight: 32 },
      });
    } finally {
      release();
      await flooded.close();
    }
  });

  it('logs an ordinary close at info', async () => {
    const lines: { level: string; fields?: Record<string, unknown> }[] = [];
    const logged = new DeviceGateway({
      host: '127.0.0.1',
      port: 0,
      authenticator,
      handler: new InMemoryExecutions(),
      logger: {
        info: (message, fields) =>
          message === 'device connection closed' && lines.push({ level: 'info', ...(fields ? { fields } : {}) }),
        warn: (message, fields) =>
          message === 'device connection closed' && lines.push({ level: 'warn', ...(fields ? { fields } : {}) }),
      },
    });
    await logged.listen();
    try {
      const device = await RawDevice.connect(logged.url());
      device.hello();
      await waitFor(() => device.frame('welcome'), { message: 'the welcome' });
      device.ws.close(1000, 'done');
      await waitFor(() => lines.length === 1, { message: 'the log line' });
      expect(lines[0]).toMatchObject({
        level: 'info',
        fields: { tenant: TENANT, deviceId: 'phone-1', code: 1000, reason: 'done' },
      });
    } finally {
      await logged.close();
    }
  });

  it('refuses a hello whose window is out of range, saying which field, and caps a large one', async () => {
    const zero = await raw();
    zero.ws.send(
      JSON.stringify({
        v: 1,
        seq: 1,
        type: 'hello',
        device_id: 'phone-1',
        tenant: TENANT,
        boot_id: 'b',
        protocol_version: 1,
        policy_version: null,
        token: 'token-phone-1',
        max_in_flight: 0,
      }),
    );
    await waitFor(() => zero.closeCode, { message: 'the close' });
    expect(zero.closeCode).toBe(1008);
    expect(zero.frame('error')).toMatchObject({
      code: 'schema',
      fatal: true,
      message: expect.stringContaining('max_in_flight'),
    });

    const large = await raw();
    large.send({
      type: 'hello',
      device_id: 'phone-1',
      tenant: TENANT,
      boot_id: 'b',
      protocol_version: 1,
      policy_version: null,
      token: 'token-phone-1',
      max_in_flight: 1000,
    });
    await waitFor(() => large.frame('welcome'), { message: 'the welcome' });
    expect(large.frame('welcome')?.max_in_flight).toBe(256);
    expect(gateway.windowOf(PHONE)).toEqual({ capacity: 256, inFlight: 0, backlog: 0 });
  });

  it('refuses a device whose credential is not accepted, then closes', async () => {
    const device = await raw();
    device.hello('stolen-token');
    await waitFor(() => device.closeCode, { message: 'the close' });
    expect(device.closeCode).toBe(1008);
    expect(device.frame('error')).toMatchObject({ code: 'unauthenticated', fatal: true });
    expect(executions.connected).toEqual([]);
  });

  it('refuses a credential that belongs to another device', async () => {
    const device = await raw();
    device.hello('token-phone-2', 'phone-1');
    await waitFor(() => device.closeCode, { message: 'the close' });
    expect(device.frame('error')).toMatchObject({ code: 'identity_mismatch', fatal: true });
  });

  it('closes a connection whose first frame is not hello', async () => {
    const device = await raw();
    device.send({ type: 'start_claim', request_id: 'r1' });
    await waitFor(() => device.closeCode, { message: 'the close' });
    expect(device.frame('error')).toMatchObject({ code: 'hello_required', fatal: true });
    expect(executions.claims).toEqual([]);
  });

  it('welcomes an authenticated device with its identity and limits', async () => {
    const device = await welcomed();
    expect(device.frame('welcome')).toMatchObject({
      tenant: TENANT,
      device_id: 'phone-1',
      protocol_version: 1,
      heartbeat_interval_ms: 100,
      max_frame_bytes: 16 * 1024,
    });
    expect(gateway.isConnected(PHONE)).toBe(true);
    expect(gateway.connectedDevices().map((d) => d.deviceId)).toEqual(['phone-1']);
  });

  it('answers invalid frames with an error frame and keeps the connection', async () => {
    const device = await welcomed();
    device.ws.send('{"v":1,');
    device.ws.send(JSON.stringify({ v: 1, seq: 50, type: 'outcome', request_id: 'r1', status: 'succeeded' }));
    device.ws.send(JSON.stringify({ v: 7, seq: 51, type: 'heartbeat' }));
    device.ws.send(JSON.stringify({ v: 1, seq: 52, type: 'status_report', request_id: 'r9', state: 'unknown' }));
    device.ws.send(JSON.stringify({ v: 1, seq: 52, type: 'status_report', request_id: 'r9', state: 'sealed' }));

    await waitFor(
      () => executions.reports.length === 1 && device.frames.filter((f) => f.type === 'error').length === 4,
      { message: 'the answers' },
    );
    const codes = device.frames.flatMap((f) => (f.type === 'error' ? [[f.code, f.fatal, f.request_id]] : []));
    expect(codes).toEqual([
      ['malformed_json', false, undefined],
      ['schema', false, 'r1'],
      ['unsupported_version', false, undefined],
      ['out_of_order', false, 'r9'],
    ]);
    expect(executions.reports[0]?.state).toBe('unknown');
    expect(device.closeCode).toBeUndefined();
  });

  it('grants or refuses start claims through the handler and acknowledges outcomes', async () => {
    const device = await welcomed();
    executions.sealed.add('sealed-1');
    device.send({ type: 'start_claim', request_id: 'r1' });
    device.send({ type: 'start_claim', request_id: 'sealed-1' });
    device.send({
      type: 'outcome',
      request_id: 'r1',
      status: 'failed',
      error: { code: 'executor_failed', message: 'The app crashed.' },
    });

    await waitFor(() => device.frame('outcome_ack'), { message: 'the acknowledgement' });
    expect(device.frames.map((f) => f.type)).toEqual(['welcome', 'start_granted', 'start_refused', 'outcome_ack']);
    expect(device.frame('start_refused')).toMatchObject({ request_id: 'sealed-1', reason: 'sealed' });
  });

  it('closes a connection that sends an oversized frame with 1009', async () => {
    const device = await welcomed();
    device.ws.send(JSON.stringify({ v: 1, seq: 2, type: 'heartbeat', pad: 'x'.repeat(20 * 1024) }));
    await waitFor(() => device.closeCode, { message: 'the close' });
    expect(device.closeCode).toBe(1009);
    const drop = await waitFor(() => executions.disconnects[0], { message: 'onDisconnected' });
    expect(drop.cause).toEqual({ kind: 'protocol_violation', code: 'oversized' });
  });

  it('replaces an older connection of the same device and reports it first', async () => {
    const older = await welcomed();
    const newer = await welcomed();
    await waitFor(() => older.closeCode, { message: 'the older connection to close' });
    expect(older.closeCode).toBe(4001);
    expect(older.frame('error')).toMatchObject({ code: 'replaced', fatal: true });
    const [first, second] = executions.connected;
    expect(executions.events).toEqual([
      `connected ${first!.sessionId}`,
      `disconnected ${first!.sessionId}`,
      `connected ${second!.sessionId}`,
    ]);
    expect(executions.disconnects[0]?.cause).toEqual({ kind: 'replaced', bySessionId: second!.sessionId });
    expect(newer.closeCode).toBeUndefined();
    expect(gateway.isConnected(PHONE)).toBe(true);
  });

  it('drops a peer that stops answering heartbeats', async () => {
    await welcomed({ autoPong: false });
    const drop = await waitFor(() => executions.disconnects[0], { message: 'the heartbeat timeout' });
    expect(drop.cause).toEqual({ kind: 'heartbeat_timeout' });
    expect(gateway.isConnected(PHONE)).toBe(false);
  });

  it('closes a connection that never says hello', async () => {
    const device = await raw();
    await waitFor(() => device.closeCode, { message: 'the hello timeout', timeoutMs: 3_000 });
    expect(device.frame('error')).toMatchObject({ code: 'hello_timeout', fatal: true });
  });

  it('reports every device as disconnected when it closes', async () => {
    await welcomed();
    await gateway.close();
    expect(executions.disconnects.map((d) => d.cause)).toEqual([{ kind: 'server_closing' }]);
  });
});
