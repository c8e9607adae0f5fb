/**
 * Frame routing of the device gateway: reads every frame a connection sends (decode, schema, `seq`), keeps the order
 * that matters, and hands start claims, outcomes and reports to a {@link FrameHandler}, answering the device from what
 * the handler returns.
 *
 * Order: frames naming the same request are handled one at a time in arrival order, frames about different requests
 * side by side (see docs/decisions/0011); a frame naming no request (the hello, a heartbeat, an unreadable frame) and
 * the disconnect wait for everything before them and hold back everything after them.
 *
 * The connection's lifecycle (accept, hello and authentication, heartbeats, supersede and close) is the gateway's: it
 * gives the router a {@link RoutedConnection} per socket and learns from it when a window slot frees or a frame
 * breaks the protocol.
 */
import {
  DEVICE_CLOSE_CODES,
  DEVICE_SUBMIT_REFUSAL_CODES,
  isDeviceProtocolError,
  isDeviceProtocolId,
  type DeviceFrame,
  type DeviceFrameCodec,
  type DeviceFrameDraft,
  type ErrorFrameV1,
  type HelloFrameV1,
  type OutcomeFrameV1,
  type ProgressFrameV1,
  type StartClaimFrameV1,
  type StartRefusalReason,
  type StatusReportFrameV1,
} from '@ormuz/contracts';
import { reportEndsRequest } from './flow-window.js';

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

/** The answer to a start claim. */
export type StartClaimDecision =
  | { readonly granted: true }
  | { readonly granted: false; readonly reason: StartRefusalReason; readonly message: string };

/**
 * An outcome the handler refused to record (the request is another device's, unknown, or not started): the device is
 * told with a non-fatal error of that code naming the request, and gets no `outcome_ack`.
 */
export interface OutcomeRefusal {
  readonly refused: 'not_assigned' | 'unknown_request' | 'not_started';
  readonly message: string;
}

/** What the router calls for the frames of a welcomed device. A rejected claim or outcome is logged and answered with a non-fatal `internal` error frame. */
export interface FrameHandler {
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
  /** Progress of a running request. */
  onProgress?(device: ConnectedDevice, frame: ProgressFrameV1): Promise<void> | void;
  /** The device refused a frame the bridge sent (e.g. a submit whose payload did not match its hash). */
  onDeviceError?(device: ConnectedDevice, frame: ErrorFrameV1): Promise<void> | void;
}

/** Where the gateway and the router report what they do. Tokens and payloads are never passed to it. */
export interface DeviceGatewayLogger {
  debug?(message: string, fields?: Record<string, unknown>): void;
  info?(message: string, fields?: Record<string, unknown>): void;
  warn?(message: string, fields?: Record<string, unknown>): void;
  error?(message: string, fields?: Record<string, unknown>): void;
}

/** What the router needs of one connection; the gateway, which owns its lifecycle, implements it. */
export interface RoutedConnection {
  /** The welcomed device; undefined until its hello was accepted. */
  readonly device: ConnectedDevice | undefined;
  /** True while the socket is open. */
  readonly open: boolean;
  /** Reads this connection's frames (checks `seq` in arrival order) and writes the answers. */
  readonly codec: DeviceFrameCodec;
  /** @throws DeviceProtocolError when the draft is invalid (a bug here or in the handler's answer). */
  send(draft: DeviceFrameDraft): void;
  /** The device is done with a request: its window slot frees (and what waited for it goes). */
  release(requestId: string): void;
  /** Answers with a fatal error and closes the connection with `closeCode`. */
  fatal(code: string, message: string, closeCode: number): void;
  /** More frames wait than the connection may queue: it is closed (4005). */
  overloaded(): void;
  /** The first frame, a hello: authenticate the device and welcome it. */
  hello(frame: HelloFrameV1): Promise<void>;
}

/** A frame as it arrived: read, or the answer to give when it could not be, naming its request when it could. */
type Arrived =
  | { readonly frame: DeviceFrame; readonly requestId: string | undefined }
  | { readonly refusal: { readonly code: string; readonly message: string }; readonly requestId: string | undefined };

/** Cuts a message to what an error frame carries; an empty one becomes `empty`. */
export function clip(message: string, empty = 'The start was refused.'): string {
  const text = message.trim() === '' ? empty : message;
  return text.length <= 4096 ? text : `${text.slice(0, 4095)}…`;
}

function textOf(data: Buffer | ArrayBuffer | Buffer[]): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  return (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data)).toString('utf8');
}

/**
 * The frames of one connection on their way to the handler: per-request lanes and the barrier (see the file's
 * comment). Created by {@link FrameRouter.attach}.
 */
export class FrameLanes {
  /** Frames received and not yet handled. */
  queued = 0;
  /**
   * `lanes` holds the tail of each request's frames; `barrier` the last work that concerned no single request, which
   * waited for everything before it and which everything after it waits for.
   */
  private barrier: Promise<void> = Promise.resolve();
  private readonly lanes = new Map<string, Promise<void>>();

  constructor(
    private readonly router: FrameRouter,
    private readonly conn: RoutedConnection,
    private readonly maxQueuedFrames: number,
  ) {}

  /** A message arrived on the socket. */
  receive(data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): void {
    if (this.queued >= this.maxQueuedFrames) {
      this.conn.overloaded();
      return;
    }
    this.queued += 1;
    // Decoded on arrival, so `seq` is checked in the order frames came; handled in order per request (see schedule).
    const arrived = this.router.decode(this.conn, data, isBinary);
    const requestId = this.conn.device ? arrived.requestId : undefined;
    this.schedule(requestId, () => this.router.route(this.conn, arrived))
      .catch((err: unknown) => {
        this.router.logger.error?.('device frame handling failed', {
          deviceId: this.conn.device?.deviceId,
          error: (err as Error).message,
        });
      })
      .finally(() => {
        this.queued -= 1;
      });
  }

  /**
   * Runs `work` after the frames it must follow: with a request id, after that request's earlier frames and the last
   * barrier; without one, as a barrier after everything queued so far. Resolves or rejects with `work`.
   */
  schedule(requestId: string | undefined, work: () => unknown): Promise<void> {
    const quiet = (p: Promise<unknown>): Promise<void> =>
      p.then(
        () => undefined,
        () => undefined,
      );
    if (requestId === undefined) {
      const run = Promise.all([this.barrier, ...this.lanes.values()])
        .then(work)
        .then(() => undefined);
      this.lanes.clear();
      this.barrier = quiet(run);
      return run;
    }
    const run = (this.lanes.get(requestId) ?? this.barrier).then(work).then(() => undefined);
    const tail = quiet(run).then(() => {
      if (this.lanes.get(requestId) === tail) this.lanes.delete(requestId);
    });
    this.lanes.set(requestId, tail);
    return run;
  }

  /** Resolves once every frame queued so far was handled. */
  drained(): Promise<void> {
    return Promise.all([this.barrier, ...this.lanes.values()]).then(() => undefined);
  }
}

/** Routes the frames of every connection of one gateway to one handler. */
export class FrameRouter {
  constructor(
    private readonly handler: FrameHandler,
    readonly logger: DeviceGatewayLogger,
    private readonly maxQueuedFrames: number,
  ) {}

  /** The lanes of a newly accepted connection. */
  attach(conn: RoutedConnection): FrameLanes {
    return new FrameLanes(this, conn, this.maxQueuedFrames);
  }

  /** Reads a frame; a frame that cannot be read becomes the answer to give, naming its request when it could. */
  decode(conn: RoutedConnection, data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): Arrived {
    if (isBinary) {
      return {
        refusal: {
          code: 'malformed_json',
          message: 'Binary messages are not frames; send each frame as a JSON text message.',
        },
        requestId: undefined,
      };
    }
    try {
      const frame = conn.codec.decode(textOf(data));
      return { frame, requestId: 'request_id' in frame ? frame.request_id : undefined };
    } catch (err) {
      if (isDeviceProtocolError(err))
        return { refusal: { code: err.code, message: err.message }, requestId: err.requestId };
      this.logger.error?.('could not read a device frame', {
        deviceId: conn.device?.deviceId,
        error: (err as Error).message,
      });
      return {
        refusal: { code: 'internal', message: 'The bridge could not read this frame; send it again later.' },
        requestId: undefined,
      };
    }
  }

  /** Handles one frame in its turn: the hello before the welcome, then the device's frames. */
  async route(conn: RoutedConnection, arrived: Arrived): Promise<void> {
    if (!conn.open && !conn.device) return;
    if ('refusal' in arrived)
      return this.refuse(conn, arrived.refusal.code, arrived.refusal.message, arrived.requestId);
    const frame = arrived.frame;
    if (!conn.device) {
      if (frame.type !== 'hello') {
        return conn.fatal(
          'hello_required',
          `The first frame must be hello, not ${frame.type}.`,
          DEVICE_CLOSE_CODES.policyViolation,
        );
      }
      return conn.hello(frame);
    }
    return this.dispatch(conn, conn.device, frame);
  }

  /** Answers a frame that could not be read: fatal before the hello (nothing can be trusted yet), non-fatal after. */
  private refuse(conn: RoutedConnection, code: string, message: string, requestId?: string): void {
    if (!conn.device) {
      return conn.fatal(code, `${message} The first frame must be a valid hello.`, DEVICE_CLOSE_CODES.policyViolation);
    }
    sendError(conn, code, message, requestId);
  }

  private async dispatch(conn: RoutedConnection, device: ConnectedDevice, frame: DeviceFrame): Promise<void> {
    const handler = this.handler;
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
          return sendError(
            conn,
            'internal',
            `The bridge could not record the start of ${frame.request_id}; do not run it. Claim it again later.`,
            frame.request_id,
          );
        }
        if (decision.granted) return conn.send({ type: 'start_granted', request_id: frame.request_id });
        conn.send({
          type: 'start_refused',
          request_id: frame.request_id,
          reason: decision.reason,
          message: clip(decision.message),
        });
        return conn.release(frame.request_id);
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
          return sendError(
            conn,
            'internal',
            `The bridge could not record the outcome of ${frame.request_id}; keep it and send it again after reconnecting.`,
            frame.request_id,
          );
        }
        if (refusal) return sendError(conn, refusal.refused, refusal.message, frame.request_id);
        conn.send({ type: 'outcome_ack', request_id: frame.request_id });
        return conn.release(frame.request_id);
      }
      case 'status_report':
        try {
          return await handler.onStatusReport(device, frame);
        } finally {
          // The device has said its last word on the request either way; a failure to record it is logged.
          if (reportEndsRequest(frame.state)) conn.release(frame.request_id);
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
          if (frame.request_id && DEVICE_SUBMIT_REFUSAL_CODES.has(frame.code)) conn.release(frame.request_id);
        }
      case 'heartbeat':
        return;
      case 'hello':
        return sendError(
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
        return sendError(conn, 'unexpected_frame', `Devices do not send ${frame.type} frames.`);
      default: {
        const unknown: never = frame;
        throw new Error(`unhandled frame ${JSON.stringify(unknown)}`);
      }
    }
  }
}

/** A non-fatal error; a request id that is not a valid id is left out rather than breaking the frame. */
function sendError(conn: RoutedConnection, code: string, message: string, requestId?: string): void {
  conn.send({
    type: 'error',
    code,
    message: clip(message, 'The frame was not accepted.'),
    fatal: false,
    ...(isDeviceProtocolId(requestId) ? { request_id: requestId } : {}),
  });
}
