/**
 * The device's half of the tracked execution protocol, with the journal as the record of what happened: admits
 * submits, claims them, runs each granted one at most once, journals and sends its outcome and sends it again until
 * acknowledged, answers status queries, and takes seals and cancels. It sends through the connection and never opens
 * or closes one; the client routes each welcomed frame to one of its `on…` methods.
 */
import {
  activeTraceparent,
  contextOfTraceparent,
  inSpan,
  ORMUZ_CALL_STATUS,
  ORMUZ_RISK_LEVEL,
  toolCallAttributes,
} from '@ormuz/tracing';
import { performance } from 'node:perf_hooks';
import { WebSocket } from 'ws';
import {
  DeviceFrameCodec,
  OrmuzError,
  isDeviceProtocolError,
  verifySubmitPayload,
  type DeviceFrameDraft,
  type DeviceRequestState,
  type StatusReportFrameV1,
  type SubmitFrameV1,
  type WireErrorV1,
} from '@ormuz/contracts';
import type { DeviceClientLogger, DeviceClientOptions, DeviceClientSetup } from './device-client.js';
import { clip, type DeviceConnection, type DeviceLink } from './device-connection.js';
import { DeviceToolError, type ToolArguments } from './device-executor.js';
import type { DeviceJournal, JournalEntry, JournalOutcome } from './journal.js';
import { PackagePolicy } from './package-policy.js';

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

interface Pending {
  readonly frame: SubmitFrameV1;
  readonly args: ToolArguments;
}

const ERROR_CODE = /^[a-z][a-z0-9_]{0,63}$/;

/**
 * The execution protocol of one device (see {@link DeviceClient} for what it does with each submit). Executions run
 * one at a time, in the order their claims were granted.
 */
export class ExecutionProtocol {
  private readonly policy: PackagePolicy;
  private readonly logger: DeviceClientLogger;
  private readonly pending = new Map<string, Pending>();
  /** The span of each run whose outcome is not acknowledged yet (W3C `traceparent`): its outcome frame carries it. */
  private readonly traces = new Map<string, string>();
  /** Granted and queued or running; a seal can no longer stop these, a cancel aborts their controller. */
  private readonly granted = new Map<string, AbortController>();
  private readonly running = new Map<string, AbortController>();
  /** Attempts so far, per request whose claim or outcome the bridge failed to record. */
  private readonly retries = new Map<string, number>();
  private queue: Promise<void> = Promise.resolve();
  private reportedInterrupted = false;

  constructor(
    private readonly options: DeviceClientOptions,
    private readonly setup: DeviceClientSetup,
    private readonly journal: DeviceJournal,
    private readonly connection: DeviceConnection,
  ) {
    this.policy = new PackagePolicy(options, setup.logger);
    this.logger = setup.logger;
  }

  /** The state of a request as a status query would report it; reads the journal only. */
  requestState(requestId: string): DeviceRequestState {
    const entry = this.journal.get(requestId);
    if (!entry) return 'unknown';
    if (entry.state === 'started' && !this.running.has(requestId)) return 'interrupted';
    return entry.state;
  }

  /** Signals every granted execution, running or queued, to stop. */
  abortAll(reason: Error): void {
    for (const controller of this.granted.values()) controller.abort(reason);
  }

  /** Settles once every granted execution has finished. */
  idle(): Promise<void> {
    return this.queue;
  }

  /** A new connection was welcomed: resend unacknowledged outcomes and unanswered claims; report interrupted runs. */
  onWelcomed(link: DeviceLink): void {
    for (const entry of this.journal.unackedOutcomes()) this.sendOutcome(link, entry);
    for (const [requestId] of this.pending) {
      if (this.journal.get(requestId)?.state === 'claimed' && !this.granted.has(requestId))
        this.sendClaim(link, requestId);
    }
    if (!this.reportedInterrupted) {
      this.reportedInterrupted = true;
      for (const entry of this.journal.entries()) {
        if (this.requestState(entry.requestId) === 'interrupted') this.report(link, entry.requestId);
      }
    }
  }

  /** A link closed: its claims will never be answered. */
  onClosed(link: DeviceLink): void {
    link.claims.clear();
  }

  onSubmit(link: DeviceLink, frame: SubmitFrameV1): void {
    let args: ToolArguments;
    try {
      args = verifySubmitPayload(frame);
    } catch (err) {
      if (!isDeviceProtocolError(err)) throw err;
      return this.connection.sendError(link, err.code, err.message, frame.request_id);
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
      return this.connection.sendError(
        link,
        'request_conflict',
        `Request ${frame.request_id} was already received with payload hash ${entry.payloadSha256}; this submit has ` +
          `${frame.payload_sha256}. Nothing was run. Send different arguments under a new request id.`,
        frame.request_id,
      );
    }
    if (admission.kind === 'duplicate') {
      if (entry.outcome) return this.sendOutcome(link, entry);
      const waiting = entry.state === 'received' || entry.state === 'claimed';
      if (!waiting || this.granted.has(entry.requestId) || link.claims.has(entry.requestId))
        return this.report(link, entry.requestId);
    }
    // New, or known but never claimed successfully (a claim lost with a connection or a restart): claim it.
    const refusal = this.policy.preflight(frame, args, this.connection.clockOffsetMs);
    if (refusal) {
      this.journal.markRejected(frame.request_id, refusal);
      return this.report(link, frame.request_id);
    }
    this.pending.set(frame.request_id, { frame, args });
    if (this.journal.get(frame.request_id)?.state === 'received') this.journal.markClaimed(frame.request_id);
    this.sendClaim(link, frame.request_id);
  }

  onGranted(link: DeviceLink, requestId: string): void {
    link.claims.delete(requestId);
    this.retries.delete(requestId);
    const entry = this.journal.get(requestId);
    if (entry?.state !== 'claimed' || !this.pending.has(requestId) || this.granted.has(requestId)) {
      this.connection.sendError(
        link,
        'unexpected_frame',
        `No start claim of request ${requestId} is waiting on this device; nothing was run.`,
        requestId,
      );
      return this.report(link, requestId);
    }
    this.granted.set(requestId, new AbortController());
    this.queue = this.queue
      .then(() => this.run(requestId))
      .catch((err: unknown) =>
        this.logger.warn?.('an execution could not be run', { requestId, error: (err as Error).message }),
      );
    this.faultAt(link, 'after_grant', requestId);
  }

  onRefused(link: DeviceLink, requestId: string, reason: WireErrorV1): void {
    link.claims.delete(requestId);
    this.retries.delete(requestId);
    const state = this.journal.get(requestId)?.state;
    if ((state === 'claimed' || state === 'received') && !this.granted.has(requestId)) {
      this.journal.markRefused(requestId, reason);
      this.pending.delete(requestId);
    }
  }

  onOutcomeAck(link: DeviceLink, requestId: string): void {
    this.retries.delete(requestId);
    const entry = this.journal.get(requestId);
    if (!entry?.outcome) {
      return this.connection.sendError(
        link,
        'unexpected_frame',
        `Request ${requestId} has no outcome on this device to acknowledge.`,
        requestId,
      );
    }
    this.journal.markAcked(requestId);
    this.traces.delete(requestId);
  }

  /**
   * The bridge could not record a claim or an outcome of this request (its `internal` error): send it again on this
   * connection after a backoff (0.5 s doubling to 30 s), unless it was answered meanwhile. A reconnect resends both
   * anyway. Nothing runs without a grant, and a repeated outcome is recorded once, so a retry is always safe.
   */
  retryLater(link: DeviceLink, requestId: string): void {
    link.claims.delete(requestId);
    const attempt = this.retries.get(requestId) ?? 0;
    this.retries.set(requestId, attempt + 1);
    this.setup.scheduler.timeout(
      () => {
        if (this.connection.closing || !this.connection.isCurrent(link) || !link.welcome) return;
        const entry = this.journal.get(requestId);
        if (entry?.outcome && !entry.acked) return this.sendOutcome(link, entry);
        if (
          entry?.state === 'claimed' &&
          this.pending.has(requestId) &&
          !this.granted.has(requestId) &&
          !link.claims.has(requestId)
        )
          this.sendClaim(link, requestId);
      },
      Math.min(30_000, 500 * 2 ** attempt),
      false,
    );
  }

  onSeal(link: DeviceLink, requestId: string, reason: WireErrorV1 | undefined): void {
    if (this.journal.canSeal(requestId) && !this.granted.has(requestId)) {
      this.retries.delete(requestId);
      this.journal.seal(requestId, reason);
      this.pending.delete(requestId);
      link.claims.delete(requestId);
    }
    this.report(link, requestId);
  }

  onCancel(link: DeviceLink, requestId: string, reason: string | undefined): void {
    // Running, or granted and waiting behind another execution: it fails as cancelled (unless it already finished).
    const controller = this.granted.get(requestId);
    if (controller) {
      controller.abort(new Error(reason ?? 'cancelled by the platform'));
      return this.report(link, requestId);
    }
    this.onSeal(link, requestId, {
      code: 'cancelled',
      message: reason ?? 'Cancelled by the platform before it started.',
    });
  }

  /** Answers a status query (or says where a request stands) from the journal. */
  report(link: DeviceLink, requestId: string): void {
    this.connection.send(link, this.statusReport(requestId));
  }

  /** True when the fault hook asked to cut the connection at this step (and it was cut). */
  private faultAt(link: DeviceLink, step: ProtocolStep, requestId: string): boolean {
    if (this.options.onProtocolStep?.(step, requestId) !== 'drop') return false;
    this.logger.debug?.('fault injection: cutting the connection', { step, requestId });
    this.connection.cut(link);
    return true;
  }

  private sendClaim(link: DeviceLink, requestId: string): void {
    if (!link.welcome) return;
    if (this.faultAt(link, 'before_claim', requestId)) return;
    if (this.connection.send(link, { type: 'start_claim', request_id: requestId })) link.claims.add(requestId);
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

  private sendOutcome(link: DeviceLink, entry: JournalEntry): void {
    const outcome = entry.outcome;
    if (!outcome) return;
    const traceparent = this.traces.get(entry.requestId);
    const duration = {
      ...(outcome.durationMs === undefined ? {} : { duration_ms: outcome.durationMs }),
      ...(traceparent === undefined ? {} : { traceparent }),
    };
    // The after_outcome fault fires once the frame has left, so the bridge receives it and only the ack is lost.
    const written = this.options.onProtocolStep
      ? () => {
          if (link.ws.readyState === WebSocket.OPEN) this.faultAt(link, 'after_outcome', entry.requestId);
        }
      : undefined;
    this.connection.send(
      link,
      outcome.status === 'succeeded'
        ? { type: 'outcome', request_id: entry.requestId, status: 'succeeded', result: outcome.result, ...duration }
        : { type: 'outcome', request_id: entry.requestId, status: 'failed', error: outcome.error, ...duration },
      written,
    );
  }

  // --- execution --------------------------------------------------------------------------------------------------

  private async run(requestId: string): Promise<void> {
    const pending = this.pending.get(requestId);
    if (this.connection.closing || !pending || this.journal.get(requestId)?.state !== 'claimed') {
      this.granted.delete(requestId);
      return;
    }
    const { frame } = pending;
    // The run is a span of the dispatch's trace (the submit's `traceparent`); the outcome frame carries it back.
    const attributes = {
      ...toolCallAttributes({ tenant: this.options.tenant, tool: frame.tool, callId: frame.call_id }),
      [ORMUZ_RISK_LEVEL]: frame.verdict.level,
    };
    const parent = frame.traceparent === undefined ? {} : { parent: contextOfTraceparent(frame.traceparent) };
    await inSpan('@ormuz/device-sdk', `device_execute ${frame.tool}`, { ...parent, attributes }, async (span) => {
      const traceparent = frame.traceparent === undefined ? undefined : activeTraceparent();
      if (traceparent) this.traces.set(requestId, traceparent);
      const status = await this.execute(requestId, pending);
      if (status) span.setAttribute(ORMUZ_CALL_STATUS, status);
    });
  }

  /** Runs a granted request and reports its outcome; the status it ended with, if it ran. */
  private async execute(requestId: string, { frame, args }: Pending): Promise<JournalOutcome['status'] | undefined> {
    // The start is durable before anything happens, so no later delivery or restart can run this request again.
    this.journal.markStarted(requestId, this.setup.bootId);
    const controller = this.granted.get(requestId) ?? new AbortController();
    this.running.set(requestId, controller);
    const deadline = new Date(Date.parse(frame.deadline) - this.connection.clockOffsetMs);
    const timeout = AbortSignal.timeout(Math.max(0, deadline.getTime() - Date.now()));
    const began = performance.now();
    let outcome: JournalOutcome;
    try {
      // The foreground may have changed between the claim and the grant; check again right before acting.
      const refusal = this.policy.refusal(frame.tool, args, frame.verdict);
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
      return undefined;
    }
    const link = this.connection.welcomed;
    if (link) this.sendOutcome(link, entry);
    return outcome.status;
  }

  /** Replaces a result the protocol cannot carry (not JSON, too large) with a failure that says so. */
  private checkedOutcome(requestId: string, outcome: JournalOutcome & { status: 'succeeded' }): JournalOutcome {
    try {
      new DeviceFrameCodec(this.setup.maxFrameBytes).encode({
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
    const link = this.connection.welcomed;
    if (!link || !this.running.has(requestId)) return;
    this.connection.send(link, {
      type: 'progress',
      request_id: requestId,
      stage: clip(stage || '…', 256),
      ...(fraction === undefined || !Number.isFinite(fraction) ? {} : { fraction: Math.min(1, Math.max(0, fraction)) }),
    });
  }
}
