/**
 * The bridge's WebSocket endpoint for devices, and the lifecycle of each connection: accepts sockets, authenticates
 * `hello`, keeps one live connection per device (a newer one supersedes the older), pings, closes, and holds each
 * connection's flow-control window. What the frames of a welcomed device mean is routed by the {@link FrameRouter}
 * (frame-router.ts) to an {@link ExecutionHandler}.
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
  DeviceFrameCodec,
  type CancelFrameV1,
  type DeviceFrameDraft,
  type HelloFrameV1,
  type SealFrameV1,
  type StatusQueryFrameV1,
  type SubmitFrameV1,
} from '@ormuz/contracts';
import { FlowWindow } from './flow-window.js';
import {
  clip,
  FrameRouter,
  type ConnectedDevice,
  type DeviceAddress,
  type DeviceGatewayLogger,
  type FrameHandler,
  type FrameLanes,
  type RoutedConnection,
} from './frame-router.js';

export type {
  ConnectedDevice,
  DeviceAddress,
  DeviceGatewayLogger,
  FrameHandler,
  OutcomeRefusal,
  StartClaimDecision,
} from './frame-router.js';

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
 * What the gateway calls for an authenticated device: its frames (routed as {@link FrameHandler} says) and its
 * connection's life. For one connection, calls about the same request are made one at a time in the order its frames
 * arrived, while calls about different requests may run side by side (at most the frames the connection may queue);
 * `onConnected`, `onDisconnected` and frames naming no request wait for every earlier call and hold back every later
 * one.
 */
export interface ExecutionHandler extends FrameHandler {
  /** The device was welcomed. Frames it sends next wait until this resolves. */
  onConnected(device: ConnectedDevice, hello: HelloFrameV1): Promise<void> | void;
  /** The connection ended. Never proof that a started request finished. Called once per welcomed connection. */
  onDisconnected(device: ConnectedDevice, cause: DisconnectCause): Promise<void> | void;
  /** The device's flow-control window has room again: {@link DeviceGateway.room} requests may be sent now. */
  onWindowOpen?(device: ConnectedDevice): void;
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

/** What a connection asks of its gateway: the lifecycle steps that concern the device's one live connection. */
interface Lifecycle {
  release(conn: Connection, requestId: string): void;
  end(conn: Connection, cause: DisconnectCause, code: number, reason: string): void;
  welcome(conn: Connection, hello: HelloFrameV1): Promise<void>;
}

/** One accepted socket, from its accept to its close; what the {@link FrameRouter} sees of it. */
class Connection implements RoutedConnection {
  device: ConnectedDevice | undefined;
  /** Requests in flight to the device; set at the welcome. */
  window: FlowWindow<DeviceCommandDraft> | undefined;
  /** The device's hello announced `trace_context`: its submits may carry a `traceparent`. */
  traceContext = false;
  /** The identity the hello claimed, for the log line of a connection closed before its welcome. */
  claimed: DeviceAddress | undefined;
  /** Answered the last ping (or sent something since). */
  alive = true;
  helloTimer: NodeJS.Timeout | undefined;
  /** Closes the connection when its credential expires. */
  expiryTimer: NodeJS.Timeout | undefined;
  /** Set when the end of the connection was decided here, so the close event reports it rather than a plain close. */
  cause: DisconnectCause | undefined;
  disconnectReported = false;
  /** Its frames on their way to the handler. */
  readonly frames: FrameLanes;

  constructor(
    private readonly gateway: Lifecycle,
    router: FrameRouter,
    readonly ws: WebSocket,
    readonly codec: DeviceFrameCodec,
    readonly remoteAddress: string | undefined,
  ) {
    this.frames = router.attach(this);
  }

  get open(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  /** @throws DeviceProtocolError when the draft is invalid (a bug here or in the handler's answer). */
  send(draft: DeviceFrameDraft): void {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    this.ws.send(this.codec.encode(draft));
  }

  release(requestId: string): void {
    this.gateway.release(this, requestId);
  }

  fatal(code: string, message: string, closeCode: number): void {
    this.send({ type: 'error', code, message: clip(message, 'The connection was refused.'), fatal: true });
    this.gateway.end(this, { kind: 'closed', code: closeCode, reason: code }, closeCode, code);
  }

  overloaded(): void {
    this.gateway.end(
      this,
      { kind: 'protocol_violation', code: 'overloaded' },
      DEVICE_CLOSE_CODES.overloaded,
      'too many frames in flight',
    );
  }

  hello(frame: HelloFrameV1): Promise<void> {
    return this.gateway.welcome(this, frame);
  }
}

const keyOf = (device: DeviceAddress): string => `${device.tenant}/${device.deviceId}`;

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
  private readonly maxInFlight: number;
  private readonly logger: DeviceGatewayLogger;
  private readonly router: FrameRouter;
  private readonly lifecycle: Lifecycle = {
    release: (conn, requestId) => this.release(conn, requestId),
    end: (conn, cause, code, reason) => this.end(conn, cause, code, reason),
    welcome: (conn, hello) => this.welcome(conn, hello),
  };
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
    this.maxInFlight = Math.min(options.maxInFlight ?? DEVICE_MAX_IN_FLIGHT_LIMIT, DEVICE_MAX_IN_FLIGHT_LIMIT);
    this.logger = options.logger ?? {};
    this.router = new FrameRouter(options.handler, this.logger, options.maxQueuedFrames ?? 1_000);
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
    // A seal or cancel of a request the device has finished with on this connection (it refused the submit, or its
    // outcome was acknowledged) is not sent: there is nothing left to stop, and it would hold a slot for an answer
    // already given. A status query still goes: the device answers it from its journal.
    if ((frame.type === 'seal' || frame.type === 'cancel') && conn.window.finishedWith(frame.request_id)) return true;
    // A device that did not announce trace context refuses a submit with a field it does not know.
    const sent = frame.type === 'submit' && frame.traceparent && !conn.traceContext ? withoutTrace(frame) : frame;
    const now = conn.window.offer(frame.request_id, sent);
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
    conn.send({
      type: 'error',
      code: 'credential_revoked',
      message: 'The credential this connection used was revoked; connect again with a current token.',
      fatal: true,
    });
    this.end(
      conn,
      { kind: 'disconnected', reason: 'credential revoked' },
      DEVICE_CLOSE_CODES.disconnected,
      'credential revoked',
    );
    return true;
  }

  /**
   * A connection of the device on another replica, accepted at `since`, takes over: this replica's connection, when
   * it is older, is closed as replaced (fatal `replaced`, close 4001). @returns whether a connection was closed.
   */
  yieldTo(device: DeviceAddress, bySessionId: string, since: Date): boolean {
    const conn = this.devices.get(keyOf(device));
    if (!conn?.device || conn.device.sessionId === bySessionId || conn.device.connectedAt > since) return false;
    conn.send({
      type: 'error',
      code: 'replaced',
      message: 'A newer connection of this device took over; this one is closed.',
      fatal: true,
    });
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
    await Promise.all(connections.map((c) => c.frames.drained()));
    const server = this.server;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  // --- connections ------------------------------------------------------------------------------------------------

  private accept(ws: WebSocket, request: IncomingMessage): void {
    if (this.closed) {
      ws.close(DEVICE_CLOSE_CODES.goingAway, 'bridge shutting down');
      return;
    }
    const conn = new Connection(
      this.lifecycle,
      this.router,
      ws,
      new DeviceFrameCodec(this.maxFrameBytes),
      request.socket.remoteAddress,
    );
    this.connections.add(conn);
    conn.helloTimer = setTimeout(() => {
      if (!conn.device) {
        conn.fatal(
          'hello_timeout',
          `No valid hello within ${this.helloTimeoutMs} ms; send hello first.`,
          DEVICE_CLOSE_CODES.helloTimeout,
        );
      }
    }, this.helloTimeoutMs);
    ws.on('pong', () => {
      conn.alive = true;
    });
    ws.on('message', (data: RawData, isBinary: boolean) => {
      conn.alive = true;
      conn.frames.receive(data, isBinary);
    });
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
      queuedFrames: conn.frames.queued,
      remoteAddress: conn.remoteAddress,
    };
    const ordinary =
      ORDINARY_CLOSES.has(code) && cause.kind !== 'protocol_violation' && cause.kind !== 'heartbeat_timeout';
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
    void conn.frames
      .schedule(undefined, () => this.options.handler.onDisconnected(device, cause))
      .catch((err: unknown) =>
        this.logger.error?.('onDisconnected failed', { deviceId: device.deviceId, error: (err as Error).message }),
      );
  }

  /** The device is done with a request: its window slot is free; send what waited for it. */
  private release(conn: Connection, requestId: string): void {
    const window = conn.window;
    if (!window?.holds(requestId)) return;
    for (const frame of window.release(requestId)) conn.send(frame);
    if (conn.device && window.room > 0 && conn.ws.readyState === WebSocket.OPEN)
      this.options.handler.onWindowOpen?.(conn.device);
  }

  /**
   * The connection's hello, in its turn: authenticated, then welcomed as the device's one live connection (an older
   * one is closed as replaced, and its disconnect reaches the handler first).
   */
  private async welcome(conn: Connection, hello: HelloFrameV1): Promise<void> {
    conn.claimed = { tenant: hello.tenant, deviceId: hello.device_id };
    let identity: AuthenticatedAddress | null;
    try {
      identity = await this.options.authenticator.authenticate(hello);
    } catch (err) {
      this.logger.error?.('device authentication failed', { deviceId: hello.device_id, error: (err as Error).message });
      return conn.fatal(
        'internal',
        'The bridge could not check the device credential; try again later.',
        DEVICE_CLOSE_CODES.internalError,
      );
    }
    if (!identity) {
      this.logger.warn?.('refused a device credential', { tenant: hello.tenant, deviceId: hello.device_id });
      return conn.fatal(
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
      return conn.fatal(
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
      previous.send({
        type: 'error',
        code: 'replaced',
        message: 'A newer connection of this device took over; this one is closed.',
        fatal: true,
      });
      this.end(previous, { kind: 'replaced', bySessionId: device.sessionId }, DEVICE_CLOSE_CODES.replaced, 'replaced');
      this.reportDisconnect(previous, previous.cause ?? { kind: 'replaced', bySessionId: device.sessionId });
      // The older connection's disconnect reaches the handler before this one's connect.
      await previous.frames.drained();
    }
    conn.device = device;
    // Devices built before flow control announce nothing and get the default; none gets more than the bridge allows.
    const capacity = Math.min(hello.max_in_flight ?? DEVICE_DEFAULT_MAX_IN_FLIGHT, this.maxInFlight);
    conn.window = new FlowWindow<DeviceCommandDraft>(capacity);
    conn.traceContext = hello.trace_context === true;
    this.devices.set(keyOf(device), conn);
    conn.send({
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
    conn.expiryTimer = setTimeout(
      () => {
        if (Date.now() < at.getTime()) return this.closeAtExpiry(conn, at);
        conn.send({
          type: 'error',
          code: 'credential_expired',
          message: 'The credential this connection used has expired; connect again with a current token.',
          fatal: true,
        });
        this.end(
          conn,
          { kind: 'disconnected', reason: 'credential expired' },
          DEVICE_CLOSE_CODES.disconnected,
          'credential expired',
        );
      },
      Math.max(0, delay),
    );
    conn.expiryTimer.unref();
  }
}

function withoutTrace(frame: DeviceCommandDraft & { readonly type: 'submit' }): DeviceCommandDraft {
  const { traceparent: _dropped, ...rest } = frame;
  return rest;
}
