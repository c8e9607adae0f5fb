/**
 * The device side of the tracked execution protocol: connects to a bridge, receives submitted tool calls and runs
 * each at most once, with the device journal as the record of what happened.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { WebSocket, type RawData } from 'ws';
import {
  DEVICE_CLOSE_CODES,
  DEVICE_DEFAULT_MAX_IN_FLIGHT,
  DEVICE_MAX_FRAME_BYTES,
  DEVICE_PROTOCOL_VERSION,
  DeviceFrameCodec,
  OrmuzError,
  isDeviceProtocolError,
  verifySubmitPayload,
  type DeviceFrame,
  type DeviceFrameDraft,
  type DeviceRequestState,
  type JsonValue,
  type RiskVerdictV1,
  type StatusReportFrameV1,
  type SubmitFrameV1,
  type WelcomeFrameV1,
  type WireErrorV1,
} from '@ormuz/contracts';
import { DeviceJournal, type JournalEntry, type JournalOutcome } from './journal.js';
import { NODE_SCHEDULER, type CancelTimer, type DeviceScheduler } from './scheduler.js';

/** Arguments of a tool call, as decoded from the submitted canonical payload. */
export type ToolArguments = { readonly [key: string]: JsonValue };

/** What an executor gets besides the tool name and arguments. */
export interface ExecutionContext {
  readonly requestId: string;
  readonly callId: string;
  readonly verdict: RiskVerdictV1;
  /** When the outcome is due, on the device clock (corrected by the server's clock at connect time). */
  readonly deadline: Date;
  /** Aborted when the server cancels the request, its deadline passes, or the client closes. Honour it if you can. */
  readonly signal: AbortSignal;
  /** Reports progress to the server, best effort (dropped while disconnected). `fraction` is between 0 and 1. */
  progress(stage: string, fraction?: number): void;
}

/**
 * Runs one tool call and resolves with its result (plain JSON), or throws to report a failure: throw a
 * {@link DeviceToolError} to choose the error code; any other error is reported as `executor_failed`, or as
 * `cancelled` / `deadline_exceeded` when the context's signal had fired.
 * It runs only after the start claim was granted, and never twice for one request id.
 */
export type DeviceExecutor = (tool: string, args: ToolArguments, context: ExecutionContext) => Promise<JsonValue>;

/**
 * Names the app an action would act in, so the device's own package policy applies before anything runs:
 * a package name (checked against the denylist), `null` when the action acts on the foreground app and the device
 * cannot tell which app that is (refused), or `undefined` when the action acts on no app.
 */
export type TargetPackageResolver = (tool: string, args: ToolArguments) => string | null | undefined;

/**
 * A tool failure reported to the platform as `{ code, message }`. `code` is snake_case (other codes become
 * `executor_failed`); the message is read by a model, so it should say what to do next.
 */
export class DeviceToolError extends OrmuzError {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Apps the device never lets an agent control, whatever policy the platform has (or has never) synced: banking,
 * payments and wallets. Extend it with {@link DeviceClientOptions.deniedPackages}; it cannot be shortened.
 */
export const DEFAULT_DENIED_PACKAGES: readonly string[] = [
  'com.example.bank',
  'com.google.android.apps.walletnfcrel',
  'com.paypal.android.p2pmobile',
  'com.venmo',
  'com.squareup.cash',
  'com.revolut.revolut',
  'com.chase.sig.android',
  'com.wf.wellsfargomobile',
  'com.bankofamerica.cashpromobile',
  'com.infonow.bofa',
];

const DEFAULT_DENIED_SET: ReadonlySet<string> = new Set(DEFAULT_DENIED_PACKAGES);

/**
 * Protocol steps at which {@link DeviceClientOptions.onProtocolStep} is consulted:
 * - `before_claim`: a start claim is journaled and about to be sent;
 * - `after_grant`: a `start_granted` was accepted and the run queued;
 * - `after_outcome`: an `outcome` frame was written to the socket (first send or a resend).
 */
export type ProtocolStep = 'before_claim' | 'after_grant' | 'after_outcome';

/**
 * Fault injection for tests and simulators: called at each {@link ProtocolStep}; answering `'drop'` cuts the
 * connection there without a close frame, as a network failure would (for `before_claim` the claim is not sent).
 * The client then reconnects as usual. Production clients leave it unset.
 */
export type ProtocolStepHook = (step: ProtocolStep, requestId: string) => 'drop' | undefined;

/** Options of {@link DeviceClient.close}. */
export interface DeviceClientCloseOptions {
  /**
   * Stop as a crash or power loss would: cut the connection, close the journal at once, and neither signal nor wait
   * for running executions. Their runs stay `started` in the journal, so the next client on it reports them as
   * `interrupted`. For tests and simulators; default false.
   */
  readonly crash?: boolean;
}

/** Where the client reports what it does; every method is optional. Tokens and payloads are never passed to it. */
export interface DeviceClientLogger {
  debug?(message: string, fields?: Record<string, unknown>): void;
  warn?(message: string, fields?: Record<string, unknown>): void;
}

/** Reconnection delays: `min(maxDelayMs, initialDelayMs · multiplier^attempt)`, of which a random half is waited. */
export interface BackoffOptions {
  /** Default 250 ms. */
  readonly initialDelayMs?: number;
  /** Default 30 000 ms. */
  readonly maxDelayMs?: number;
  /** Default 2. */
  readonly multiplier?: number;
}

/** Options of {@link DeviceClient}. */
export interface DeviceClientOptions {
  /** Bridge endpoint, e.g. `wss://bridge.example/v1/devices`. */
  readonly url: string;
  readonly tenant: string;
  readonly deviceId: string;
  /** Device credential, or a function returning the current one (called on every connect, so it can rotate). */
  readonly token: string | (() => string | Promise<string>);
  /** Directory of the device journal; it must survive restarts and belong to this device alone. */
  readonly journalDir: string;
  readonly executor: DeviceExecutor;
  readonly targetPackage: TargetPackageResolver;
  /** Packages refused in addition to {@link DEFAULT_DENIED_PACKAGES}. */
  readonly deniedPackages?: readonly string[];
  /** Version of the last synced policy, or `null` (default) when none ever was. */
  readonly policyVersion?: number | null;
  /** Identifies this process start; defaults to a random UUID. */
  readonly bootId?: string;
  readonly backoff?: BackoffOptions;
  /** How long to wait for `welcome` after connecting before trying again; default 10 000 ms. */
  readonly helloTimeoutMs?: number;
  /** How long {@link DeviceClient.close} waits for running executions to record their outcome; default 5 000 ms. */
  readonly closeGraceMs?: number;
  /** Largest frame accepted or sent, in bytes; default {@link DEVICE_MAX_FRAME_BYTES}. */
  readonly maxFrameBytes?: number;
  readonly logger?: DeviceClientLogger;
  /** Source of jitter in [0, 1); default `Math.random`. */
  readonly random?: () => number;
  /** Where timers are scheduled; default one Node timer each; a fleet shares one `TimerWheel`. */
  readonly scheduler?: DeviceScheduler;
  /** Fault injection at protocol steps (tests and simulators only). */
  readonly onProtocolStep?: ProtocolStepHook;
  /**
   * Requests this device takes in flight at once, announced in `hello` (`max_in_flight`, 1–1000): the bridge never
   * sends more submits, status queries, seals or cancels than it has room for, so a backlog of any size arrives at
   * the device's pace. Granted executions wait in memory for their turn, so this bounds that queue too. Default
   * {@link DEVICE_DEFAULT_MAX_IN_FLIGHT}.
   */
  readonly maxInFlight?: number;
  /**
   * Called when the bridge refuses the device's credential (`unauthenticated`, `identity_mismatch`,
   * `credential_revoked`, `credential_expired`). The client keeps reconnecting with backoff (a `token` function may
   * return a new token); a caller that cannot get another token should {@link DeviceClient.close} it.
   */
  readonly onAuthenticationRefused?: (error: WireErrorV1) => void;
}

/** Fatal error codes by which the bridge refuses the device's credential. */
const CREDENTIAL_REFUSALS: ReadonlySet<string> = new Set([
  'unauthenticated',
  'identity_mismatch',
  'credential_revoked',
  'credential_expired',
]);

interface Connection {
  readonly ws: WebSocket;
  readonly codec: DeviceFrameCodec;
  welcome?: WelcomeFrameV1;
  /** Requests whose start claim was sent on this connection and not answered yet. */
  readonly claims: Set<string>;
  lastSeen: number;
  /** Cancels the hello timeout before the welcome, the heartbeat check after it. */
  cancelTimer?: CancelTimer;
}

interface Pending {
  readonly frame: SubmitFrameV1;
  readonly args: ToolArguments;
}

const ERROR_CODE = /^[a-z][a-z0-9_]{0,63}$/;
const MAX_MESSAGE = 4096;

function clip(text: string, max = MAX_MESSAGE): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function textOf(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  return (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data)).toString('utf8');
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/**
 * Connects a device to a bridge and runs what it is sent, at most once per request id.
 *
 * For each `submit` it: checks the payload against its SHA-256 (a mismatch gets an `error` frame and nothing runs);
 * observes a known request id instead of running it again (the recorded outcome is resent, or the journal's state
 * reported); refuses sealed ids, requests past their deadline, apps on its own denylist and actions whose foreground
 * app it cannot tell (journaled as `rejected` and reported); otherwise journals a start claim, sends `start_claim`,
 * and runs the executor only after `start_granted`, having journaled the start first. Outcomes are journaled, then
 * sent, and resent after every reconnect until `outcome_ack`. A `status_query` is answered from the journal alone.
 * Executions run one at a time, in the order their claims were granted.
 *
 * Failure modes: a lost connection is retried forever with exponential backoff and jitter until {@link close};
 * a claim or outcome the bridge failed to record (its `internal` error) is sent again after a backoff;
 * a frame that fails validation is answered with a non-fatal `error` frame; the constructor throws when the journal
 * cannot be opened (locked by another client, or corrupt).
 */
export class DeviceClient {
  /** Identifies this process start in `hello` and in the journal's start records. */
  readonly bootId: string;
  private readonly journal: DeviceJournal;
  private readonly denied: ReadonlySet<string>;
  private readonly maxFrameBytes: number;
  private readonly logger: DeviceClientLogger;
  private readonly scheduler: DeviceScheduler;
  private readonly pending = new Map<string, Pending>();
  /** Granted and queued or running; a seal can no longer stop these, a cancel aborts their controller. */
  private readonly granted = new Map<string, AbortController>();
  private readonly running = new Map<string, AbortController>();
  /** Attempts so far, per request whose claim or outcome the bridge failed to record. */
  private readonly retries = new Map<string, number>();
  private queue: Promise<void> = Promise.resolve();
  private conn: Connection | undefined;
  private attempt = 0;
  private cancelReconnect: CancelTimer | undefined;
  private started = false;
  private closing = false;
  private reportedInterrupted = false;
  /** Server clock minus device clock, in milliseconds, measured at the last welcome. */
  private clockOffsetMs = 0;

  /** Opens the journal. @throws JournalLockedError, JournalCorruptError */
  constructor(private readonly options: DeviceClientOptions) {
    this.bootId = options.bootId ?? randomUUID();
    this.journal = DeviceJournal.open(options.journalDir);
    // Shared when not extended: a fleet of simulated devices should not hold a copy each.
    this.denied = options.deniedPackages?.length
      ? new Set([...DEFAULT_DENIED_PACKAGES, ...options.deniedPackages])
      : DEFAULT_DENIED_SET;
    this.maxFrameBytes = options.maxFrameBytes ?? DEVICE_MAX_FRAME_BYTES;
    this.logger = options.logger ?? {};
    this.scheduler = options.scheduler ?? NODE_SCHEDULER;
  }

  /** Starts connecting (and reconnecting). Idempotent. */
  start(): this {
    if (!this.started && !this.closing) {
      this.started = true;
      this.connect();
    }
    return this;
  }

  /** True while a connection is open and welcomed. */
  get connected(): boolean {
    return this.conn?.welcome !== undefined && this.conn.ws.readyState === WebSocket.OPEN;
  }

  /** The welcome of the current connection, if connected. */
  get session(): WelcomeFrameV1 | undefined {
    return this.connected ? this.conn?.welcome : undefined;
  }

  /** The state of a request as a status query would report it; reads the journal only. */
  requestState(requestId: string): DeviceRequestState {
    const entry = this.journal.get(requestId);
    if (!entry) return 'unknown';
    if (entry.state === 'started' && !this.running.has(requestId)) return 'interrupted';
    return entry.state;
  }

  /** The journal's record of a request. */
  journalEntry(requestId: string): JournalEntry | undefined {
    return this.journal.get(requestId);
  }

  /**
   * Stops reconnecting, closes the connection, signals running executions to stop, waits up to `closeGraceMs` for
   * them to journal their outcome, then closes the journal. A run still going after that is reported as
   * `interrupted` by the next client on this journal. Idempotent. With `crash`, see {@link DeviceClientCloseOptions}.
   */
  async close(options: DeviceClientCloseOptions = {}): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    this.cancelReconnect?.();
    if (options.crash) {
      const conn = this.conn;
      this.conn = undefined;
      if (conn) this.cut(conn);
      // The journal closes first, so an execution that ends after this cannot record an outcome.
      this.journal.close();
      for (const controller of this.granted.values()) controller.abort(new Error('the device process stopped'));
      return;
    }
    for (const controller of this.granted.values()) controller.abort(new Error('the device client is closing'));
    const conn = this.conn;
    this.conn = undefined;
    if (conn) this.dropConnection(conn, DEVICE_CLOSE_CODES.goingAway, 'device client closing');
    await Promise.race([this.queue, delay(this.options.closeGraceMs ?? 5_000)]);
    this.journal.close();
  }

  // --- connection -------------------------------------------------------------------------------------------------

  private connect(): void {
    if (this.closing) return;
    const ws = new WebSocket(this.options.url, { maxPayload: this.maxFrameBytes, perMessageDeflate: false });
    const conn: Connection = {
      ws,
      codec: new DeviceFrameCodec(this.maxFrameBytes),
      claims: new Set(),
      lastSeen: Date.now(),
    };
    this.conn = conn;
    ws.on('open', () => void this.sendHello(conn));
    ws.on('message', (data: RawData, isBinary: boolean) => this.onMessage(conn, data, isBinary));
    ws.on('ping', () => {
      conn.lastSeen = Date.now();
    });
    ws.on('error', (err: Error) => this.logger.debug?.('device connection error', { error: err.message }));
    ws.on('close', (code: number, reason: Buffer) => this.onClose(conn, code, reason.toString('utf8')));
    conn.cancelTimer = this.scheduler.timeout(() => {
      if (!conn.welcome) {
        this.logger.warn?.('no welcome from the bridge in time; reconnecting');
        this.dropConnection(conn, DEVICE_CLOSE_CODES.helloTimeout, 'no welcome');
      }
    }, this.options.helloTimeoutMs ?? 10_000);
  }

  private async sendHello(conn: Connection): Promise<void> {
    let token: string;
    try {
      token = typeof this.options.token === 'string' ? this.options.token : await this.options.token();
    } catch (err) {
      this.logger.warn?.('could not obtain the device token', { error: (err as Error).message });
      this.dropConnection(conn, DEVICE_CLOSE_CODES.normal, 'no token');
      return;
    }
    this.send(conn, {
      type: 'hello',
      device_id: this.options.deviceId,
      tenant: this.options.tenant,
      boot_id: this.bootId,
      protocol_version: DEVICE_PROTOCOL_VERSION,
      policy_version: this.options.policyVersion ?? null,
      token,
      max_in_flight: this.options.maxInFlight ?? DEVICE_DEFAULT_MAX_IN_FLIGHT,
    });
  }

  private onClose(conn: Connection, code: number, reason: string): void {
    conn.cancelTimer?.();
    conn.claims.clear();
    if (this.conn !== conn) return;
    this.conn = undefined;
    if (this.closing) return;
    const base = this.options.backoff?.initialDelayMs ?? 250;
    const max = this.options.backoff?.maxDelayMs ?? 30_000;
    // This connection was current, so the newer one that replaced it is not ours: another process holds this
    // device's identity. Wait the longest delay rather than take the connection back at once, again and again.
    const replaced = code === DEVICE_CLOSE_CODES.replaced;
    if (replaced) this.logger.warn?.('another connection of this device took over; two processes may share its credential');
    const ceiling = replaced ? max : Math.min(max, base * (this.options.backoff?.multiplier ?? 2) ** this.attempt);
    // Equal jitter: never reconnect immediately, and spread a fleet of devices that lost the same bridge.
    const wait = ceiling / 2 + (this.options.random ?? Math.random)() * (ceiling / 2);
    this.attempt += 1;
    this.logger.debug?.('device connection closed; reconnecting', { code, reason, waitMs: Math.round(wait) });
    this.cancelReconnect = this.scheduler.timeout(() => this.connect(), wait);
  }

  private dropConnection(conn: Connection, code: number, reason: string): void {
    conn.cancelTimer?.();
    if (conn.ws.readyState === WebSocket.OPEN) conn.ws.close(code, reason);
    else conn.ws.terminate();
  }

  /** Cuts the connection without a close frame, as a network failure would. */
  private cut(conn: Connection): void {
    conn.cancelTimer?.();
    conn.ws.terminate();
  }

  /** True when the fault hook asked to cut the connection at this step (and it was cut). */
  private faultAt(conn: Connection, step: ProtocolStep, requestId: string): boolean {
    if (this.options.onProtocolStep?.(step, requestId) !== 'drop') return false;
    this.logger.debug?.('fault injection: cutting the connection', { step, requestId });
    this.cut(conn);
    return true;
  }

  private onWelcome(conn: Connection, welcome: WelcomeFrameV1): void {
    if (welcome.tenant !== this.options.tenant || welcome.device_id !== this.options.deviceId) {
      this.logger.warn?.('the bridge welcomed another identity; disconnecting', {
        tenant: welcome.tenant,
        deviceId: welcome.device_id,
      });
      this.dropConnection(conn, DEVICE_CLOSE_CODES.policyViolation, 'identity mismatch');
      return;
    }
    conn.welcome = welcome;
    this.attempt = 0;
    this.clockOffsetMs = Date.parse(welcome.server_time) - Date.now();
    conn.cancelTimer?.();
    const interval = welcome.heartbeat_interval_ms;
    // The bridge pings every interval; two missed pings (plus slack for a busy loop) mean it is gone.
    conn.cancelTimer = this.scheduler.interval(
      () => {
        if (Date.now() - conn.lastSeen > 2 * interval + 1_000) {
          this.logger.warn?.('the bridge went silent; reconnecting');
          this.dropConnection(conn, DEVICE_CLOSE_CODES.heartbeatTimeout, 'heartbeat timeout');
        }
      },
      interval,
      false,
    );

    for (const entry of this.journal.unackedOutcomes()) this.sendOutcome(conn, entry);
    for (const [requestId] of this.pending) {
      if (this.journal.get(requestId)?.state === 'claimed' && !this.granted.has(requestId))
        this.sendClaim(conn, requestId);
    }
    if (!this.reportedInterrupted) {
      this.reportedInterrupted = true;
      for (const entry of this.journal.entries()) {
        if (this.requestState(entry.requestId) === 'interrupted') this.report(conn, entry.requestId);
      }
    }
  }

  // --- frames -----------------------------------------------------------------------------------------------------

  /** @param written called once the frame was handed to the operating system (not a delivery receipt). */
  private send(conn: Connection, draft: DeviceFrameDraft, written?: () => void): boolean {
    if (conn.ws.readyState !== WebSocket.OPEN) return false;
    let text: string;
    try {
      text = conn.codec.encode(draft);
    } catch (err) {
      this.logger.warn?.('dropped a frame that failed to encode', { type: draft.type, error: (err as Error).message });
      return false;
    }
    if (written) conn.ws.send(text, (err) => (err ? undefined : written()));
    else conn.ws.send(text);
    return true;
  }

  private sendError(conn: Connection, code: string, message: string, requestId?: string): void {
    this.send(conn, {
      type: 'error',
      code,
      message: clip(message),
      fatal: false,
      ...(requestId ? { request_id: requestId } : {}),
    });
  }

  private onMessage(conn: Connection, data: RawData, isBinary: boolean): void {
    conn.lastSeen = Date.now();
    if (isBinary) {
      this.sendError(conn, 'malformed_json', 'Binary messages are not frames; send each frame as a JSON text message.');
      return;
    }
    let frame: DeviceFrame;
    try {
      frame = conn.codec.decode(textOf(data));
    } catch (err) {
      if (!isDeviceProtocolError(err)) throw err;
      this.logger.warn?.('refused a frame from the bridge', { code: err.code, requestId: err.requestId });
      this.sendError(conn, err.code, err.message, err.requestId);
      return;
    }
    try {
      this.dispatch(conn, frame);
    } catch (err) {
      // A journal write failed (disk full, I/O error): nothing was run; say so rather than crash the connection.
      this.logger.warn?.('could not handle a frame', { type: frame.type, error: (err as Error).message });
      this.sendError(
        conn,
        'internal',
        `The device could not handle the ${frame.type} frame: ${(err as Error).message}`,
        'request_id' in frame ? frame.request_id : undefined,
      );
    }
  }

  private dispatch(conn: Connection, frame: DeviceFrame): void {
    if (!conn.welcome) {
      if (frame.type === 'welcome') this.onWelcome(conn, frame);
      else if (frame.type === 'error') {
        this.logger.warn?.('the bridge refused the connection', { code: frame.code, message: frame.message });
        if (frame.fatal && CREDENTIAL_REFUSALS.has(frame.code))
          this.options.onAuthenticationRefused?.({ code: frame.code, message: frame.message });
      } else
        this.sendError(
          conn,
          'unexpected_frame',
          `A ${frame.type} frame arrived before welcome; the bridge must answer hello first.`,
        );
      return;
    }
    switch (frame.type) {
      case 'submit':
        return this.onSubmit(conn, frame);
      case 'start_granted':
        return this.onGranted(conn, frame.request_id);
      case 'start_refused':
        return this.onRefused(conn, frame.request_id, { code: frame.reason, message: frame.message });
      case 'outcome_ack':
        return this.onOutcomeAck(conn, frame.request_id);
      case 'status_query':
        return this.report(conn, frame.request_id);
      case 'seal':
        return this.onSeal(conn, frame.request_id, undefined);
      case 'cancel':
        return this.onCancel(conn, frame.request_id, frame.reason);
      case 'heartbeat':
        return;
      case 'error':
        this.logger.warn?.('the bridge reported an error', {
          code: frame.code,
          message: frame.message,
          requestId: frame.request_id,
        });
        if (frame.code === 'internal' && frame.request_id) this.retryLater(conn, frame.request_id);
        if (frame.fatal && CREDENTIAL_REFUSALS.has(frame.code))
          this.options.onAuthenticationRefused?.({ code: frame.code, message: frame.message });
        return;
      case 'welcome':
      case 'hello':
      case 'start_claim':
      case 'progress':
      case 'outcome':
      case 'status_report':
        return this.sendError(
          conn,
          'unexpected_frame',
          `A device does not accept ${frame.type} frames${frame.type === 'welcome' ? ' twice' : ''}.`,
        );
      default: {
        const unknown: never = frame;
        throw new Error(`unhandled frame ${JSON.stringify(unknown)}`);
      }
    }
  }

  private onSubmit(conn: Connection, frame: SubmitFrameV1): void {
    let args: ToolArguments;
    try {
      args = verifySubmitPayload(frame);
    } catch (err) {
      if (!isDeviceProtocolError(err)) throw err;
      return this.sendError(conn, err.code, err.message, frame.request_id);
    }
    const admission = this.journal.admit({
      requestId: frame.request_id,
      callId: frame.call_id,
      tool: frame.tool,
      payloadSha256: frame.payload_sha256,
      deadline: frame.deadline,
      verdict: frame.verdict,
    });
    const entry = admission.entry;
    if (admission.kind === 'conflict') {
      return this.sendError(
        conn,
        'request_conflict',
        `Request ${frame.request_id} was already received with payload hash ${entry.payloadSha256}; this submit has ` +
          `${frame.payload_sha256}. Nothing was run. Send different arguments under a new request id.`,
        frame.request_id,
      );
    }
    if (admission.kind === 'duplicate') {
      if (entry.outcome) return this.sendOutcome(conn, entry);
      const waiting = entry.state === 'received' || entry.state === 'claimed';
      if (!waiting || this.granted.has(entry.requestId) || conn.claims.has(entry.requestId))
        return this.report(conn, entry.requestId);
    }
    // New, or known but never claimed successfully (a claim lost with a connection or a restart): claim it.
    const refusal = this.preflight(frame, args);
    if (refusal) {
      this.journal.markRejected(frame.request_id, refusal);
      return this.report(conn, frame.request_id);
    }
    this.pending.set(frame.request_id, { frame, args });
    if (this.journal.get(frame.request_id)?.state === 'received') this.journal.markClaimed(frame.request_id);
    this.sendClaim(conn, frame.request_id);
  }

  /** The device's own checks before it claims anything: deadline, package denylist, known foreground app. */
  private preflight(frame: SubmitFrameV1, args: ToolArguments): WireErrorV1 | undefined {
    if (Date.parse(frame.deadline) <= Date.now() + this.clockOffsetMs) {
      return {
        code: 'deadline_passed',
        message:
          `The request reached the device after its deadline (${frame.deadline}); nothing was run. Check the ` +
          `action's real state before submitting it again.`,
      };
    }
    return this.packageRefusal(frame.tool, args, frame.verdict);
  }

  private packageRefusal(tool: string, args: ToolArguments, verdict?: RiskVerdictV1): WireErrorV1 | undefined {
    let target: string | null | undefined;
    try {
      target = this.options.targetPackage(tool, args);
    } catch (err) {
      target = null;
      this.logger.warn?.('could not tell which app an action targets', { tool, error: (err as Error).message });
    }
    if (target === null) {
      return {
        code: 'foreground_unknown',
        message:
          'The device cannot tell which app is in front, so it did not act. Observe the screen with ' +
          'device.screen_observe, then retry passing the foreground_package from that observation.',
      };
    }
    if (target !== undefined && this.denied.has(target)) {
      return {
        code: 'package_denied',
        message: `This device never lets an agent control ${target}; nothing was done. Ask the owner to do this in the app themselves.`,
      };
    }
    // The risk of a screen action was judged for the app in front then; in another app it acts on what nobody judged.
    const judged = verdict?.judged_on?.foreground_package;
    if (judged !== undefined && target !== undefined && target !== judged) {
      return {
        code: 'foreground_changed',
        message:
          `This action was judged for ${judged}, but ${target} is in front now; nothing was done. Call ` +
          'device.screen_observe, then call again naming the element you mean (ref and target_text).',
      };
    }
    return undefined;
  }

  private sendClaim(conn: Connection, requestId: string): void {
    if (!conn.welcome) return;
    if (this.faultAt(conn, 'before_claim', requestId)) return;
    if (this.send(conn, { type: 'start_claim', request_id: requestId })) conn.claims.add(requestId);
  }

  private onGranted(conn: Connection, requestId: string): void {
    conn.claims.delete(requestId);
    this.retries.delete(requestId);
    const entry = this.journal.get(requestId);
    if (entry?.state !== 'claimed' || !this.pending.has(requestId) || this.granted.has(requestId)) {
      this.sendError(
        conn,
        'unexpected_frame',
        `No start claim of request ${requestId} is waiting on this device; nothing was run.`,
        requestId,
      );
      return this.report(conn, requestId);
    }
    this.granted.set(requestId, new AbortController());
    this.queue = this.queue
      .then(() => this.run(requestId))
      .catch((err: unknown) =>
        this.logger.warn?.('an execution could not be run', { requestId, error: (err as Error).message }),
      );
    this.faultAt(conn, 'after_grant', requestId);
  }

  private onRefused(conn: Connection, requestId: string, reason: WireErrorV1): void {
    conn.claims.delete(requestId);
    this.retries.delete(requestId);
    const state = this.journal.get(requestId)?.state;
    if ((state === 'claimed' || state === 'received') && !this.granted.has(requestId)) {
      this.journal.markRefused(requestId, reason);
      this.pending.delete(requestId);
    }
  }

  private onOutcomeAck(conn: Connection, requestId: string): void {
    this.retries.delete(requestId);
    const entry = this.journal.get(requestId);
    if (!entry?.outcome) {
      return this.sendError(
        conn,
        'unexpected_frame',
        `Request ${requestId} has no outcome on this device to acknowledge.`,
        requestId,
      );
    }
    this.journal.markAcked(requestId);
  }

  /**
   * The bridge could not record a claim or an outcome of this request (its `internal` error): send it again on this
   * connection after a backoff (0.5 s doubling to 30 s), unless it was answered meanwhile. A reconnect resends both
   * anyway. Nothing runs without a grant, and a repeated outcome is recorded once, so a retry is always safe.
   */
  private retryLater(conn: Connection, requestId: string): void {
    conn.claims.delete(requestId);
    const attempt = this.retries.get(requestId) ?? 0;
    this.retries.set(requestId, attempt + 1);
    this.scheduler.timeout(
      () => {
        if (this.closing || this.conn !== conn || !conn.welcome) return;
        const entry = this.journal.get(requestId);
        if (entry?.outcome && !entry.acked) return this.sendOutcome(conn, entry);
        if (
          entry?.state === 'claimed' &&
          this.pending.has(requestId) &&
          !this.granted.has(requestId) &&
          !conn.claims.has(requestId)
        )
          this.sendClaim(conn, requestId);
      },
      Math.min(30_000, 500 * 2 ** attempt),
      false,
    );
  }

  private onSeal(conn: Connection, requestId: string, reason: WireErrorV1 | undefined): void {
    if (this.journal.canSeal(requestId) && !this.granted.has(requestId)) {
      this.retries.delete(requestId);
      this.journal.seal(requestId, reason);
      this.pending.delete(requestId);
      conn.claims.delete(requestId);
    }
    this.report(conn, requestId);
  }

  private onCancel(conn: Connection, requestId: string, reason: string | undefined): void {
    // Running, or granted and waiting behind another execution: it fails as cancelled (unless it already finished).
    const controller = this.granted.get(requestId);
    if (controller) {
      controller.abort(new Error(reason ?? 'cancelled by the platform'));
      return this.report(conn, requestId);
    }
    this.onSeal(conn, requestId, {
      code: 'cancelled',
      message: reason ?? 'Cancelled by the platform before it started.',
    });
  }

  private statusReport(requestId: string): DeviceFrameDraft<StatusReportFrameV1> {
    const entry = this.journal.get(requestId);
    const reason = entry?.outcome?.status === 'failed' ? entry.outcome.error : entry?.reason;
    return {
      type: 'status_report',
      request_id: requestId,
      state: this.requestState(requestId),
      ...(entry?.payloadSha256 ? { payload_sha256: entry.payloadSha256 } : {}),
      ...(reason ? { reason } : {}),
    };
  }

  private report(conn: Connection, requestId: string): void {
    this.send(conn, this.statusReport(requestId));
  }

  private sendOutcome(conn: Connection, entry: JournalEntry): void {
    const outcome = entry.outcome;
    if (!outcome) return;
    const duration = outcome.durationMs === undefined ? {} : { duration_ms: outcome.durationMs };
    // The after_outcome fault fires once the frame has left, so the bridge receives it and only the ack is lost.
    const written = this.options.onProtocolStep
      ? () => {
          if (conn.ws.readyState === WebSocket.OPEN) this.faultAt(conn, 'after_outcome', entry.requestId);
        }
      : undefined;
    this.send(
      conn,
      outcome.status === 'succeeded'
        ? { type: 'outcome', request_id: entry.requestId, status: 'succeeded', result: outcome.result, ...duration }
        : { type: 'outcome', request_id: entry.requestId, status: 'failed', error: outcome.error, ...duration },
      written,
    );
  }

  // --- execution --------------------------------------------------------------------------------------------------

  private async run(requestId: string): Promise<void> {
    const pending = this.pending.get(requestId);
    if (this.closing || !pending || this.journal.get(requestId)?.state !== 'claimed') {
      this.granted.delete(requestId);
      return;
    }
    const { frame, args } = pending;
    // The start is durable before anything happens, so no later delivery or restart can run this request again.
    this.journal.markStarted(requestId, this.bootId);
    const controller = this.granted.get(requestId) ?? new AbortController();
    this.running.set(requestId, controller);
    const deadline = new Date(Date.parse(frame.deadline) - this.clockOffsetMs);
    const timeout = AbortSignal.timeout(Math.max(0, deadline.getTime() - Date.now()));
    const began = performance.now();
    let outcome: JournalOutcome;
    try {
      // The foreground may have changed between the claim and the grant; check again right before acting.
      const refusal = this.packageRefusal(frame.tool, args, frame.verdict);
      if (refusal) throw new DeviceToolError(refusal.code, refusal.message);
      // Cancelled or overdue while it waited behind another execution: say that nothing was done.
      if (controller.signal.aborted) {
        throw new DeviceToolError(
          'cancelled',
          `Cancelled before it started (${(controller.signal.reason as Error).message}); nothing was done.`,
        );
      }
      if (deadline.getTime() <= Date.now()) {
        throw new DeviceToolError(
          'deadline_exceeded',
          `Its deadline (${frame.deadline}) passed before the device could start it; nothing was done. Check the ` +
            `action's real state before submitting it again.`,
        );
      }
      const result = await this.options.executor(frame.tool, args, {
        requestId,
        callId: frame.call_id,
        verdict: frame.verdict,
        deadline,
        signal: AbortSignal.any([controller.signal, timeout]),
        progress: (stage, fraction) => this.progress(requestId, stage, fraction),
      });
      outcome = this.checkedOutcome(requestId, {
        status: 'succeeded',
        result,
        durationMs: Math.round(performance.now() - began),
      });
    } catch (err) {
      // An executor that gave up because it was told to stop gets a code that says why, unless it chose its own.
      const stopped = controller.signal.aborted ? 'cancelled' : timeout.aborted ? 'deadline_exceeded' : undefined;
      const error = this.wireError(err, stopped);
      outcome = { status: 'failed', error, durationMs: Math.round(performance.now() - began) };
    } finally {
      this.running.delete(requestId);
      this.granted.delete(requestId);
      this.pending.delete(requestId);
    }
    let entry: JournalEntry;
    try {
      entry = this.journal.recordOutcome(requestId, outcome);
    } catch (err) {
      // Journal closed or failing: the run stays `started`, which the next client reports as interrupted.
      this.logger.warn?.('could not journal an outcome', { requestId, error: (err as Error).message });
      return;
    }
    if (this.conn?.welcome) this.sendOutcome(this.conn, entry);
  }

  /** Replaces a result the protocol cannot carry (not JSON, too large) with a failure that says so. */
  private checkedOutcome(requestId: string, outcome: JournalOutcome & { status: 'succeeded' }): JournalOutcome {
    try {
      new DeviceFrameCodec(this.maxFrameBytes).encode({
        type: 'outcome',
        request_id: requestId,
        status: 'succeeded',
        result: outcome.result,
      });
      return outcome;
    } catch (err) {
      return {
        status: 'failed',
        error: {
          code: 'result_invalid',
          message: clip(`The action ran, but its result cannot be reported: ${(err as Error).message}`),
        },
        ...(outcome.durationMs === undefined ? {} : { durationMs: outcome.durationMs }),
      };
    }
  }

  private wireError(err: unknown, fallbackCode = 'executor_failed'): WireErrorV1 {
    const code = err instanceof OrmuzError && ERROR_CODE.test(err.code) ? err.code : fallbackCode;
    const message = err instanceof Error && err.message ? err.message : `The action failed: ${String(err)}`;
    return { code, message: clip(message) };
  }

  private progress(requestId: string, stage: string, fraction: number | undefined): void {
    if (!this.conn?.welcome || !this.running.has(requestId)) return;
    this.send(this.conn, {
      type: 'progress',
      request_id: requestId,
      stage: clip(stage || '…', 256),
      ...(fraction === undefined || !Number.isFinite(fraction) ? {} : { fraction: Math.min(1, Math.max(0, fraction)) }),
    });
  }
}
