/**
 * A real `DeviceGateway` (services/device-bridge) with the log's side of the protocol kept in memory, for tests of
 * the SDK and the simulator against the bridge's actual WebSocket endpoint.
 *
 * The gateway is loaded with a computed dynamic import and described here by structural types, on purpose: the
 * bridge depends on this SDK, so a static import (even `import type`) would add an SDK → bridge edge to Nx's project
 * graph, making it circular and the `^build` task graph cyclic. Only these tests need the gateway, at run time.
 */
import {
  type CancelFrameV1,
  type DeviceFrameDraft,
  type ErrorFrameV1,
  type HelloFrameV1,
  type OutcomeFrameV1,
  type ProgressFrameV1,
  type SealFrameV1,
  type StartClaimFrameV1,
  type StartRefusalReason,
  type StatusQueryFrameV1,
  type StatusReportFrameV1,
  type SubmitFrameV1,
} from '@ormuz/contracts';
import { submitFrame } from '@ormuz/testing';

/** Which device (services/device-bridge `DeviceAddress`). */
export interface DeviceAddress {
  readonly tenant: string;
  readonly deviceId: string;
}

/** A welcomed connection as the gateway reports it (the fields these tests read). */
export interface ConnectedDevice extends DeviceAddress {
  readonly sessionId: string;
  readonly bootId: string;
}

type DisconnectCause = { readonly kind: string; readonly code?: number };
type StartClaimDecision =
  | { readonly granted: true }
  | { readonly granted: false; readonly reason: StartRefusalReason; readonly message: string };

interface ExecutionHandler {
  onConnected(device: ConnectedDevice, hello: HelloFrameV1): void | Promise<void>;
  onStartClaim(device: ConnectedDevice, frame: StartClaimFrameV1): Promise<StartClaimDecision>;
  onOutcome(device: ConnectedDevice, frame: OutcomeFrameV1): Promise<void>;
  onStatusReport(device: ConnectedDevice, frame: StatusReportFrameV1): void;
  onDisconnected(device: ConnectedDevice, cause: DisconnectCause): void;
  onProgress?(device: ConnectedDevice, frame: ProgressFrameV1): void;
  onDeviceError?(device: ConnectedDevice, frame: ErrorFrameV1): void;
}

interface DeviceGateway {
  listen(): Promise<unknown>;
  url(): string;
  send(
    device: DeviceAddress,
    frame: DeviceFrameDraft<SubmitFrameV1 | StatusQueryFrameV1 | SealFrameV1 | CancelFrameV1>,
  ): boolean;
  isConnected(device: DeviceAddress): boolean;
  connectedDevices(): ConnectedDevice[];
  close(): Promise<void>;
}

type DeviceGatewayConstructor = new (options: {
  host: string;
  port: number;
  authenticator: { authenticate(hello: HelloFrameV1): Promise<DeviceAddress | null> };
  handler: ExecutionHandler;
  heartbeatIntervalMs?: number;
}) => DeviceGateway;

async function loadDeviceGateway(): Promise<DeviceGatewayConstructor> {
  const path = ['..', '..', '..', 'services', 'device-bridge', 'src', 'transport', 'device-gateway.js'].join('/');
  return ((await import(path)) as { DeviceGateway: DeviceGatewayConstructor }).DeviceGateway;
}

export const TENANT = 'acme';

/** The credential the bridge accepts for a device. */
export const tokenOf = (deviceId: string): string => `token-${deviceId}`;

/** Where a request stands on the server side, as the log would record it. */
export type ServerStatus = 'dispatched' | 'started' | 'succeeded' | 'failed' | 'outcome_unknown' | 'sealed';

/** The server's record of one request. */
export interface ServerRecord {
  readonly requestId: string;
  readonly deviceId: string;
  readonly submit: DeviceFrameDraft<SubmitFrameV1>;
  status: ServerStatus;
  start?: { readonly bootId: string };
  /** Why the outcome became unknown, kept when a late outcome arrives. */
  unknownCause?: 'connection_lost' | 'reboot';
  outcome?: OutcomeFrameV1;
  /** Every status this record went through, in order (`outcome_unknown:<cause>` for unknowns). */
  readonly history: string[];
}

/**
 * The execution handler of the tests: a claim is granted once per request (again only to the same device and boot),
 * refused after a seal; a disconnect or a new boot makes a started request `outcome_unknown`; an outcome is recorded
 * once, late or not, and duplicates are acknowledged without being recorded again. Every welcomed connection gets
 * the submits of its device's requests that are dispatched but not started, as the bridge does.
 */
export class InMemoryBridge implements ExecutionHandler {
  readonly records = new Map<string, ServerRecord>();
  readonly claims: { readonly requestId: string; readonly bootId: string }[] = [];
  readonly outcomeDeliveries: { readonly frame: OutcomeFrameV1; readonly bootId: string }[] = [];
  readonly reports: { readonly frame: StatusReportFrameV1; readonly bootId: string }[] = [];
  readonly deviceErrors: ErrorFrameV1[] = [];
  readonly connections: ConnectedDevice[] = [];
  readonly disconnects: { readonly deviceId: string; readonly cause: DisconnectCause; readonly started: string[] }[] =
    [];
  /** Request ids whose next outcome delivery the log "fails" to record (no ack is sent). */
  readonly failNextOutcome = new Set<string>();
  /** Request ids whose next start claim the log "fails" to record (neither granted nor refused). */
  readonly failNextClaim = new Set<string>();
  private gateway!: DeviceGateway;

  private constructor() {}

  /** Starts a gateway on a free loopback port with this handler. */
  static async start(): Promise<InMemoryBridge> {
    const bridge = new InMemoryBridge();
    const DeviceGateway = await loadDeviceGateway();
    bridge.gateway = new DeviceGateway({
      host: '127.0.0.1',
      port: 0,
      authenticator: {
        authenticate: async (hello) =>
          hello.token === tokenOf(hello.device_id) ? { tenant: TENANT, deviceId: hello.device_id } : null,
      },
      handler: bridge,
    });
    await bridge.gateway.listen();
    return bridge;
  }

  get url(): string {
    return this.gateway.url();
  }

  close(): Promise<void> {
    return this.gateway.close();
  }

  connectedCount(): number {
    return this.gateway.connectedDevices().length;
  }

  /** Records a request as dispatched to a device and sends its submit if the device is connected. */
  dispatch(deviceId: string, requestId: string, tool: string, args: unknown): ServerRecord {
    const submit = submitFrame(requestId, tool, args);
    const record: ServerRecord = { requestId, deviceId, submit, status: 'dispatched', history: ['dispatched'] };
    this.records.set(requestId, record);
    this.gateway.send({ tenant: TENANT, deviceId }, submit);
    return record;
  }

  /** Sends the recorded submit again, as a redelivery would. */
  resubmit(requestId: string): boolean {
    const record = this.record(requestId);
    return this.gateway.send({ tenant: TENANT, deviceId: record.deviceId }, record.submit);
  }

  statusQuery(requestId: string): boolean {
    const record = this.record(requestId);
    return this.gateway.send(
      { tenant: TENANT, deviceId: record.deviceId },
      { type: 'status_query', request_id: requestId },
    );
  }

  cancel(requestId: string, reason: string): boolean {
    const record = this.record(requestId);
    return this.gateway.send(
      { tenant: TENANT, deviceId: record.deviceId },
      { type: 'cancel', request_id: requestId, reason },
    );
  }

  record(requestId: string): ServerRecord {
    const record = this.records.get(requestId);
    if (!record) throw new Error(`no request ${requestId} was dispatched`);
    return record;
  }

  reportsOf(requestId: string): StatusReportFrameV1[] {
    return this.reports.filter((r) => r.frame.request_id === requestId).map((r) => r.frame);
  }

  deliveriesOf(requestId: string): OutcomeFrameV1[] {
    return this.outcomeDeliveries.filter((d) => d.frame.request_id === requestId).map((d) => d.frame);
  }

  private move(record: ServerRecord, status: ServerStatus, note: string = status): void {
    record.status = status;
    record.history.push(note);
  }

  // --- ExecutionHandler -------------------------------------------------------------------------------------------

  onConnected(device: ConnectedDevice): void {
    this.connections.push(device);
    for (const record of this.records.values()) {
      if (record.deviceId !== device.deviceId) continue;
      if (record.status === 'started' && record.start?.bootId !== device.bootId) {
        record.unknownCause = 'reboot';
        this.move(record, 'outcome_unknown', 'outcome_unknown:reboot');
      }
      if (record.status === 'dispatched') this.gateway.send(device, record.submit);
    }
  }

  async onStartClaim(device: ConnectedDevice, frame: StartClaimFrameV1): Promise<StartClaimDecision> {
    this.claims.push({ requestId: frame.request_id, bootId: device.bootId });
    if (this.failNextClaim.delete(frame.request_id)) throw new Error('the log is unavailable');
    const record = this.records.get(frame.request_id);
    if (!record || record.deviceId !== device.deviceId)
      return { granted: false, reason: 'not_assigned', message: `Request ${frame.request_id} is not this device's.` };
    if (record.status === 'sealed')
      return { granted: false, reason: 'sealed', message: `Request ${frame.request_id} was sealed.` };
    if (record.status === 'dispatched') {
      record.start = { bootId: device.bootId };
      this.move(record, 'started');
      return { granted: true };
    }
    if (record.status === 'started' && record.start?.bootId === device.bootId) return { granted: true };
    return { granted: false, reason: 'already_started', message: `Request ${frame.request_id} already started.` };
  }

  async onOutcome(device: ConnectedDevice, frame: OutcomeFrameV1): Promise<void> {
    this.outcomeDeliveries.push({ frame, bootId: device.bootId });
    if (this.failNextOutcome.delete(frame.request_id)) throw new Error('the log is unavailable');
    const record = this.records.get(frame.request_id);
    if (!record || record.deviceId !== device.deviceId) return;
    if (record.status === 'started' || record.status === 'outcome_unknown') {
      record.outcome = frame;
      this.move(record, frame.status);
    }
  }

  onStatusReport(device: ConnectedDevice, frame: StatusReportFrameV1): void {
    this.reports.push({ frame, bootId: device.bootId });
  }

  onDisconnected(device: ConnectedDevice, cause: DisconnectCause): void {
    const started: string[] = [];
    for (const record of this.records.values()) {
      if (record.deviceId === device.deviceId && record.status === 'started') {
        started.push(record.requestId);
        record.unknownCause = 'connection_lost';
        this.move(record, 'outcome_unknown', 'outcome_unknown:connection_lost');
      }
    }
    this.disconnects.push({ deviceId: device.deviceId, cause, started });
  }

  onDeviceError(_device: ConnectedDevice, frame: ErrorFrameV1): void {
    this.deviceErrors.push(frame);
  }
}
