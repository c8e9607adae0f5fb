/**
 * The device's connection to its bridge: one WebSocket at a time, opened with `hello` and accepted by `welcome`,
 * watched by heartbeat, and opened again with backoff after every loss until the client closes. It knows frames as
 * frames only: it encodes and decodes them, answers what cannot be read or is never sent to a device, and hands each
 * frame of the execution protocol to the client, which routes it to the protocol step it belongs to.
 */
import { WebSocket, type RawData } from 'ws';
import {
  DEVICE_CLOSE_CODES,
  DEVICE_DEFAULT_MAX_IN_FLIGHT,
  DEVICE_PROTOCOL_VERSION,
  DeviceFrameCodec,
  isDeviceProtocolError,
  type DeviceFrame,
  type DeviceFrameDraft,
  type DeviceFrameOf,
  type ErrorFrameV1,
  type WelcomeFrameV1,
} from '@ormuz/contracts';
import type { DeviceClientOptions, DeviceClientSetup } from './device-client.js';
import type { CancelTimer } from './scheduler.js';

/** One WebSocket to the bridge, from connect to close. */
export interface DeviceLink {
  readonly ws: WebSocket;
  readonly codec: DeviceFrameCodec;
  welcome?: WelcomeFrameV1;
  /**
   * Requests whose start claim was sent on this connection and not answered yet. The execution protocol keeps it;
   * it lives on the link because a claim is answered on the connection it was sent on, or never.
   */
  readonly claims: Set<string>;
  lastSeen: number;
  /** Cancels the hello timeout before the welcome, the heartbeat check after it. */
  cancelTimer?: CancelTimer;
}

/** Frames of a welcomed connection that belong to the execution protocol; the connection handles the others. */
export type ProtocolFrame = DeviceFrameOf<
  'submit' | 'start_granted' | 'start_refused' | 'outcome_ack' | 'status_query' | 'seal' | 'cancel' | 'error'
>;

/** What the connection tells its owner. A handler that throws is answered with an `internal` error frame. */
export interface DeviceConnectionEvents {
  /** The bridge welcomed this link (and its identity checked out): resend what it has not acknowledged. */
  welcomed(link: DeviceLink): void;
  /** A frame of the execution protocol arrived on a welcomed link (an `error` frame after it was logged). */
  frame(link: DeviceLink, frame: ProtocolFrame): void;
  /** This link closed, current or not; nothing sent on it is answered any more. */
  closed(link: DeviceLink): void;
}

/** Fatal error codes by which the bridge refuses the device's credential. */
const CREDENTIAL_REFUSALS: ReadonlySet<string> = new Set([
  'unauthenticated',
  'identity_mismatch',
  'credential_revoked',
  'credential_expired',
]);

const MAX_MESSAGE = 4096;

/** Shortens a text to fit a frame's message. */
export function clip(text: string, max = MAX_MESSAGE): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function textOf(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  return (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data)).toString('utf8');
}

/**
 * One device's connection lifecycle. A lost connection is retried forever with exponential backoff and equal jitter
 * until {@link stop}; no welcome within `helloTimeoutMs`, a welcome for another identity, or a silent bridge (two
 * missed heartbeats) closes it and tries again.
 */
export class DeviceConnection {
  private link: DeviceLink | undefined;
  private attempt = 0;
  private cancelReconnect: CancelTimer | undefined;
  private started = false;
  private stopped = false;
  /** Server clock minus device clock, in milliseconds, measured at the last welcome. */
  private offsetMs = 0;

  constructor(
    private readonly options: DeviceClientOptions,
    private readonly setup: DeviceClientSetup,
    private readonly events: DeviceConnectionEvents,
  ) {}

  /** Starts connecting (and reconnecting). Idempotent; does nothing once stopped. */
  start(): void {
    if (!this.started && !this.stopped) {
      this.started = true;
      this.connect();
    }
  }

  /** True once {@link stop} was called: the client is closing, so nothing reconnects and nothing new runs. */
  get closing(): boolean {
    return this.stopped;
  }

  /** True while a connection is open and welcomed. */
  get connected(): boolean {
    return this.link?.welcome !== undefined && this.link.ws.readyState === WebSocket.OPEN;
  }

  /** The welcome of the current connection, if connected. */
  get session(): WelcomeFrameV1 | undefined {
    return this.connected ? this.link?.welcome : undefined;
  }

  /** The current link once it was welcomed (it may have closed since; sending on it then does nothing). */
  get welcomed(): DeviceLink | undefined {
    return this.link?.welcome ? this.link : undefined;
  }

  /** True while `link` is the connection in use: one that closed or was replaced is not. */
  isCurrent(link: DeviceLink): boolean {
    return this.link === link;
  }

  /** Server clock minus device clock, in milliseconds, as measured at the last welcome. */
  get clockOffsetMs(): number {
    return this.offsetMs;
  }

  /** Stops reconnecting; the current connection stays until {@link disconnect}. */
  stop(): void {
    this.stopped = true;
    this.cancelReconnect?.();
  }

  /** Lets go of the current connection: closes it as going away or, with `crash`, cuts it as a network failure. */
  disconnect(crash: boolean): void {
    const link = this.link;
    this.link = undefined;
    if (!link) return;
    if (crash) this.cut(link);
    else this.drop(link, DEVICE_CLOSE_CODES.goingAway, 'device client closing');
  }

  /**
   * Encodes and writes a frame; false when the link is not open or the frame does not encode (logged, not sent).
   * @param written called once the frame was handed to the operating system (not a delivery receipt).
   */
  send(link: DeviceLink, draft: DeviceFrameDraft, written?: () => void): boolean {
    if (link.ws.readyState !== WebSocket.OPEN) return false;
    let text: string;
    try {
      text = link.codec.encode(draft);
    } catch (err) {
      this.setup.logger.warn?.('dropped a frame that failed to encode', {
        type: draft.type,
        error: (err as Error).message,
      });
      return false;
    }
    if (written) link.ws.send(text, (err) => (err ? undefined : written()));
    else link.ws.send(text);
    return true;
  }

  /** Sends a non-fatal `error` frame. */
  sendError(link: DeviceLink, code: string, message: string, requestId?: string): void {
    this.send(link, {
      type: 'error',
      code,
      message: clip(message),
      fatal: false,
      ...(requestId ? { request_id: requestId } : {}),
    });
  }

  /** Cuts the connection without a close frame, as a network failure would. */
  cut(link: DeviceLink): void {
    link.cancelTimer?.();
    link.ws.terminate();
  }

  /** Tells the owner when an `error` frame refuses the device's credential, so it can get another or give up. */
  private noteRefusal(frame: ErrorFrameV1): void {
    if (frame.fatal && CREDENTIAL_REFUSALS.has(frame.code))
      this.options.onAuthenticationRefused?.({ code: frame.code, message: frame.message });
  }

  private connect(): void {
    if (this.stopped) return;
    const ws = new WebSocket(this.options.url, { maxPayload: this.setup.maxFrameBytes, perMessageDeflate: false });
    const link: DeviceLink = {
      ws,
      codec: new DeviceFrameCodec(this.setup.maxFrameBytes),
      claims: new Set(),
      lastSeen: Date.now(),
    };
    this.link = link;
    ws.on('open', () => void this.sendHello(link));
    ws.on('message', (data: RawData, isBinary: boolean) => this.onMessage(link, data, isBinary));
    ws.on('ping', () => {
      link.lastSeen = Date.now();
    });
    ws.on('error', (err: Error) => this.setup.logger.debug?.('device connection error', { error: err.message }));
    ws.on('close', (code: number, reason: Buffer) => this.onClose(link, code, reason.toString('utf8')));
    link.cancelTimer = this.setup.scheduler.timeout(() => {
      if (!link.welcome) {
        this.setup.logger.warn?.('no welcome from the bridge in time; reconnecting');
        this.drop(link, DEVICE_CLOSE_CODES.helloTimeout, 'no welcome');
      }
    }, this.options.helloTimeoutMs ?? 10_000);
  }

  private async sendHello(link: DeviceLink): Promise<void> {
    let token: string;
    try {
      token = typeof this.options.token === 'string' ? this.options.token : await this.options.token();
    } catch (err) {
      this.setup.logger.warn?.('could not obtain the device token', { error: (err as Error).message });
      this.drop(link, DEVICE_CLOSE_CODES.normal, 'no token');
      return;
    }
    this.send(link, {
      type: 'hello',
      device_id: this.options.deviceId,
      tenant: this.options.tenant,
      boot_id: this.setup.bootId,
      protocol_version: DEVICE_PROTOCOL_VERSION,
      policy_version: this.options.policyVersion ?? null,
      token,
      max_in_flight: this.options.maxInFlight ?? DEVICE_DEFAULT_MAX_IN_FLIGHT,
      // Submits may carry the dispatch's trace; each run is a span of it (execution-protocol.ts).
      trace_context: true,
    });
  }

  private onClose(link: DeviceLink, code: number, reason: string): void {
    link.cancelTimer?.();
    this.events.closed(link);
    if (this.link !== link) return;
    this.link = undefined;
    if (this.stopped) return;
    const base = this.options.backoff?.initialDelayMs ?? 250;
    const max = this.options.backoff?.maxDelayMs ?? 30_000;
    // This connection was current, so the newer one that replaced it is not ours: another process holds this
    // device's identity. Wait the longest delay rather than take the connection back at once, again and again.
    const replaced = code === DEVICE_CLOSE_CODES.replaced;
    if (replaced)
      this.setup.logger.warn?.('another connection of this device took over; two processes may share its credential');
    const ceiling = replaced ? max : Math.min(max, base * (this.options.backoff?.multiplier ?? 2) ** this.attempt);
    // Equal jitter: never reconnect immediately, and spread a fleet of devices that lost the same bridge.
    const wait = ceiling / 2 + (this.options.random ?? Math.random)() * (ceiling / 2);
    this.attempt += 1;
    this.setup.logger.debug?.('device connection closed; reconnecting', { code, reason, waitMs: Math.round(wait) });
    this.cancelReconnect = this.setup.scheduler.timeout(() => this.connect(), wait);
  }

  private drop(link: DeviceLink, code: number, reason: string): void {
    link.cancelTimer?.();
    if (link.ws.readyState === WebSocket.OPEN) link.ws.close(code, reason);
    else link.ws.terminate();
  }

  private onMessage(link: DeviceLink, data: RawData, isBinary: boolean): void {
    link.lastSeen = Date.now();
    if (isBinary) {
      this.sendError(link, 'malformed_json', 'Binary messages are not frames; send each frame as a JSON text message.');
      return;
    }
    let frame: DeviceFrame;
    try {
      frame = link.codec.decode(textOf(data));
    } catch (err) {
      if (!isDeviceProtocolError(err)) throw err;
      this.setup.logger.warn?.('refused a frame from the bridge', { code: err.code, requestId: err.requestId });
      this.sendError(link, err.code, err.message, err.requestId);
      return;
    }
    try {
      if (link.welcome) this.afterWelcome(link, frame);
      else this.beforeWelcome(link, frame);
    } catch (err) {
      // A journal write failed (disk full, I/O error): nothing was run; say so rather than crash the connection.
      this.setup.logger.warn?.('could not handle a frame', { type: frame.type, error: (err as Error).message });
      this.sendError(
        link,
        'internal',
        `The device could not handle the ${frame.type} frame: ${(err as Error).message}`,
        'request_id' in frame ? frame.request_id : undefined,
      );
    }
  }

  private beforeWelcome(link: DeviceLink, frame: DeviceFrame): void {
    if (frame.type === 'welcome') this.onWelcome(link, frame);
    else if (frame.type === 'error') {
      this.setup.logger.warn?.('the bridge refused the connection', { code: frame.code, message: frame.message });
      this.noteRefusal(frame);
    } else
      this.sendError(
        link,
        'unexpected_frame',
        `A ${frame.type} frame arrived before welcome; the bridge must answer hello first.`,
      );
  }

  /** Heartbeats and frames a device never accepts end here; the execution protocol's frames go to the owner. */
  private afterWelcome(link: DeviceLink, frame: DeviceFrame): void {
    switch (frame.type) {
      case 'heartbeat':
        return;
      case 'error':
        this.setup.logger.warn?.('the bridge reported an error', {
          code: frame.code,
          message: frame.message,
          requestId: frame.request_id,
        });
        this.events.frame(link, frame);
        this.noteRefusal(frame);
        return;
      case 'welcome':
      case 'hello':
      case 'start_claim':
      case 'progress':
      case 'outcome':
      case 'status_report':
        return this.sendError(
          link,
          'unexpected_frame',
          `A device does not accept ${frame.type} frames${frame.type === 'welcome' ? ' twice' : ''}.`,
        );
      default:
        return this.events.frame(link, frame);
    }
  }

  private onWelcome(link: DeviceLink, welcome: WelcomeFrameV1): void {
    if (welcome.tenant !== this.options.tenant || welcome.device_id !== this.options.deviceId) {
      this.setup.logger.warn?.('the bridge welcomed another identity; disconnecting', {
        tenant: welcome.tenant,
        deviceId: welcome.device_id,
      });
      this.drop(link, DEVICE_CLOSE_CODES.policyViolation, 'identity mismatch');
      return;
    }
    link.welcome = welcome;
    this.attempt = 0;
    this.offsetMs = Date.parse(welcome.server_time) - Date.now();
    link.cancelTimer?.();
    const interval = welcome.heartbeat_interval_ms;
    // The bridge pings every interval; two missed pings (plus slack for a busy loop) mean it is gone.
    link.cancelTimer = this.setup.scheduler.interval(
      () => {
        if (Date.now() - link.lastSeen > 2 * interval + 1_000) {
          this.setup.logger.warn?.('the bridge went silent; reconnecting');
          this.drop(link, DEVICE_CLOSE_CODES.heartbeatTimeout, 'heartbeat timeout');
        }
      },
      interval,
      false,
    );
    this.events.welcomed(link);
  }
}
