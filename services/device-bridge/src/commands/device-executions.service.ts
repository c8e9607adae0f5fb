/**
 * The bridge's side of the tracked execution protocol, wired to the log:
 * - dispatch: an authorized call for a connected device is recorded as dispatched (an append that loses to a seal),
 *   then sent as a submit frame with its exact payload bytes and hash;
 * - start claim: the device may run the call only after `started` is appended with an expected sequence, so a
 *   concurrent seal and start can never both win;
 * - outcome: recorded as reported; a late outcome after `outcome_unknown` is still recorded;
 * - lost connection, new boot id, deadline: a started call becomes `outcome_unknown` with its cause, never succeeded;
 * - reconnect: every call the log has as dispatched, started or outcome unknown is asked about (`status_query`, which
 *   never runs anything) and the journal's answers are recorded (late failures, rejections, interrupted runs);
 * - a device that claims or reports a request assigned to another device is refused (`not_assigned`) and the attempt
 *   is recorded on the `devices` stream (`ormuz.device.report_refused.v1`), which audit archives;
 * - an authorized call whose device does not connect before its offline deadline is sealed as expired.
 */
import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import {
  DeviceEventType,
  type ErrorFrameV1,
  type OutcomeFrameV1,
  type ProgressFrameV1,
  type StartClaimFrameV1,
  type StartRefusalReason,
  type StatusReportFrameV1,
  type SubmitFrameV1,
} from '@ormuz/contracts';
import { INFRA, ToolCalls, type Infrastructure } from '@ormuz/service-kit';
import { isCallAlreadyStartedError, isSealedCallError, isToolCallError } from '@ormuz/tool-call';
import { DEVICE_BRIDGE_CONFIG, type DeviceBridgeConfig } from '../config.js';
import type { DeviceIdentity } from '../domain/device-credentials.js';
import { ExecutionsRepository, type ExecutionRow } from '../persistence/executions.repository.js';
import { DeviceEventsRecorder } from './device-events.recorder.js';

/** How the service reaches connected devices (implemented over the WebSocket gateway). */
export interface DeviceLink {
  isConnected(device: DeviceIdentity): boolean;
  /** Sends a submit frame; false when the device is not connected. */
  sendSubmit(device: DeviceIdentity, frame: Omit<SubmitFrameV1, 'v' | 'seq'>): boolean;
  sendCancel(device: DeviceIdentity, requestId: string, reason: string): void;
  /** Asks the device what its journal knows about a request; the device never runs anything for it. */
  sendStatusQuery(device: DeviceIdentity, requestId: string): void;
}

/** Dispatches in flight at once. */
const DISPATCH_CONCURRENCY = 32;
/** Ready calls read per query. */
const READY_PAGE = 500;
/** How long a dispatched call is remembered while the read model catches up, in ms. */
const RECENT_DISPATCH_MS = 60_000;
/**
 * How often a pass reads every ready call rather than only those authorized since the last pass, in ms: a call whose
 * dispatch failed, whose device was connected to another replica, or whose row a rebuilt read model wrote again, is
 * looked at again this often.
 */
const FULL_PASS_MS = 1_000;

/** Error codes a device answers a submit with when it will not run it. */
const SUBMIT_REFUSALS = new Set(['payload_mismatch', 'payload_invalid', 'request_conflict']);

export type ClaimAnswer =
  | { readonly granted: true }
  | {
      readonly granted: false;
      readonly reason: StartRefusalReason;
      readonly message: string;
    };

/** An outcome the bridge did not record (and does not acknowledge). */
export interface OutcomeRefusal {
  readonly refused: 'not_assigned';
  readonly message: string;
}

/** What the gateway knows about the connection a frame came from. */
type Sender = DeviceIdentity & { readonly sessionId?: string };

@Injectable()
export class DeviceExecutionsService {
  private link: DeviceLink | undefined;
  private kicking: Promise<void> = Promise.resolve();
  private again = false;
  private busy = false;
  /**
   * Calls this replica took to dispatch, whose `dispatched` the read model may not show yet: tenant/call id → time.
   * A pass never takes them again meanwhile.
   */
  private readonly recentlyDispatched = new Map<string, number>();
  /** Calls taken by a pass and waiting for a dispatch worker. */
  private readonly queue: ExecutionRow[] = [];
  private readonly workers = new Set<Promise<void>>();
  /** Highest `last_seq` of a ready call the passes have read: the next pass reads only calls authorized after it. */
  private readUpTo = 0;
  /** When the last full pass started (epoch ms). */
  private lastFullPass = Number.NEGATIVE_INFINITY;
  /** Devices with ready calls that were not connected here when read (tenant/device id): one connecting calls for a full pass. */
  private readonly waitingDevices = new Map<string, DeviceIdentity>();
  /** Calls whose start was granted on a live connection and whose outcome has not arrived, per device. */
  private readonly inFlight = new Map<string, Set<string>>();

  constructor(
    private readonly calls: ToolCalls,
    private readonly executions: ExecutionsRepository,
    private readonly deviceEvents: DeviceEventsRecorder,
    @Inject(DEVICE_BRIDGE_CONFIG) private readonly config: DeviceBridgeConfig,
    @Inject(INFRA) private readonly infra: Infrastructure,
  ) {}

  attach(link: DeviceLink): void {
    this.link = link;
  }

  /** Wakes the dispatcher; concurrent kicks collapse into one more pass. */
  kick(): void {
    if (this.busy) {
      this.again = true;
      return;
    }
    this.busy = true;
    this.kicking = (async () => {
      do {
        this.again = false;
        await this.dispatchReady().catch((err) => this.infra.logger.error({ err }, 'dispatch pass failed'));
      } while (this.again);
      this.busy = false;
    })();
  }

  /** Resolves when the dispatcher is idle (for orderly shutdown). */
  async idle(): Promise<void> {
    await this.kicking;
    await Promise.all(this.workers);
  }

  /**
   * One pass: the ready calls authorized since the last pass (every ready call, on a full pass) whose device is
   * connected here are handed to the dispatch workers. The read model is read in pages by stream sequence, so however
   * many calls wait for devices that are offline or connected elsewhere, a pass costs one query per page of new calls.
   * A pass does not wait for its dispatches: the next one reads what the projection committed meanwhile.
   */
  private async dispatchReady(): Promise<void> {
    const now = Date.now();
    // Entries are added once each, in time order: the expired ones are at the front.
    for (const [callId, at] of this.recentlyDispatched) {
      if (now - at <= RECENT_DISPATCH_MS) break;
      this.recentlyDispatched.delete(callId);
    }
    const full = now - this.lastFullPass >= FULL_PASS_MS || this.waitingDeviceConnected();
    if (full) {
      this.lastFullPass = now;
      this.waitingDevices.clear();
    }
    let after = full ? 0 : this.readUpTo;
    for (;;) {
      const page = await this.executions.ready(after, READY_PAGE);
      this.enqueue(page.filter((row) => this.dispatchable(row)));
      after = page.at(-1)?.last_seq ?? after;
      this.readUpTo = Math.max(this.readUpTo, after);
      if (page.length < READY_PAGE) return;
    }
  }

  /** Whether this replica should dispatch the call now; a device not connected here is remembered as waiting. */
  private dispatchable(row: ExecutionRow): boolean {
    if (this.recentlyDispatched.has(`${row.tenant}/${row.call_id}`)) return false;
    const device = { tenant: row.tenant, deviceId: row.device_id };
    if (this.link?.isConnected(device)) return true;
    this.waitingDevices.set(`${row.tenant}/${row.device_id}`, device);
    return false;
  }

  private waitingDeviceConnected(): boolean {
    for (const device of this.waitingDevices.values()) if (this.link?.isConnected(device)) return true;
    return false;
  }

  /**
   * Takes the calls for dispatch and starts a worker for each, up to DISPATCH_CONCURRENCY in all (busy workers take
   * the rest when they are done), so a call never waits behind another's dispatch while there is room.
   */
  private enqueue(rows: readonly ExecutionRow[]): void {
    const now = Date.now();
    for (const row of rows) {
      this.recentlyDispatched.set(`${row.tenant}/${row.call_id}`, now);
      this.queue.push(row);
    }
    for (let n = Math.min(rows.length, DISPATCH_CONCURRENCY - this.workers.size); n > 0; n--) {
      const worker: Promise<void> = this.work().finally(() => this.workers.delete(worker));
      this.workers.add(worker);
    }
  }

  private async work(): Promise<void> {
    for (let row = this.queue.shift(); row; row = this.queue.shift()) {
      try {
        await this.dispatch(row);
      } catch (err) {
        // Not recorded (the log was unreachable, say): the next full pass takes the call again.
        this.recentlyDispatched.delete(`${row.tenant}/${row.call_id}`);
        this.infra.logger.error({ err, call: row.call_id, device: row.device_id }, 'dispatch failed');
      }
    }
  }

  private async dispatch(row: ExecutionRow): Promise<void> {
    const device = { tenant: row.tenant, deviceId: row.device_id };
    const deadline = new Date(Date.now() + this.config.executionTimeoutMs).toISOString();
    try {
      await this.calls.execute(
        row.tenant,
        row.call_id,
        {
          type: 'DispatchCall',
          data: { call_id: row.call_id, request_id: row.call_id, executor: { kind: 'device', device_id: row.device_id }, deadline },
        },
        { correlationid: row.call_id, causationid: randomUUID() },
      );
    } catch (err) {
      // Sealed or otherwise moved on since the row was read: the projection will catch up; nothing is sent.
      if (isToolCallError(err)) return;
      throw err;
    }
    this.send(device, row, deadline);
  }

  private send(device: DeviceIdentity, row: ExecutionRow, deadline: string): void {
    this.link?.sendSubmit(device, {
      type: 'submit',
      request_id: row.request_id ?? row.call_id,
      call_id: row.call_id,
      tool: row.tool,
      payload: row.payload,
      payload_sha256: row.payload_sha256,
      deadline,
      verdict: row.verdict ?? { level: 'low', reasons: [] },
    });
  }

  /**
   * A device says hello: a new boot id means started calls of the previous boot have an unknown outcome. Then the
   * device is asked for its journal's state of every call that is dispatched, started or unknown on the log.
   */
  async onConnected(device: DeviceIdentity, bootId: string): Promise<void> {
    const unsettled = await this.executions.unsettled(device.tenant, device.deviceId);
    for (const row of unsettled) {
      if (row.status === 'started' && row.boot_id && row.boot_id !== bootId) {
        await this.markUnknown(row, 'reboot', `device booted again (boot ${bootId}) while the call was running`);
      }
    }
    for (const row of unsettled) this.link?.sendStatusQuery(device, row.request_id ?? row.call_id);
    // Dispatched calls the device may never have received: send them again (a duplicate observes its journal).
    for (const row of await this.executions.sendable(device.tenant, device.deviceId)) {
      if (row.status === 'dispatched' && row.deadline) this.send(device, row, row.deadline.toISOString());
    }
    this.kick();
  }

  async onStartClaim(device: Sender, frame: StartClaimFrameV1, bootId: string): Promise<ClaimAnswer> {
    const found = await this.assigned(device, frame.request_id, 'start_claim');
    if (found.kind === 'unknown') {
      return { granted: false, reason: 'unknown_request', message: `No request ${frame.request_id} is known for this device.` };
    }
    if (found.kind === 'other') {
      return { granted: false, reason: 'not_assigned', message: `Request ${frame.request_id} is assigned to another device; do not run it.` };
    }
    const row = found.row;
    if (row.status === 'dispatched' && row.deadline && row.deadline.getTime() <= Date.now()) {
      // Too late to start: sealed here rather than left to the sweeper, so the device is told why.
      await this.seal(row, `not started before its deadline ${row.deadline.toISOString()}`);
      return { granted: false, reason: 'expired', message: `Request ${frame.request_id} passed its deadline before it started; do not run it.` };
    }
    try {
      await this.calls.execute(
        device.tenant,
        row.call_id,
        {
          type: 'ClaimStart',
          data: { call_id: row.call_id, request_id: frame.request_id, executor_id: device.deviceId, boot_id: bootId },
        },
        { correlationid: row.call_id, causationid: randomUUID() },
      );
      this.flight(device).add(row.call_id);
      return { granted: true };
    } catch (err) {
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
      return { refused: 'not_assigned', message: `Request ${frame.request_id} is assigned to another device; its outcome was not recorded.` };
    }
    if (found.kind === 'unknown') {
      this.infra.logger.warn({ device: device.deviceId, tenant: device.tenant, request: frame.request_id }, 'outcome for an unknown request; ignored');
      return undefined;
    }
    const row = found.row;
    this.flight(device).delete(row.call_id);
    const f = frame as OutcomeFrameV1 & { status: 'succeeded' | 'failed'; result?: unknown; error?: { code: string; message: string } };
    await this.calls.execute(
      device.tenant,
      row.call_id,
      {
        type: 'RecordOutcome',
        data: {
          call_id: row.call_id,
          request_id: frame.request_id,
          outcome:
            f.status === 'succeeded'
              ? { kind: 'succeeded', result: (f.result ?? null) as never }
              : { kind: 'failed', error: f.error ?? { code: 'unknown', message: 'the device reported a failure without details' } },
        },
      },
      { correlationid: row.call_id, causationid: randomUUID() },
    );
    return undefined;
  }

  /**
   * The device's journal state of a request (an answer to a status query, a seal or a duplicate submit; a refusal
   * before claiming; an interrupted run after a restart). Never a reason to run or resend anything; it records only
   * what the journal proves:
   * - `failed` for a call started or outcome_unknown on the log: the late real failure (a success carries its result
   *   only in an `outcome` frame, which the device resends until acknowledged);
   * - `rejected` for a dispatched call: the device refused it before claiming, so it never ran and never will; the
   *   tool-call decider records a failure only after a start, so it is sealed with the device's reason;
   * - `interrupted` for a started call: outcome_unknown (reboot).
   */
  async onStatusReport(device: Sender, frame: StatusReportFrameV1): Promise<void> {
    const log = this.infra.logger;
    const found = await this.assigned(device, frame.request_id, 'status_report');
    if (found.kind !== 'mine') return;
    const row = found.row;
    if (frame.payload_sha256 && frame.payload_sha256 !== row.payload_sha256) {
      log.warn({ device: device.deviceId, tenant: device.tenant, request: frame.request_id }, 'status report names other payload bytes; ignored');
      return;
    }
    const requestId = row.request_id ?? row.call_id;
    const cause = { correlationid: row.call_id, causationid: randomUUID() };
    const status = (await this.calls.load(device.tenant, row.call_id)).state.status;
    log.debug({ device: device.deviceId, request: frame.request_id, state: frame.state, status }, 'status report');
    try {
      if (frame.state === 'failed' && (status === 'started' || status === 'outcome_unknown')) {
        this.flight(device).delete(row.call_id);
        await this.calls.execute(
          device.tenant,
          row.call_id,
          {
            type: 'RecordOutcome',
            data: {
              call_id: row.call_id,
              request_id: requestId,
              outcome: {
                kind: 'failed',
                error: frame.reason ?? { code: 'unknown', message: 'the device journal reports a failure without details' },
              },
            },
          },
          cause,
        );
      } else if (frame.state === 'rejected' && status === 'dispatched') {
        const why = frame.reason ? `${frame.reason.code}: ${frame.reason.message}` : 'no reason given';
        await this.seal(row, clipText(`device ${device.deviceId} refused to run it (${why})`));
      } else if (frame.state === 'interrupted' && status === 'started') {
        this.flight(device).delete(row.call_id);
        await this.markUnknown(row, 'reboot', `device ${device.deviceId} restarted while the call was running; its journal reports it interrupted`);
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
    if (!frame.request_id || !SUBMIT_REFUSALS.has(frame.code)) return;
    const found = await this.assigned(device, frame.request_id, 'error');
    // Sealing loses to a start already recorded (the read model may lag behind the dispatch, so the log decides).
    if (found.kind !== 'mine') return;
    await this.seal(found.row, clipText(`device ${device.deviceId} refused the submit (${frame.code}: ${frame.message})`));
  }

  /** Progress of a running call: logged and published for live observers (`<ns>.bridge.progress.<tenant>.<call>`). */
  onProgress(device: Sender, frame: ProgressFrameV1): void {
    this.infra.logger.debug({ device: device.deviceId, request: frame.request_id, stage: frame.stage, fraction: frame.fraction }, 'progress');
    this.infra.nc.publish(
      `${this.config.namespace}.bridge.progress.${device.tenant}.${frame.request_id}`,
      JSON.stringify({ device_id: device.deviceId, request_id: frame.request_id, stage: frame.stage, fraction: frame.fraction ?? null }),
    );
  }

  /** A lost connection is not proof of anything: started calls become outcome_unknown until the device reports. */
  async onDisconnected(device: DeviceIdentity, cause: string): Promise<void> {
    // The read model may not show a start granted a moment ago, so the connection's own list counts too.
    const ids = new Set([...(await this.executions.started(device.tenant, device.deviceId)).map((r) => r.call_id), ...this.flight(device)]);
    this.inFlight.delete(`${device.tenant}/${device.deviceId}`);
    for (const callId of ids) {
      await this.markUnknown(
        { tenant: device.tenant, call_id: callId, request_id: callId },
        'connection_lost',
        `connection to ${device.deviceId} lost while the call was running (${cause})`,
      );
    }
  }

  private flight(device: DeviceIdentity): Set<string> {
    const key = `${device.tenant}/${device.deviceId}`;
    let set = this.inFlight.get(key);
    if (!set) this.inFlight.set(key, (set = new Set()));
    return set;
  }

  /**
   * Calls past their deadline: cancel on the device and record outcome_unknown (timeout); authorized calls whose
   * device did not connect before the offline deadline are sealed as expired.
   */
  async sweepOverdue(now = new Date()): Promise<void> {
    for (const row of await this.executions.waitingSince(new Date(now.getTime() - this.config.offlineDeadlineMs))) {
      await this.seal(row, 'device offline past its deadline');
    }
    for (const row of await this.executions.overdue(now)) {
      this.link?.sendCancel({ tenant: row.tenant, deviceId: row.device_id }, row.request_id ?? row.call_id, 'deadline passed');
      if (row.status === 'started') {
        await this.markUnknown(row, 'timeout', `no outcome by the deadline ${row.deadline?.toISOString()}`);
      } else {
        await this.seal(row, 'not started before its deadline');
      }
    }
  }

  /**
   * The request as this device may see it. A request assigned to another device of the tenant is refused and the
   * attempt is recorded (log line at warn and a `report_refused` event on the device's subject); a device never
   * learns more than "not yours".
   */
  private async assigned(
    device: Sender,
    requestId: string,
    frameType: 'start_claim' | 'outcome' | 'status_report' | 'error',
  ): Promise<{ kind: 'mine'; row: ExecutionRow } | { kind: 'other' } | { kind: 'unknown' }> {
    const row = await this.executions.find(device.tenant, requestId);
    if (!row) return { kind: 'unknown' };
    if (row.device_id === device.deviceId) return { kind: 'mine', row };
    this.infra.logger.warn(
      { device: device.deviceId, tenant: device.tenant, request: requestId, frame: frameType, assignedTo: row.device_id },
      'device reported for a request assigned to another device; refused',
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
            assigned_device_id: row.device_id,
            reason: 'not_assigned',
          },
        },
        row.call_id,
      )
      .catch((err) => this.infra.logger.error({ err, request: requestId }, 'could not record a refused report'));
    return { kind: 'other' };
  }

  /** Seals a call that has not started; a call that moved on meanwhile is left as it is. */
  private async seal(row: Pick<ExecutionRow, 'tenant' | 'call_id'>, reason: string): Promise<void> {
    await this.calls
      .execute(
        row.tenant,
        row.call_id,
        { type: 'SealCall', data: { call_id: row.call_id, sealed_by: 'device-bridge', reason } },
        { correlationid: row.call_id, causationid: randomUUID() },
      )
      .catch((err) => {
        if (!isToolCallError(err)) throw err;
      });
  }

  private async markUnknown(row: Pick<ExecutionRow, 'tenant' | 'call_id' | 'request_id'>, cause: 'timeout' | 'connection_lost' | 'reboot', detail: string): Promise<void> {
    await this.calls
      .execute(
        row.tenant,
        row.call_id,
        {
          type: 'MarkOutcomeUnknown',
          data: { call_id: row.call_id, request_id: row.request_id ?? row.call_id, cause, detail },
        },
        { correlationid: row.call_id, causationid: randomUUID() },
      )
      .catch((err) => {
        // Finished meanwhile (the device reported first): nothing is unknown.
        if (!isToolCallError(err)) throw err;
      });
  }
}

function clipText(text: string, max = 4096): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
