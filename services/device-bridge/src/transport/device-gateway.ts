/**
 * The bridge's WebSocket endpoint for devices: authenticates `hello`, keeps one live connection per device, validates
 * every frame, and hands start claims, outcomes and status reports to an {@link ExecutionHandler}.
 *
 * Framework-free and free of NATS and the event log: the handler is where claims and outcomes meet the log.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { WebSocketServer, WebSocket, type RawData } from 'ws';
import {
  DEVICE_CLOSE_CODES,
  DEVICE_DEFAULT_MAX_IN_FLIGHT,
  DEVICE_GATEWAY_PATH,
  DEVICE_MAX_FRAME_BYTES,
  DEVICE_MAX_IN_FLIGHT_LIMIT,
  DEVICE_PROTOCOL_VERSION,
  DEVICE_SUBMIT_REFUSAL_CODES,
  DeviceFrameCodec,
  isDeviceProtocolError,
  isDeviceProtocolId,
  type CancelFrameV1,
  type DeviceFrame,
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
import { FlowWindow, reportEndsRequest } from './flow-window.js';

/** Which device: ids are unique within a tenant only, so the tenant is always part of the address. */
export interface DeviceAddress {
  readonly tenant: string;
  readonly deviceId: string;
}

/** A device on an accepted connection, as the handler sees it. */
export interface ConnectedDevice extends DeviceAddress {
  /** Unique per accepted connection (also sent to the device in `welcome`). */
  readonly sessionId: string;
  /** The device process's boot id from `hello`; a new one means the device restarted. */
  readonly bootId: string;
  readonly policyVersion: number | null;
  readonly connectedAt: Date;
  readonly remoteAddress: string | undefined;
  /** The credential the hello presented (null when the authenticator does not name credentials). */
  readonly credentialId: string | null;
  /** When that credential stops being valid; the connection is closed then. Null: no expiry. */
  readonly credentialExpiresAt: Date | null;
}

/** What a {@link DeviceAuthenticator} proves about a hello. */
export interface AuthenticatedAddress extends DeviceAddress {
  readonly credentialId?: string;
  readonly expiresAt?: Date | null;
}

/**
 * Decides who a `hello` comes from, from its credential alone. Returns the authenticated identity, or `null` to
 * refuse. The gateway additionally refuses a hello whose claimed tenant or device id differ from the result.
 * Throwing closes the connection as an internal error.
 */
export interface DeviceAuthenticator {
  authenticate(hello: HelloFrameV1): Promise<AuthenticatedAddress | null>;
}

/** The answer to a start claim. */
export type StartClaimDecision =
  | { readonly granted: true }
  | { readonly granted: false; readonly reason: StartRefusalReason; readonly message: string };

/** Why a device's connection ended. */
export type DisconnectCause =
  /** The socket closed (by the device, or the network); `code` 1006 means it dropped without a close frame. */
  | { readonly kind: 'closed'; readonly code: number; readonly reason: string }
  /** The device stopped answering pings. */
  | { readonly kind: 'heartbeat_timeout' }
  /** A newer connection of the same device took over. */
  | { readonly kind: 'replaced'; readonly bySessionId: string }
  /** The device sent a frame over the size limit (closed with 1009) or too many frames at once. */
  | { readonly kind: 'protocol_violation'; readonly code: 'oversized' | 'overloaded' }
  /** {@link DeviceGateway.disconnect} was called. */
  | { readonly kind: 'disconnected'; readonly reason: string }
  /** {@link DeviceGateway.close} was called. */
  | { readonly kind: 'server_closing' };

/**
 * What the gateway calls for an authenticated device. For one connection, calls about the same request are made one
 * at a time in the order its frames arrived, while calls about different requests may run side by side (at most the
 * frames the connection may queue); `onConnected`, `onDisconnected` and frames naming no request wait for every
 * earlier call and hold back every later one. A rejected claim or outcome is logged and answered with a non-fatal
 * `internal` error frame.
 */
export interface ExecutionHandler {
  /** The device was welcomed. Frames it sends next wait until this resolves. */
  onConnected(device: ConnectedDevice, hello: HelloFrameV1): Promise<void> | void;
  /**
   * The device asks to start a request. Grant only once the start is recorded (winning against a seal).
   * The same device may claim the same request again after a reconnect or restart when it never received the
   * answer; it journals a start before running, so granting a repeated claim from the device that holds the grant
   * cannot run the request twice. When this rejects, the device is told to retry later and nothing runs.
   */
  onStartClaim(device: ConnectedDevice, frame: StartClaimFrameV1): Promise<StartClaimDecision>;
  /**
   * The device reports an outcome. The gateway sends `outcome_ack` once this resolves; the device resends the
   * outcome after reconnects until it is acknowledged, so the same outcome can arrive more than once.
   */
  onOutcome(device: ConnectedDevice, frame: OutcomeFrameV1): Promise<OutcomeRefusal | undefined | void>;
  /** The device reports a request's journal state (an answer, a refusal before claiming, or an interrupted run). */
  onStatusReport(device: ConnectedDevice, frame: StatusReportFrameV1): Promise<void> | void;
  /** The connection ended. Never proof that a started request finished. Called once per welcomed connection. */
  onDisconnected(device: ConnectedDevice, cause: DisconnectCause): Promise<void> | void;
  /** Progress of a running request. */
  onProgress?(device: ConnectedDevice, frame: ProgressFrameV1): Promise<void> | void;
  /** The device refused a frame the bridge sent (e.g. a submit whose payload did not match its hash). */
  onDeviceError?(device: ConnectedDevice, frame: ErrorFrameV1): Promise<void> | void;
  /** The device's flow-control window has room again: {@link DeviceGateway.room} requests may be sent now. */
  onWindowOpen?(device: ConnectedDevice): void;
}

/**
 * An outcome the handler refused to record (the request is another device's, unknown, or not started): the device is
 * told with a non-fatal error of that code naming the request, and gets no `outcome_ack`.
 */
export interface OutcomeRefusal {
  readonly refused: 'not_assigned' | 'unknown_request' | 'not_started';
  readonly message: string;
}

/** Where the gateway reports what it does. Tokens and payloads are never passed to it. */
export interface DeviceGatewayLogger {
  debug?(message: string, fields?: Record<string, unknown>): void;
  info?(message: string, fields?: Record<string, unknown>): void;
  warn?(message: string, fields?: Record<string, unknown>): void;
  error?(message: string, fields?: Record<string, unknown>): void;
}

/** Options of {@link DeviceGateway}. */
export interface DeviceGatewayOptions {
  /** Interface to listen on, e.g. `127.0.0.1` or `0.0.0.0`. */
  readonly host: string;
  /** TCP port; 0 picks a free one (read it from {@link DeviceGateway.listen}). */
  readonly port: number;
  /** URL path of the endpoint; default {@link DEVICE_GATEWAY_PATH}. Other paths are refused with HTTP 400. */
  readonly path?: string;
  readonly authenticator: DeviceAuthenticator;
  readonly handler: ExecutionHandler;
  /** Ping interval in milliseconds; a device that misses one is dropped at the next. Default 15 000. */
  readonly heartbeatIntervalMs?: number;
  /** Time allowed from connect to an authenticated hello, in milliseconds. Default 10 000. */
  readonly helloTimeoutMs?: number;
  /** Largest accepted frame in bytes; larger ones close the connection with 1009. Default 256 KiB. */
  readonly maxFrameBytes?: number;
  /** Frames of one connection allowed to wait for processing before it is closed. Default 1 000. */
  readonly maxQueuedFrames?: number;
  /**
   * Most requests in flight to one device, whatever its hello announces. Default and upper bound
   * {@link DEVICE_MAX_IN_FLIGHT_LIMIT}; keep `maxInFlight × 3` below `maxQueuedFrames`.
   */
  readonly maxInFlight?: number;
  readonly logger?: DeviceGatewayLogger;
}

/** Frames the platform sends to a device through {@link DeviceGateway.send}. */
export type DeviceCommandDraft = DeviceFrameDraft<SubmitFrameV1 | StatusQueryFrameV1 | SealFrameV1 | CancelFrameV1>;

interface Connection {
  readonly ws: WebSocket;
  readonly codec: DeviceFrameCodec;
  readonly remoteAddress: string | undefined;
  device?: ConnectedDevice;
  /** Requests in flight to the device; set at the welcome. */
  window?: FlowWindow<DeviceCommandDraft>;
  /** The identity the hello claimed, for the log line of a connection closed before its welcome. */
  claimed?: DeviceAddress;
  alive: boolean;
  queued: number;
  /**
   * Frames are handled in arrival order per request, and requests side by side: `lanes` holds the tail of each
   * request's frames; `barrier` the last frame that concerned no single request (the hello, a heartbeat, an
   * unreadable frame, the disconnect), which waited for everything before it and which everything after it waits for.
   */
  barrier: Promise<void>;
  readonly lanes: Map<string, Promise<void>>;
  helloTimer?: NodeJS.Timeout;
  /** Closes the connection when its credential expires. */
  expiryTimer?: NodeJS.Timeout;
  /** Set when the end of the connection was decided here, so the close event reports it rather than a plain close. */
  cause?: DisconnectCause;
  disconnectReported: boolean;
}

const keyOf = (device: DeviceAddress): string => `${device.tenant}/${device.deviceId}`;

function textOf(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  return (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data)).toString('utf8');
}

function clip(message: string, empty = 'The start was refused.'): string {
  const text = message.trim() === '' ? empty : message;
  return text.length <= 4096 ? text : `${text.slice(0, 4095)}…`;
}

/** Closes the bridge decides on, or expects, in normal operation: logged at info; every other close at warn. */
const ORDINARY_CLOSES: ReadonlySet<number> = new Set<number>([
  DEVICE_CLOSE_CODES.normal,
  DEVICE_CLOSE_CODES.goingAway,
  DEVICE_CLOSE_CODES.replaced,
  DEVICE_CLOSE_CODES.disconnected,
]);

/**
 * A WebSocket server for devices at `ws://<host>:<port><path>`.
 *
 * Per connection: the first frame must be `hello` (anything else: fatal `hello_required`); the hello is checked by
 * the {@link DeviceAuthenticator} (refusal: fatal `unauthenticated`, closed with 1008); a newer connection of the same
 * device replaces the older (which gets a fatal `replaced` and close 4001). After the welcome, invalid frames get a
 * non-fatal `error` frame and the connection stays; frames over the size limit close it with 1009. Every
 * `heartbeatIntervalMs` each socket is pinged and one that did not answer the previous ping is terminated.
 */
export class DeviceGateway {
  private readonly path: string;
  private readonly heartbeatIntervalMs: number;
  private readonly helloTimeoutMs: number;
  private readonly maxFrameBytes: number;
  private readonly maxQueuedFrames: number;
  private readonly maxInFlight: number;
  private readonly logger: DeviceGatewayLogger;
  private readonly connections = new Set<Connection>();
  private readonly devices = new Map<string, Connection>();
  private server: WebSocketServer | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: DeviceGatewayOptions) {
    this.path = options.path ?? DEVICE_GATEWAY_PATH;
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? 15_000;
    this.helloTimeoutMs = options.helloTimeoutMs ?? 10_000;
    this.maxFrameBytes = options.maxFrameBytes ?? DEVICE_MAX_FRAME_BYTES;
    this.maxQueuedFrames = options.maxQueuedFrames ?? 1_000;
    this.maxInFlight = Math.min(options.maxInFlight ?? DEVICE_MAX_IN_FLIGHT_LIMIT, DEVICE_MAX_IN_FLIGHT_LIMIT);
    this.logger = options.logger ?? {};
  }

  /**
   * Starts listening. Resolves with the bound address once the port is open.
   * @throws the listen error (e.g. EADDRINUSE); calling it twice or after {@link close} is an error.
   */
  async listen(): Promise<AddressInfo> {
    if (this.server || this.closed) throw new Error('the device gateway is already listening or closed');
    const server = new WebSocketServer({
      host: this.options.host,
      port: this.options.port,
      path: this.path,
      maxPayload: this.maxFrameBytes,
      perMessageDeflate: false,
      clientTracking: false,
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('listening', resolve);
      server.once('error', reject);
    });
    server.on('error', (err: Error) => this.logger.error?.('device gateway server error', { error: err.message }));
    server.on('connection', (ws: WebSocket, request: IncomingMessage) => this.accept(ws, request));
    this.heartbeat = setInterval(() => this.beat(), this.heartbeatIntervalMs);
    this.heartbeat.unref();
    return this.address();
  }

  /** The bound address. @throws when not listening. */
  address(): AddressInfo {
    const address = this.server?.address();
    if (!address || typeof address === 'string') throw new Error('the device gateway is not listening');
    return address;
  }

  /** The URL devices connect to, e.g. `ws://127.0.0.1:8787/v1/devices`. @throws when not listening. */
  url(): string {
    const { address, port, family } = this.address();
    return `ws://${family === 'IPv6' ? `[${address}]` : address}:${port}${this.path}`;
  }

  /** True when the device has a welcomed, open connection. */
  isConnected(device: DeviceAddress): boolean {
    return this.devices.get(keyOf(device))?.ws.readyState === WebSocket.OPEN;
  }

  /** The devices currently connected. */
  connectedDevices(): ConnectedDevice[] {
    return [...this.devices.values()].flatMap((c) => (c.device ? [c.device] : []));
  }

  /**
   * Sends a submit (or a status query, seal or cancel) to a connected device, within its flow-control window: a frame
   * about a request not yet in flight waits while the device already holds as many requests as its window allows,
   * and goes, in order, as the device finishes others.
   *
   * @returns `true` when the frame was sent or queued on the device's connection (not a delivery receipt: the
   *   device's answer is), `false` when the device is not connected.
   * @throws DeviceProtocolError when the frame is invalid, e.g. a submit whose payload does not match its hash.
   */
  send(device: DeviceAddress, frame: DeviceCommandDraft): boolean {
    const conn = this.devices.get(keyOf(device));
    if (!conn?.window || conn.ws.readyState !== WebSocket.OPEN) return false;
    const now = conn.window.offer(frame.request_id, frame);
    if (now) conn.ws.send(conn.codec.encode(now));
    return true;
  }

  /**
   * How many more requests the device takes now: free slots of its window, 0 while frames wait for room or when it
   * is not connected here. A dispatcher that sends at most this many submits never queues one.
   */
  room(device: DeviceAddress): number {
    const conn = this.devices.get(keyOf(device));
    return conn?.window && conn.ws.readyState === WebSocket.OPEN ? conn.window.room : 0;
  }

  /** Requests in flight to the device and frames waiting for room, for status and tests. */
  windowOf(device: DeviceAddress): { capacity: number; inFlight: number; backlog: number } | undefined {
    const window = this.devices.get(keyOf(device))?.window;
    return window && { capacity: window.capacity, inFlight: window.inFlight, backlog: window.backlog };
  }

  /**
   * Closes a device's connection on purpose (revoked credentials, operator action); `onDisconnected` is called with
   * kind `disconnected`. The device will try to reconnect. @returns false when it was not connected.
   */
  disconnect(device: DeviceAddress, reason: string): boolean {
    const conn = this.devices.get(keyOf(device));
    if (!conn) return false;
    this.end(conn, { kind: 'disconnected', reason }, DEVICE_CLOSE_CODES.disconnected, reason);
    return true;
  }

  /**
   * Closes the device's connection if it authenticated with one of `credentialIds` (revoked, or ended by a
   * rotation): a fatal `credential_revoked` error, then close 4004. @returns whether a connection was closed.
   */
  endCredentials(device: DeviceAddress, credentialIds: readonly string[]): boolean {
    const conn = this.devices.get(keyOf(device));
    if (!conn?.device?.credentialId || !credentialIds.includes(conn.device.credentialId)) return false;
    this.sendTo(conn, {
      type: 'error',
      code: 'credential_revoked',
      message: 'The credential this connection used was revoked; connect again with a current token.',
      fatal: true,
    });
    this.end(conn, { kind: 'disconnected', reason: 'credential revoked' }, DEVICE_CLOSE_CODES.disconnected, 'credential revoked');
    return true;
  }

  /**
   * A connection of the device on another replica, accepted at `since`, takes over: this replica's connection, when
   * it is older, is closed as replaced (fatal `replaced`, close 4001). @returns whether a connection was closed.
   */
  yieldTo(device: DeviceAddress, bySessionId: string, since: Date): boolean {
    const conn = this.devices.get(keyOf(device));
    if (!conn?.device || conn.device.sessionId === bySessionId || conn.device.connectedAt > since) return false;
    this.sendTo(conn, { type: 'error', code: 'replaced', message: 'A newer connection of this device took over; this one is closed.', fatal: true });
    this.end(conn, { kind: 'replaced', bySessionId }, DEVICE_CLOSE_CODES.replaced, 'replaced');
    return true;
  }

  /** Stops accepting, closes every connection (`onDisconnected` with `server_closing`) and releases the port. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.heartbeat);
    const connections = [...this.connections];
    const closing = connections.map(
      (conn) =>
        new Promise<void>((resolve) => {
          if (conn.ws.readyState === WebSocket.CLOSED) return resolve();
          conn.ws.once('close', () => resolve());
          this.end(conn, { kind: 'server_closing' }, DEVICE_CLOSE_CODES.goingAway, 'bridge shutting down');
          // A peer that does not answer the close handshake is cut off.
          setTimeout(() => conn.ws.terminate(), 2_000).unref();
        }),
    );
    await Promise.all(closing);
    // Each close queued onDisconnected behind the connection's frames; let the handler finish them.
    await Promise.all(connections.map((c) => this.drained(c)));
    const server = this.server;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  // --- connections ------------------------------------------------------------------------------------------------

  private accept(ws: WebSocket, request: IncomingMessage): void {
    if (this.closed) {
      ws.close(DEVICE_CLOSE_CODES.goingAway, 'bridge shutting down');
      return;
    }
    const conn: Connection = {
      ws,
      codec: new DeviceFrameCodec(this.maxFrameBytes),
      remoteAddress: request.socket.remoteAddress,
      alive: true,
      queued: 0,
      barrier: Promise.resolve(),
      lanes: new Map(),
      disconnectReported: false,
    };
    this.connections.add(conn);
    conn.helloTimer = setTimeout(() => {
      if (!conn.device) {
        this.fatal(
          conn,
          'hello_timeout',
          `No valid hello within ${this.helloTimeoutMs} ms; send hello first.`,
          DEVICE_CLOSE_CODES.helloTimeout,
        );
      }
    }, this.helloTimeoutMs);
    ws.on('pong', () => {
      conn.alive = true;
    });
    ws.on('message', (data: RawData, isBinary: boolean) => this.enqueue(conn, data, isBinary));
    ws.on('error', (err: Error & { code?: string }) => {
      // ws closes the socket with 1009 itself; remember why, for onDisconnected.
      if (err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH')
        conn.cause ??= { kind: 'protocol_violation', code: 'oversized' };
      this.logger.debug?.('device socket error', { error: err.message, code: err.code });
    });
    ws.on('close', (code: number, reason: Buffer) => {
      clearTimeout(conn.helloTimer);
      clearTimeout(conn.expiryTimer);
      this.connections.delete(conn);
      if (conn.device && this.devices.get(keyOf(conn.device)) === conn) this.devices.delete(keyOf(conn.device));
      const cause = conn.cause ?? { kind: 'closed', code, reason: reason.toString('utf8') };
      this.logClose(conn, code, reason.toString('utf8'), cause);
      this.reportDisconnect(conn, cause);
    });
  }

  /** Every close is logged with who, why and what was in flight: info when ordinary, warn otherwise. */
  private logClose(conn: Connection, code: number, reason: string, cause: DisconnectCause): void {
    const who = conn.device ?? conn.claimed;
    const fields = {
      tenant: who?.tenant,
      deviceId: who?.deviceId,
      sessionId: conn.device?.sessionId,
      welcomed: conn.device !== undefined,
      code,
      reason: reason || cause.kind,
      cause: cause.kind === 'protocol_violation' ? cause.code : cause.kind,
      inFlight: conn.window?.inFlight,
      backlog: conn.window?.backlog,
      queuedFrames: conn.queued,
      remoteAddress: conn.remoteAddress,
    };
    const ordinary = ORDINARY_CLOSES.has(code) && cause.kind !== 'protocol_violation' && cause.kind !== 'heartbeat_timeout';
    if (ordinary) this.logger.info?.('device connection closed', fields);
    else this.logger.warn?.('device connection closed', fields);
  }

  private beat(): void {
    for (const conn of this.connections) {
      if (!conn.alive) {
        this.logger.warn?.('device missed a heartbeat; dropping it', { deviceId: conn.device?.deviceId });
        conn.cause ??= { kind: 'heartbeat_timeout' };
        conn.ws.terminate();
        continue;
      }
      conn.alive = false;
      if (conn.ws.readyState === WebSocket.OPEN) conn.ws.ping();
    }
  }

  /** Ends a connection for a reason decided here; the close event then reports `cause`. */
  private end(conn: Connection, cause: DisconnectCause, code: number, reason: string): void {
    conn.cause ??= cause;
    clearTimeout(conn.helloTimer);
    if (conn.ws.readyState === WebSocket.OPEN || conn.ws.readyState === WebSocket.CONNECTING)
      conn.ws.close(code, reason.slice(0, 120));
  }

  private reportDisconnect(conn: Connection, cause: DisconnectCause): void {
    const device = conn.device;
    if (!device || conn.disconnectReported) return;
    conn.disconnectReported = true;
    // Behind the connection's queued frames, so the handler sees the disconnect after what preceded it.
    void this.schedule(conn, undefined, () => this.options.handler.onDisconnected(device, cause)).catch((err: unknown) =>
      this.logger.error?.('onDisconnected failed', { deviceId: device.deviceId, error: (err as Error).message }),
    );
  }

  /**
   * Runs `work` after the frames it must follow: with a request id, after that request's earlier frames and the last
   * barrier; without one, as a barrier after everything queued so far. Resolves or rejects with `work`.
   */
  private schedule(conn: Connection, requestId: string | undefined, work: () => unknown): Promise<void> {
    const quiet = (p: Promise<unknown>): Promise<void> => p.then(
      () => undefined,
      () => undefined,
    );
    if (requestId === undefined) {
      const run = Promise.all([conn.barrier, ...conn.lanes.values()]).then(work).then(() => undefined);
      conn.lanes.clear();
      conn.barrier = quiet(run);
      return run;
    }
    const run = (conn.lanes.get(requestId) ?? conn.barrier).then(work).then(() => undefined);
    const tail = quiet(run).then(() => {
      if (conn.lanes.get(requestId) === tail) conn.lanes.delete(requestId);
    });
    conn.lanes.set(requestId, tail);
    return run;
  }

  /** Resolves once every frame queued on the connection so far was handled. */
  private drained(conn: Connection): Promise<void> {
    return Promise.all([conn.barrier, ...conn.lanes.values()]).then(() => undefined);
  }

  private fatal(conn: Connection, code: string, message: string, closeCode: number): void {
    this.sendTo(conn, { type: 'error', code, message: clip(message, 'The connection was refused.'), fatal: true });
    this.end(conn, { kind: 'closed', code: closeCode, reason: code }, closeCode, code);
  }

  /** @throws DeviceProtocolError when the draft is invalid (a bug here or in the handler's answer). */
  private sendTo(conn: Connection, draft: DeviceFrameDraft): void {
    if (conn.ws.readyState !== WebSocket.OPEN) return;
    conn.ws.send(conn.codec.encode(draft));
  }

  /** A non-fatal error; a request id that is not a valid id is left out rather than breaking the frame. */
  private sendError(conn: Connection, code: string, message: string, requestId?: string): void {
    this.sendTo(conn, {
      type: 'error',
      code,
      message: clip(message, 'The frame was not accepted.'),
      fatal: false,
      ...(isDeviceProtocolId(requestId) ? { request_id: requestId } : {}),
    });
  }

  /** The device is done with a request: its window slot is free; send what waited for it. */
  private release(conn: Connection, requestId: string): void {
    const window = conn.window;
    if (!window?.holds(requestId)) return;
    for (const frame of window.release(requestId)) this.sendTo(conn, frame);
    if (conn.device && window.room > 0 && conn.ws.readyState === WebSocket.OPEN) this.options.handler.onWindowOpen?.(conn.device);
  }

  // --- frames -----------------------------------------------------------------------------------------------------

  private enqueue(conn: Connection, data: RawData, isBinary: boolean): void {
    conn.alive = true;
    if (conn.queued >= this.maxQueuedFrames) {
      this.end(
        conn,
        { kind: 'protocol_violation', code: 'overloaded' },
        DEVICE_CLOSE_CODES.overloaded,
        'too many frames in flight',
      );
      return;
    }
    conn.queued += 1;
    // Decoded on arrival, so `seq` is checked in the order frames came; handled in order per request (see schedule).
    const arrived = this.decode(conn, data, isBinary);
    const requestId = conn.device ? arrived.requestId : undefined;
    this.schedule(conn, requestId, () => this.process(conn, arrived))
      .catch((err: unknown) => {
        this.logger.error?.('device frame handling failed', {
          deviceId: conn.device?.deviceId,
          error: (err as Error).message,
        });
      })
      .finally(() => {
        conn.queued -= 1;
      });
  }

  /** Reads a frame; a frame that cannot be read becomes the answer to give, naming its request when it could. */
  private decode(
    conn: Connection,
    data: RawData,
    isBinary: boolean,
  ): { frame: DeviceFrame; requestId: string | undefined } | { refusal: { code: string; message: string }; requestId: string | undefined } {
    if (isBinary) {
      return {
        refusal: { code: 'malformed_json', message: 'Binary messages are not frames; send each frame as a JSON text message.' },
        requestId: undefined,
      };
    }
    try {
      const frame = conn.codec.decode(textOf(data));
      return { frame, requestId: 'request_id' in frame ? frame.request_id : undefined };
    } catch (err) {
      if (isDeviceProtocolError(err)) return { refusal: { code: err.code, message: err.message }, requestId: err.requestId };
      this.logger.error?.('could not read a device frame', { deviceId: conn.device?.deviceId, error: (err as Error).message });
      return { refusal: { code: 'internal', message: 'The bridge could not read this frame; send it again later.' }, requestId: undefined };
    }
  }

  private async process(
    conn: Connection,
    arrived: ReturnType<DeviceGateway['decode']>,
  ): Promise<void> {
    if (conn.ws.readyState !== WebSocket.OPEN && !conn.device) return;
    if ('refusal' in arrived) return this.refuse(conn, arrived.refusal.code, arrived.refusal.message, arrived.requestId);
    const frame = arrived.frame;
    if (!conn.device) {
      if (frame.type !== 'hello') {
        return this.fatal(
          conn,
          'hello_required',
          `The first frame must be hello, not ${frame.type}.`,
          DEVICE_CLOSE_CODES.policyViolation,
        );
      }
      return this.onHello(conn, frame);
    }
    return this.dispatch(conn, conn.device, frame);
  }

  /** Answers a frame that could not be read: fatal before the hello (nothing can be trusted yet), non-fatal after. */
  private refuse(conn: Connection, code: string, message: string, requestId?: string): void {
    if (!conn.device)
      return this.fatal(
        conn,
        code,
        `${message} The first frame must be a valid hello.`,
        DEVICE_CLOSE_CODES.policyViolation,
      );
    this.sendError(conn, code, message, requestId);
  }

  private async onHello(conn: Connection, hello: HelloFrameV1): Promise<void> {
    conn.claimed = { tenant: hello.tenant, deviceId: hello.device_id };
    let identity: AuthenticatedAddress | null;
    try {
      identity = await this.options.authenticator.authenticate(hello);
    } catch (err) {
      this.logger.error?.('device authentication failed', { deviceId: hello.device_id, error: (err as Error).message });
      return this.fatal(
        conn,
        'internal',
        'The bridge could not check the device credential; try again later.',
        DEVICE_CLOSE_CODES.internalError,
      );
    }
    if (!identity) {
      this.logger.warn?.('refused a device credential', { tenant: hello.tenant, deviceId: hello.device_id });
      return this.fatal(
        conn,
        'unauthenticated',
        'The device credential was not accepted. Refresh the device token or enrol the device again.',
        DEVICE_CLOSE_CODES.policyViolation,
      );
    }
    if (identity.tenant !== hello.tenant || identity.deviceId !== hello.device_id) {
      this.logger.warn?.('refused a hello naming another device than its credential', {
        tenant: hello.tenant,
        deviceId: hello.device_id,
        credentialTenant: identity.tenant,
        credentialDeviceId: identity.deviceId,
      });
      return this.fatal(
        conn,
        'identity_mismatch',
        `The credential belongs to device ${identity.deviceId} of tenant ${identity.tenant}, not to the device the hello names.`,
        DEVICE_CLOSE_CODES.policyViolation,
      );
    }
    if (conn.ws.readyState !== WebSocket.OPEN || this.closed) return;
    clearTimeout(conn.helloTimer);
    const device: ConnectedDevice = {
      tenant: identity.tenant,
      deviceId: identity.deviceId,
      sessionId: randomUUID(),
      bootId: hello.boot_id,
      policyVersion: hello.policy_version,
      connectedAt: new Date(),
      remoteAddress: conn.remoteAddress,
      credentialId: identity.credentialId ?? null,
      credentialExpiresAt: identity.expiresAt ?? null,
    };
    const previous = this.devices.get(keyOf(device));
    if (previous) {
      this.sendTo(previous, {
        type: 'error',
        code: 'replaced',
        message: 'A newer connection of this device took over; this one is closed.',
        fatal: true,
      });
      this.end(previous, { kind: 'replaced', bySessionId: device.sessionId }, DEVICE_CLOSE_CODES.replaced, 'replaced');
      this.reportDisconnect(previous, previous.cause ?? { kind: 'replaced', bySessionId: device.sessionId });
      // The older connection's disconnect reaches the handler before this one's connect.
      await this.drained(previous);
    }
    conn.device = device;
    // Devices built before flow control announce nothing and get the default; none gets more than the bridge allows.
    const capacity = Math.min(hello.max_in_flight ?? DEVICE_DEFAULT_MAX_IN_FLIGHT, this.maxInFlight);
    conn.window = new FlowWindow<DeviceCommandDraft>(capacity);
    this.devices.set(keyOf(device), conn);
    this.sendTo(conn, {
      type: 'welcome',
      tenant: device.tenant,
      device_id: device.deviceId,
      session_id: device.sessionId,
      protocol_version: DEVICE_PROTOCOL_VERSION,
      server_time: new Date().toISOString(),
      heartbeat_interval_ms: this.heartbeatIntervalMs,
      max_frame_bytes: this.maxFrameBytes,
      ...(device.credentialExpiresAt ? { token_expires_at: device.credentialExpiresAt.toISOString() } : {}),
      // Only to devices that asked: an older device refuses a welcome with a field it does not know.
      ...(hello.max_in_flight === undefined ? {} : { max_in_flight: capacity }),
    });
    this.logger.info?.('device connected', {
      tenant: device.tenant,
      deviceId: device.deviceId,
      sessionId: device.sessionId,
      bootId: device.bootId,
      maxInFlight: capacity,
    });
    if (device.credentialExpiresAt) this.closeAtExpiry(conn, device.credentialExpiresAt);
    await this.options.handler.onConnected(device, hello);
  }

  /** A credential that expires ends its connection then: fatal `credential_expired`, close 4004. */
  private closeAtExpiry(conn: Connection, at: Date): void {
    // setTimeout holds at most ~24.8 days; a longer-lived credential is checked again then.
    const delay = Math.min(at.getTime() - Date.now(), 2 ** 31 - 1);
    conn.expiryTimer = setTimeout(() => {
      if (Date.now() < at.getTime()) return this.closeAtExpiry(conn, at);
      this.sendTo(conn, {
        type: 'error',
        code: 'credential_expired',
        message: 'The credential this connection used has expired; connect again with a current token.',
        fatal: true,
      });
      this.end(conn, { kind: 'disconnected', reason: 'credential expired' }, DEVICE_CLOSE_CODES.disconnected, 'credential expired');
    }, Math.max(0, delay));
    conn.expiryTimer.unref();
  }

  private async dispatch(conn: Connection, device: ConnectedDevice, frame: DeviceFrame): Promise<void> {
    const handler = this.options.handler;
    switch (frame.type) {
      case 'start_claim': {
        let decision: StartClaimDecision;
        try {
          decision = await handler.onStartClaim(device, frame);
        } catch (err) {
          this.logger.error?.('onStartClaim failed', {
            deviceId: device.deviceId,
            requestId: frame.request_id,
            error: (err as Error).message,
          });
          return this.sendError(
            conn,
            'internal',
            `The bridge could not record the start of ${frame.request_id}; do not run it. Claim it again later.`,
            frame.request_id,
          );
        }
        if (decision.granted) return this.sendTo(conn, { type: 'start_granted', request_id: frame.request_id });
        this.sendTo(conn, {
          type: 'start_refused',
          request_id: frame.request_id,
          reason: decision.reason,
          message: clip(decision.message),
        });
        return this.release(conn, frame.request_id);
      }
      case 'outcome': {
        let refusal: OutcomeRefusal | undefined | void;
        try {
          refusal = await handler.onOutcome(device, frame);
        } catch (err) {
          this.logger.error?.('onOutcome failed', {
            deviceId: device.deviceId,
            requestId: frame.request_id,
            error: (err as Error).message,
          });
          return this.sendError(
            conn,
            'internal',
            `The bridge could not record the outcome of ${frame.request_id}; keep it and send it again after reconnecting.`,
            frame.request_id,
          );
        }
        if (refusal) return this.sendError(conn, refusal.refused, refusal.message, frame.request_id);
        this.sendTo(conn, { type: 'outcome_ack', request_id: frame.request_id });
        return this.release(conn, frame.request_id);
      }
      case 'status_report':
        try {
          return await handler.onStatusReport(device, frame);
        } finally {
          // The device has said its last word on the request either way; a failure to record it is logged.
          if (reportEndsRequest(frame.state)) this.release(conn, frame.request_id);
        }
      case 'progress':
        return handler.onProgress?.(device, frame);
      case 'error':
        this.logger.warn?.('device reported an error', {
          deviceId: device.deviceId,
          code: frame.code,
          requestId: frame.request_id,
        });
        try {
          return await handler.onDeviceError?.(device, frame);
        } finally {
          if (frame.request_id && DEVICE_SUBMIT_REFUSAL_CODES.has(frame.code)) this.release(conn, frame.request_id);
        }
      case 'heartbeat':
        return;
      case 'hello':
        return this.sendError(
          conn,
          'unexpected_frame',
          'This connection already said hello; reconnect to start a new session.',
        );
      case 'welcome':
      case 'submit':
      case 'start_granted':
      case 'start_refused':
      case 'outcome_ack':
      case 'status_query':
      case 'seal':
      case 'cancel':
        return this.sendError(conn, 'unexpected_frame', `Devices do not send ${frame.type} frames.`);
      default: {
        const unknown: never = frame;
        throw new Error(`unhandled frame ${JSON.stringify(unknown)}`);
      }
    }
  }
}
