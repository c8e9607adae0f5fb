/**
 * The bridge's side of the tracked execution protocol once a call is on its device, wired to the log (which calls go
 * to which device, and when, is the dispatcher's business: device-dispatcher.ts):
 * - start claim: the device may run the call only after `started` is appended with an expected sequence, so a
 *   concurrent seal and start can never both win;
 * - outcome: recorded as reported; a late outcome after `outcome_unknown` is still recorded;
 * - lost connection, new boot id, deadline: a started call becomes `outcome_unknown` with its cause, never succeeded;
 * - reconnect: every call the log has as dispatched, started or outcome unknown is asked about (`status_query`, which
 *   never runs anything) and the journal's answers are recorded (late failures, rejections, interrupted runs);
 * - a device that claims or reports a request it does not hold (another device's, an unknown id, another tenant's,
 *   or an outcome of a call that never started) is refused and the attempt is recorded on the `devices` stream
 *   (`ormuz.device.report_refused.v1`), which audit archives;
 * - not run: when the device's journal proves that a started or unknown call was never begun and never will be
 *   (claimed, then refused, rejected or sealed), the call's outcome is recorded as `failed` with code `not_run`.
 */
import { Inject, Injectable } from '@nestjs/common';
import {
  DEVICE_SUBMIT_REFUSAL_CODES,
  DeviceEventType,
  isSettledRequestState,
  type DeviceRequestState,
  type ErrorFrameV1,
  type OutcomeFrameV1,
  type ProgressFrameV1,
  type ReportRefusalReason,
  type StartClaimFrameV1,
  type StartRefusalReason,
  type StatusReportFrameV1,
} from '@ormuz/contracts';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';
import { contextOfTraceparent, inSpan, ORMUZ_CALL_STATUS, ORMUZ_DEVICE_ID, toolCallAttributes } from '@ormuz/tracing';
import { isCallAlreadyStartedError, isSealedCallError, isToolCallError } from '@ormuz/tool-call';
import { DEVICE_BRIDGE_CONFIG, type DeviceBridgeConfig } from '../config.js';
import type { DeviceIdentity } from '../domain/device-credentials.js';
import { ExecutionsRepository, type ExecutionRow } from '../persistence/executions.repository.js';
import { DeviceEventsRecorder } from './device-events.recorder.js';
import type { DeviceLink } from './device-link.js';
import { ExecutionLog, type ReportedOutcome } from './execution-log.js';
import { InFlightExecutions } from './in-flight-executions.js';

/**
 * Journal states that prove a request was never begun and never will be: the journal records `started` before
 * anything runs, and none of these can follow it (refused: the bridge refused the claim; rejected: the device's own
 * checks refused it; sealed: sealed before any grant).
 */
const NEVER_RUN: ReadonlySet<DeviceRequestState> = new Set<DeviceRequestState>(['refused', 'rejected', 'sealed']);

/** The outcome error of a call the device's journal proves it never began. */
export const NOT_RUN_CODE = 'not_run';

export type ClaimAnswer =
  | { readonly granted: true }
  | {
      readonly granted: false;
      readonly reason: StartRefusalReason;
      readonly message: string;
    };

/** An outcome the bridge did not record (and does not acknowledge). */
export interface OutcomeRefusal {
  readonly refused: ReportRefusalReason;
  readonly message: string;
}

/** What the gateway knows about the connection a frame came from. */
export type Sender = DeviceIdentity & { readonly sessionId?: string };

@Injectable()
export class ExecutionProtocol {
  private link: DeviceLink | undefined;

  constructor(
    private readonly log: ExecutionLog,
    private readonly executions: ExecutionsRepository,
    private readonly inFlight: InFlightExecutions,
    private readonly deviceEvents: DeviceEventsRecorder,
    @Inject(DEVICE_BRIDGE_CONFIG) private readonly config: DeviceBridgeConfig,
    @Inject(INFRA) private readonly infra: Infrastructure,
  ) {}

  attach(link: DeviceLink): void {
    this.link = link;
  }

  /**
   * A device says hello: a new boot id means started calls of the previous boot have an unknown outcome. Then the
   * device is asked for its journal's state of every call that is dispatched, started or unknown on the log.
   */
  async onConnected(device: DeviceIdentity, bootId: string): Promise<void> {
    this.inFlight.connected(device);
    const unsettled = await this.executions.unsettled(device.tenant, device.deviceId);
    for (const row of unsettled) {
      if (row.status === 'started' && row.boot_id && row.boot_id !== bootId) {
        await this.markUnknown(row, 'reboot', `device booted again (boot ${bootId}) while the call was running`);
      }
    }
    for (const row of unsettled) this.link?.sendStatusQuery(device, row.request_id ?? row.call_id);
  }

  async onStartClaim(device: Sender, frame: StartClaimFrameV1, bootId: string): Promise<ClaimAnswer> {
    const found = await this.assigned(device, frame.request_id, 'start_claim');
    if (found.kind === 'unknown') {
      return {
        granted: false,
        reason: 'unknown_request',
        message: `No request ${frame.request_id} is known for this device; do not run it.`,
      };
    }
    if (found.kind === 'other') {
      return {
        granted: false,
        reason: 'not_assigned',
        message: `Request ${frame.request_id} is assigned to another device; do not run it.`,
      };
    }
    const row = found.row;
    if (row.status === 'dispatched' && row.deadline && row.deadline.getTime() <= Date.now()) {
      // Too late to start: sealed here rather than left to the sweeper, so the device is told why.
      await this.log.seal(row.tenant, row.call_id, `not started before its deadline ${row.deadline.toISOString()}`);
      this.inFlight.settled(device, row.call_id);
      return {
        granted: false,
        reason: 'expired',
        message: `Request ${frame.request_id} passed its deadline before it started; do not run it.`,
      };
    }
    try {
      await this.log.claimStart(device.tenant, row.call_id, frame.request_id, device.deviceId, bootId);
      this.inFlight.startGranted(device, row.call_id);
      return { granted: true };
    } catch (err) {
      if (isToolCallError(err)) this.inFlight.settled(device, row.call_id);
      if (isSealedCallError(err)) return { granted: false, reason: 'sealed', message: err.message };
      if (isCallAlreadyStartedError(err)) return { granted: false, reason: 'already_started', message: err.message };
      if (isToolCallError(err)) return { granted: false, reason: 'unknown_request', message: err.message };
      throw err;
    }
  }

  /** Records the outcome; resolves to a refusal (not acknowledged) when the request belongs to another device. */
  async onOutcome(device: Sender, frame: OutcomeFrameV1): Promise<OutcomeRefusal | undefined> {
    const found = await this.assigned(device, frame.request_id, 'outcome');
    if (found.kind === 'other') {
      return {
        refused: 'not_assigned',
        message: `Request ${frame.request_id} is assigned to another device; its outcome was not recorded.`,
      };
    }
    if (found.kind === 'unknown') {
      return {
        refused: 'unknown_request',
        message: `No request ${frame.request_id} is known for this device; its outcome was not recorded.`,
      };
    }
    const row = found.row;
    // Recorded in the device's span of the run (its frame's `traceparent`), so the outcome joins the call's trace.
    const attributes = {
      ...toolCallAttributes({ tenant: device.tenant, tool: row.tool, callId: row.call_id }),
      [ORMUZ_DEVICE_ID]: device.deviceId,
      [ORMUZ_CALL_STATUS]: frame.status,
    };
    const parent = frame.traceparent === undefined ? {} : { parent: contextOfTraceparent(frame.traceparent) };
    return inSpan('@ormuz/device-bridge', `outcome ${row.tool}`, { ...parent, attributes }, () =>
      this.recordOutcome(device, frame, row),
    );
  }

  private async recordOutcome(
    device: Sender,
    frame: OutcomeFrameV1,
    row: ExecutionRow,
  ): Promise<OutcomeRefusal | undefined> {
    const f = frame as OutcomeFrameV1 & ReportedOutcome;
    try {
      await this.log.recordOutcome(device.tenant, row.call_id, frame.request_id, f, row.authorized_at);
    } catch (err) {
      if (!isToolCallError(err) || (err.code !== 'invalid_transition' && !isSealedCallError(err))) throw err;
      // Decided on the store's cached state, which a concurrent read may have left behind the log: read it afresh.
      const status = await this.log.status(device.tenant, row.call_id);
      if (status === 'started' || status === 'outcome_unknown') {
        await this.log.recordOutcome(device.tenant, row.call_id, frame.request_id, f, row.authorized_at);
        this.done(device, row.call_id);
        return undefined;
      }
      // Never started (dispatched, or sealed before its start): an outcome cannot be true, so it is not recorded.
      await this.refuseReport(device, frame.request_id, 'outcome', 'not_started', row);
      return {
        refused: 'not_started',
        message: `Request ${frame.request_id} was never granted its start, so its outcome was not recorded; a request runs only after start_granted.`,
      };
    }
    this.done(device, row.call_id);
    return undefined;
  }

  /** The call's outcome is recorded: it no longer runs, and the device is done with it. */
  private done(device: DeviceIdentity, callId: string): void {
    this.inFlight.finished(device, callId);
    this.inFlight.settled(device, callId);
  }

  /**
   * The device's journal state of a request (an answer to a status query, a seal or a duplicate submit; a refusal
   * before claiming; an interrupted run after a restart). Never a reason to run or resend anything; it records only
   * what the journal proves:
   * - `failed` for a call started or outcome_unknown on the log: the late real failure (a success carries its result
   *   only in an `outcome` frame, which the device resends until acknowledged);
   * - `rejected` for a dispatched call: the device refused it before claiming, so it never ran and never will; the
   *   tool-call decider records a failure only after a start, so it is sealed with the device's reason;
   * - `interrupted` for a started call: outcome_unknown (reboot);
   * - `refused`, `rejected` or `sealed`, with the call's payload hash, for a call started or outcome_unknown on the
   *   log: the journal holds the claim and proves nothing ran nor will (`started` is journaled before acting and can
   *   follow none of these), so the outcome is `failed` with code `not_run`;
   * - `claimed` for an outcome_unknown call: the device may hold a grant it will still run, or a claim whose answer
   *   it lost; it is asked once per connection to seal it, which it does only if it holds no grant, and then
   *   reports `sealed` (not run) or `claimed` again (it will run, and its outcome comes).
   */
  async onStatusReport(device: Sender, frame: StatusReportFrameV1): Promise<void> {
    const log = this.infra.logger;
    const found = await this.assigned(device, frame.request_id, 'status_report');
    if (found.kind !== 'mine') return;
    const row = found.row;
    if (isSettledRequestState(frame.state)) this.inFlight.settled(device, row.call_id);
    if (frame.payload_sha256 && frame.payload_sha256 !== row.payload_sha256) {
      log.warn(
        { device: device.deviceId, tenant: device.tenant, request: frame.request_id },
        'status report names other payload bytes; ignored',
      );
      return;
    }
    const requestId = row.request_id ?? row.call_id;
    const status = await this.log.status(device.tenant, row.call_id);
    log.debug({ device: device.deviceId, request: frame.request_id, state: frame.state, status }, 'status report');
    const ranHere = status === 'started' || status === 'outcome_unknown';
    try {
      if (frame.state === 'failed' && ranHere) {
        this.inFlight.finished(device, row.call_id);
        await this.log.recordOutcome(
          device.tenant,
          row.call_id,
          requestId,
          {
            status: 'failed',
            error: frame.reason ?? { code: 'unknown', message: 'the device journal reports a failure without details' },
          },
          row.authorized_at,
        );
      } else if (NEVER_RUN.has(frame.state) && ranHere && frame.payload_sha256 === row.payload_sha256) {
        this.inFlight.finished(device, row.call_id);
        log.info(
          { device: device.deviceId, tenant: device.tenant, request: requestId, state: frame.state, status },
          'device journal proves the call never ran',
        );
        await this.log.recordOutcome(
          device.tenant,
          row.call_id,
          requestId,
          {
            status: 'failed',
            error: {
              code: NOT_RUN_CODE,
              message: clipText(
                `Not run: device ${device.deviceId} claimed the call, but its journal records it ${frame.state} without ever ` +
                  `starting it${frame.reason ? ` (${frame.reason.code}: ${frame.reason.message})` : ''}. Nothing was done; ` +
                  `submit it again under a new operation id if it is still wanted.`,
              ),
            },
          },
          row.authorized_at,
        );
      } else if (frame.state === 'claimed' && status === 'outcome_unknown' && device.sessionId) {
        // Asked once per connection to seal it (see above).
        if (this.inFlight.firstSealAsk(device.sessionId, requestId)) this.link?.sendSeal(device, requestId);
      } else if (frame.state === 'rejected' && status === 'dispatched') {
        const why = frame.reason ? `${frame.reason.code}: ${frame.reason.message}` : 'no reason given';
        await this.log.seal(row.tenant, row.call_id, clipText(`device ${device.deviceId} refused to run it (${why})`));
      } else if (frame.state === 'interrupted' && status === 'started') {
        this.inFlight.finished(device, row.call_id);
        await this.markUnknown(
          row,
          'reboot',
          `device ${device.deviceId} restarted while the call was running; its journal reports it interrupted`,
        );
      }
    } catch (err) {
      // The log moved on meanwhile (e.g. the real outcome arrived first): the report changes nothing.
      if (!isToolCallError(err)) throw err;
      log.debug({ err, request: frame.request_id }, 'status report not recorded');
    }
  }

  /**
   * The device refused a submit it received (its bytes do not match their hash, or the request id is already in its
   * journal with other bytes). It will not run it, so a call still waiting for its start is sealed with the reason.
   */
  async onDeviceError(device: Sender, frame: ErrorFrameV1): Promise<void> {
    if (!frame.request_id || !DEVICE_SUBMIT_REFUSAL_CODES.has(frame.code)) return;
    const found = await this.assigned(device, frame.request_id, 'error');
    // Sealing loses to a start already recorded (the read model may lag behind the dispatch, so the log decides).
    if (found.kind !== 'mine') return;
    this.inFlight.settled(device, found.row.call_id);
    await this.log.seal(
      found.row.tenant,
      found.row.call_id,
      clipText(`device ${device.deviceId} refused the submit (${frame.code}: ${frame.message})`),
    );
  }

  /** Progress of a running call: logged and published for live observers (`<ns>.bridge.progress.<tenant>.<call>`). */
  onProgress(device: Sender, frame: ProgressFrameV1): void {
    this.infra.logger.debug(
      { device: device.deviceId, request: frame.request_id, stage: frame.stage, fraction: frame.fraction },
      'progress',
    );
    this.infra.nc.publish(
      `${this.config.namespace}.bridge.progress.${device.tenant}.${frame.request_id}`,
      JSON.stringify({
        device_id: device.deviceId,
        request_id: frame.request_id,
        stage: frame.stage,
        fraction: frame.fraction ?? null,
      }),
    );
  }

  /**
   * A lost connection is not proof of anything: started calls become outcome_unknown until the device reports. When a
   * newer connection of the device is already live (`superseded`: it reconnected before this close was handled), the
   * device is reachable: that connection reconciles the calls in flight, and the device-wide state is now its own.
   */
  async onDisconnected(device: Sender, cause: string, superseded = false): Promise<void> {
    if (device.sessionId) this.inFlight.sessionEnded(device.sessionId);
    if (superseded) {
      this.infra.logger.info(
        { tenant: device.tenant, device: device.deviceId, cause },
        'an old connection closed after the device reconnected',
      );
      return;
    }
    // The read model may not show a start granted a moment ago, so the connection's own list counts too.
    const running = this.inFlight.disconnected(device);
    const ids = new Set([
      ...(await this.executions.started(device.tenant, device.deviceId)).map((r) => r.call_id),
      ...running,
    ]);
    for (const callId of ids) {
      await this.log.markUnknown(
        device.tenant,
        callId,
        callId,
        'connection_lost',
        `connection to ${device.deviceId} lost while the call was running (${cause})`,
      );
    }
  }

  /** Calls past their execution deadline: cancelled on the device and recorded outcome_unknown (timeout), or sealed when they never started. */
  async sweepOverdue(now = new Date()): Promise<void> {
    for (const row of await this.executions.overdue(now)) {
      this.link?.sendCancel(
        { tenant: row.tenant, deviceId: row.device_id },
        row.request_id ?? row.call_id,
        'deadline passed',
      );
      if (row.status === 'started') {
        await this.markUnknown(row, 'timeout', `no outcome by the deadline ${row.deadline?.toISOString()}`);
      } else {
        await this.log.seal(row.tenant, row.call_id, 'not started before its deadline');
      }
    }
  }

  private markUnknown(
    row: ExecutionRow,
    cause: 'timeout' | 'connection_lost' | 'reboot',
    detail: string,
  ): Promise<void> {
    return this.log.markUnknown(row.tenant, row.call_id, row.request_id ?? row.call_id, cause, detail);
  }

  /**
   * The request as this device may see it. A request assigned to another device of the tenant is refused, and so is
   * a claim or an outcome for an id the tenant does not have (made up, or another tenant's: not told apart); each
   * refusal is recorded (log line at warn and a `report_refused` event on the device's subject). A device never
   * learns more than "not yours" or "unknown".
   */
  private async assigned(
    device: Sender,
    requestId: string,
    frameType: 'start_claim' | 'outcome' | 'status_report' | 'error',
  ): Promise<{ kind: 'mine'; row: ExecutionRow } | { kind: 'other' } | { kind: 'unknown' }> {
    const sent = this.inFlight.submittedCall(device, requestId);
    if (sent) return { kind: 'mine', row: sent };
    const row = await this.executions.find(device.tenant, requestId);
    if (!row) {
      if (frameType === 'start_claim' || frameType === 'outcome')
        await this.refuseReport(device, requestId, frameType, 'unknown_request');
      return { kind: 'unknown' };
    }
    if (row.device_id === device.deviceId) return { kind: 'mine', row };
    await this.refuseReport(device, requestId, frameType, 'not_assigned', row);
    return { kind: 'other' };
  }

  /** Logs and records (`report_refused`) a claim or report the bridge refused; a failure to record is logged. */
  private async refuseReport(
    device: Sender,
    requestId: string,
    frameType: 'start_claim' | 'outcome' | 'status_report' | 'error',
    reason: ReportRefusalReason,
    row?: Pick<ExecutionRow, 'call_id' | 'device_id'>,
  ): Promise<void> {
    this.infra.logger.warn(
      {
        device: device.deviceId,
        tenant: device.tenant,
        request: requestId,
        frame: frameType,
        reason,
        assignedTo: row?.device_id ?? null,
      },
      'refused a device report for a request it does not hold',
    );
    await this.deviceEvents
      .record(
        device.tenant,
        device.deviceId,
        {
          type: DeviceEventType.ReportRefused,
          data: {
            device_id: device.deviceId,
            session_id: device.sessionId ?? null,
            request_id: requestId,
            frame_type: frameType,
            assigned_device_id: row?.device_id ?? null,
            reason,
          },
        },
        row?.call_id ?? requestId,
      )
      .catch((err) => this.infra.logger.error({ err, request: requestId }, 'could not record a refused report'));
  }
}

function clipText(text: string, max = 4096): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
