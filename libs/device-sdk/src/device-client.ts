/**
 * The device side of the tracked execution protocol: connects to a bridge, receives submitted tool calls and runs
 * each at most once, with the device journal as the record of what happened.
 *
 * This module is the client an app creates: its options, and the class that owns the journal, the connection
 * (device-connection.ts: connect, hello/welcome, heartbeat, backoff) and the execution protocol (execution-protocol.ts:
 * claims, grants, runs, outcomes), and routes the protocol's frames from the one to the other.
 */
import { randomUUID } from 'node:crypto';
import {
  DEVICE_MAX_FRAME_BYTES,
  type DeviceRequestState,
  type WelcomeFrameV1,
  type WireErrorV1,
} from '@ormuz/contracts';
import {
  DeviceConnection,
  type DeviceConnectionEvents,
  type DeviceLink,
  type ProtocolFrame,
} from './device-connection.js';
import type { DeviceExecutor, TargetPackageResolver } from './device-executor.js';
import { ExecutionProtocol, type ProtocolStepHook } from './execution-protocol.js';
import { DeviceJournal, type JournalEntry } from './journal.js';
import { NODE_SCHEDULER, type DeviceScheduler } from './scheduler.js';

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

/** What a client resolved from its options; its connection and execution protocol share it. */
export interface DeviceClientSetup {
  readonly bootId: string;
  readonly maxFrameBytes: number;
  readonly logger: DeviceClientLogger;
  readonly scheduler: DeviceScheduler;
}

/** Shared by every client without a logger. */
const NO_LOGGER: DeviceClientLogger = {};

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
  private readonly connection: DeviceConnection;
  private readonly protocol: ExecutionProtocol;

  /** Opens the journal. @throws JournalLockedError, JournalCorruptError */
  constructor(private readonly options: DeviceClientOptions) {
    this.bootId = options.bootId ?? randomUUID();
    this.journal = DeviceJournal.open(options.journalDir);
    const setup: DeviceClientSetup = {
      bootId: this.bootId,
      maxFrameBytes: options.maxFrameBytes ?? DEVICE_MAX_FRAME_BYTES,
      logger: options.logger ?? NO_LOGGER,
      scheduler: options.scheduler ?? NODE_SCHEDULER,
    };
    const router = new FrameRouter();
    this.connection = new DeviceConnection(options, setup, router);
    this.protocol = router.protocol = new ExecutionProtocol(options, setup, this.journal, this.connection);
  }

  /** Starts connecting (and reconnecting). Idempotent. */
  start(): this {
    this.connection.start();
    return this;
  }

  /** True while a connection is open and welcomed. */
  get connected(): boolean {
    return this.connection.connected;
  }

  /** The welcome of the current connection, if connected. */
  get session(): WelcomeFrameV1 | undefined {
    return this.connection.session;
  }

  /** The state of a request as a status query would report it; reads the journal only. */
  requestState(requestId: string): DeviceRequestState {
    return this.protocol.requestState(requestId);
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
    if (this.connection.closing) return;
    this.connection.stop();
    if (options.crash) {
      this.connection.disconnect(true);
      // The journal closes first, so an execution that ends after this cannot record an outcome.
      this.journal.close();
      this.protocol.abortAll(new Error('the device process stopped'));
      return;
    }
    this.protocol.abortAll(new Error('the device client is closing'));
    this.connection.disconnect(false);
    await Promise.race([this.protocol.idle(), delay(this.options.closeGraceMs ?? 5_000)]);
    this.journal.close();
  }
}

/**
 * Hands what the connection reports to the execution protocol: a welcome or a close, and each of the protocol's
 * frames to the step it belongs to. One small object per client rather than a closure per event: a fleet runs
 * thousands of clients in one process.
 */
class FrameRouter implements DeviceConnectionEvents {
  /** Set right after construction: the protocol sends through the connection that reports here. */
  protocol!: ExecutionProtocol;

  welcomed(link: DeviceLink): void {
    this.protocol.onWelcomed(link);
  }

  closed(link: DeviceLink): void {
    this.protocol.onClosed(link);
  }

  frame(link: DeviceLink, frame: ProtocolFrame): void {
    const protocol = this.protocol;
    switch (frame.type) {
      case 'submit':
        return protocol.onSubmit(link, frame);
      case 'start_granted':
        return protocol.onGranted(link, frame.request_id);
      case 'start_refused':
        return protocol.onRefused(link, frame.request_id, { code: frame.reason, message: frame.message });
      case 'outcome_ack':
        return protocol.onOutcomeAck(link, frame.request_id);
      case 'status_query':
        return protocol.report(link, frame.request_id);
      case 'seal':
        return protocol.onSeal(link, frame.request_id, undefined);
      case 'cancel':
        return protocol.onCancel(link, frame.request_id, frame.reason);
      case 'error':
        if (frame.code === 'internal' && frame.request_id) protocol.retryLater(link, frame.request_id);
        return;
      default: {
        const unknown: never = frame;
        throw new Error(`unhandled frame ${JSON.stringify(unknown)}`);
      }
    }
  }
}
