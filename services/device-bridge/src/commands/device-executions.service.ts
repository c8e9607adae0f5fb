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
 * - flow control: a device is sent at most as many requests as its window has room for (`DeviceLink.room`); when the
 *   device finishes one, the next ready call of that device is dispatched, so a backlog drains at the device's pace;
 * - a device that claims or reports a request it does not hold (another device's, an unknown id, another tenant's,
 *   or an outcome of a call that never started) is refused and the attempt is recorded on the `devices` stream
 *   (`ormuz.device.report_refused.v1`), which audit archives;
 * - not run: when the device's journal proves that a started or unknown call was never begun and never will be
 *   (claimed, then refused, rejected or sealed), the call's outcome is recorded as `failed` with code `not_run`;
 * - an authorized call whose device does not connect before its offline deadline is sealed as expired.
 */
import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import {
  DEVICE_MAX_IN_FLIGHT_LIMIT,
  DEVICE_SUBMIT_REFUSAL_CODES,
  DeviceEventType,
  isSettledRequestState,
  type DeviceRequestState,
  type ErrorFrameV1,
  type ReportRefusalReason,
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
  /** Tells the device never to run the request; it honours it only while it holds no grant for it. */
  sendSeal(device: DeviceIdentity, requestId: string): void;
  /** How many more requests the device takes now (its flow-control window); 0 when not connected here. */
  room(device: DeviceIdentity): number;
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

/**
 * Ready calls of one device read at once to fill its window as it opens; kept in memory until sent. Twice the
 * largest window: enough to skip calls dispatched a moment ago that still read as ready, small enough that a fleet
 * of devices with backlogs holds little.
 */
const TOP_UP_PAGE = 2 * DEVICE_MAX_IN_FLIGHT_LIMIT;

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
type Sender = DeviceIdentity & { readonly sessionId?: string };

const deviceKey = (device: DeviceIdentity): string => `${device.tenant}/${device.deviceId}`;

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
  /** Calls taken for dispatch and not yet sent, per device: they count against its window. */
  private readonly dispatching = new Map<string, number>();
  /** Devices whose window opened while a top-up of theirs ran: one more top-up follows. */
  private readonly toppingUp = new Map<string, boolean>();
  /** Requests a connection was asked to seal to settle an unknown outcome, per session: asked once each. */
  private readonly sealsAsked = new Map<string, Set<string>>();
  /** Ready calls of a device read ahead for its window, oldest first (the log decides whether each may still go). */
  private readonly readAhead = new Map<string, ExecutionRow[]>();
  /**
   * Calls submitted to a device over its current connection and not yet settled by it, per device: the claims and
   * outcomes that follow find their call here without a read of the executions table.
   */
  private readonly submitted = new Map<string, Map<string, ExecutionRow>>();

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
      for (const row of page) if (this.dispatchable(row)) this.enqueue([row]);
      after = page.at(-1)?.last_seq ?? after;
      this.readUpTo = Math.max(this.readUpTo, after);
      if (page.length < READY_PAGE) return;
    }
  }

  /**
   * Whether this replica should dispatch the call now: its device is connected here and has room in its window. A
   * device not connected here is remembered as waiting; one without room is topped up when its window opens.
   */
  private dispatchable(row: ExecutionRow): boolean {
    if (this.recentlyDispatched.has(`${row.tenant}/${row.call_id}`)) return false;
    const device = { tenant: row.tenant, deviceId: row.device_id };
    if (!this.link?.isConnected(device)) {
      this.waitingDevices.set(deviceKey(device), device);
      return false;
    }
    return this.freeSlots(device) > 0;
  }

  /** Requests the device takes now, less the dispatches already taken for it. */
  private freeSlots(device: DeviceIdentity): number {
    return (this.link?.room(device) ?? 0) - (this.dispatching.get(deviceKey(device)) ?? 0);
  }

  /**
   * The device finished a request and its window has room: dispatch its oldest ready calls into the free slots.
   * Window openings while a top-up runs collapse into one more.
   */
  onWindowOpen(device: DeviceIdentity): void {
    const key = deviceKey(device);
    if (this.toppingUp.has(key)) {
      this.toppingUp.set(key, true);
      return;
    }
    this.toppingUp.set(key, false);
    void (async () => {
      try {
        do {
          this.toppingUp.set(key, false);
          let rows = this.readAhead.get(key) ?? [];
          if (rows.length === 0 && this.freeSlots(device) > 0) {
            rows = await this.executions.readyFor(device.tenant, device.deviceId, TOP_UP_PAGE);
            this.readAhead.set(key, rows);
          }
          while (rows.length > 0 && this.freeSlots(device) > 0) {
            const row = rows.shift()!;
            if (this.dispatchable(row)) this.enqueue([row]);
          }
        } while (this.toppingUp.get(key));
      } catch (err) {
        // The safety net's full pass takes the calls later.
        this.infra.logger.error({ err, tenant: device.tenant, device: device.deviceId }, 'window top-up failed');
      } finally {
        this.toppingUp.delete(key);
      }
    })();
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
      const key = deviceKey({ tenant: row.tenant, deviceId: row.device_id });
      this.dispatching.set(key, (this.dispatching.get(key) ?? 0) + 1);
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
      } finally {
        // Sent (and holding a window slot) or given up: either way no longer reserved.
        const key = deviceKey({ tenant: row.tenant, deviceId: row.device_id });
        const left = (this.dispatching.get(key) ?? 1) - 1;
        if (left > 0) this.dispatching.set(key, left);
        else this.dispatching.delete(key);
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
    const key = deviceKey(device);
    let mine = this.submitted.get(key);
    if (!mine) this.submitted.set(key, (mine = new Map()));
    mine.set(row.call_id, { ...row, status: 'dispatched', request_id: row.request_id ?? row.call_id, deadline: new Date(deadline) });
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
    this.readAhead.delete(deviceKey(device));
    this.submitted.delete(deviceKey(device));
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
      return { granted: false, reason: 'unknown_request', message: `No request ${frame.request_id} is known for this device; do not run it.` };
    }
    if (found.kind === 'other') {
      return { granted: false, reason: 'not_assigned', message: `Request ${frame.request_id} is assigned to another device; do not run it.` };
    }
    const row = found.row;
    if (row.status === 'dispatched' && row.deadline && row.deadline.getTime() <= Date.now()) {
      // Too late to start: sealed here rather than left to the sweeper, so the device is told why.
      await this.seal(row, `not started before its deadline ${row.deadline.toISOString()}`);
      this.settled(device, row.call_id);
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
      if (isToolCallError(err)) this.settled(device, row.call_id);
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
      return { refused: 'unknown_request', message: `No request ${frame.request_id} is known for this device; its outcome was not recorded.` };
    }
    const row = found.row;
    const f = frame as OutcomeFrameV1 & { status: 'succeeded' | 'failed'; result?: unknown; error?: { code: string; message: string } };
    try {
      await this.recordOutcome(device, row, frame.request_id, f);
    } catch (err) {
      if (!isToolCallError(err) || (err.code !== 'invalid_transition' && !isSealedCallError(err))) throw err;
      // Decided on the store's cached state, which a concurrent read may have left behind the log: read it afresh.
      const { status } = (await this.calls.load(device.tenant, row.call_id)).state;
      if (status === 'started' || status === 'outcome_unknown') {
        await this.recordOutcome(device, row, frame.request_id, f);
        this.flight(device).delete(row.call_id);
        this.settled(device, row.call_id);
        return undefined;
      }
      // Never started (dispatched, or sealed before its start): an outcome cannot be true, so it is not recorded.
      await this.refuseReport(device, frame.request_id, 'outcome', 'not_started', row);
      return {
        refused: 'not_started',
        message: `Request ${frame.request_id} was never granted its start, so its outcome was not recorded; a request runs only after start_granted.`,
      };
    }
    this.flight(device).delete(row.call_id);
    this.settled(device, row.call_id);
    return undefined;
  }

  /** The device is done with the call: no claim or outcome of it is expected on this connection any more. */
  private settled(device: DeviceIdentity, callId: string): void {
    this.submitted.get(deviceKey(device))?.delete(callId);
  }

  /** Appends the call's outcome as the device reported it (or as its journal proves it). */
  private async recordOutcome(
    device: Sender,
    row: Pick<ExecutionRow, 'call_id'>,
    requestId: string,
    f: { status: 'succeeded' | 'failed'; result?: unknown; error?: { code: string; message: string } },
  ): Promise<void> {
    await this.calls.execute(
      device.tenant,
      row.call_id,
      {
        type: 'RecordOutcome',
        data: {
          call_id: row.call_id,
          request_id: requestId,
          outcome:
            f.status === 'succeeded'
              ? { kind: 'succeeded', result: (f.result ?? null) as never }
              : { kind: 'failed', error: f.error ?? { code: 'unknown', message: 'the device reported a failure without details' } },
        },
      },
      { correlationid: row.call_id, causationid: randomUUID() },
    );
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
    if (isSettledRequestState(frame.state)) this.settled(device, row.call_id);
    if (frame.payload_sha256 && frame.payload_sha256 !== row.payload_sha256) {
      log.warn({ device: device.deviceId, tenant: device.tenant, request: frame.request_id }, 'status report names other payload bytes; ignored');
      return;
    }
    const requestId = row.request_id ?? row.call_id;
    const status = (await this.calls.load(device.tenant, row.call_id)).state.status;
    log.debug({ device: device.deviceId, request: frame.request_id, state: frame.state, status }, 'status report');
    const ranHere = status === 'started' || status === 'outcome_unknown';
    try {
      if (frame.state === 'failed' && ranHere) {
        this.flight(device).delete(row.call_id);
        await this.recordOutcome(device, row, requestId, {
          status: 'failed',
          error: frame.reason ?? { code: 'unknown', message: 'the device journal reports a failure without details' },
        });
      } else if (NEVER_RUN.has(frame.state) && ranHere && frame.payload_sha256 === row.payload_sha256) {
        this.flight(device).delete(row.call_id);
        log.info({ device: device.deviceId, tenant: device.tenant, request: requestId, state: frame.state, status }, 'device journal proves the call never ran');
        await this.recordOutcome(device, row, requestId, {
          status: 'failed',
          error: {
            code: NOT_RUN_CODE,
            message: clipText(
              `Not run: device ${device.deviceId} claimed the call, but its journal records it ${frame.state} without ever ` +
                `starting it${frame.reason ? ` (${frame.reason.code}: ${frame.reason.message})` : ''}. Nothing was done; ` +
                `submit it again under a new operation id if it is still wanted.`,
            ),
          },
        });
      } else if (frame.state === 'claimed' && status === 'outcome_unknown' && device.sessionId) {
        this.askToSeal(device as Sender & { sessionId: string }, requestId);
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

  /** Asks the device, once per connection, to seal a request it journaled as claimed (see onStatusReport). */
  private askToSeal(device: Sender & { sessionId: string }, requestId: string): void {
    let asked = this.sealsAsked.get(device.sessionId);
    if (!asked) this.sealsAsked.set(device.sessionId, (asked = new Set()));
    if (asked.has(requestId)) return;
    asked.add(requestId);
    this.link?.sendSeal(device, requestId);
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
    this.settled(device, found.row.call_id);
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

  /**
   * A lost connection is not proof of anything: started calls become outcome_unknown until the device reports. When a
   * newer connection of the device is already live (`superseded`: it reconnected before this close was handled), the
   * device is reachable: that connection reconciles the calls in flight, and the device-wide state is now its own.
   */
  async onDisconnected(device: DeviceIdentity & { readonly sessionId?: string }, cause: string, superseded = false): Promise<void> {
    if (device.sessionId) this.sealsAsked.delete(device.sessionId);
    if (superseded) {
      this.infra.logger.info({ tenant: device.tenant, device: device.deviceId, cause }, 'an old connection closed after the device reconnected');
      return;
    }
    this.readAhead.delete(deviceKey(device));
    this.submitted.delete(deviceKey(device));
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
    const sent = this.submitted.get(deviceKey(device))?.get(requestId);
    if (sent) return { kind: 'mine', row: sent };
    const row = await this.executions.find(device.tenant, requestId);
    if (!row) {
      if (frameType === 'start_claim' || frameType === 'outcome') await this.refuseReport(device, requestId, frameType, 'unknown_request');
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
      { device: device.deviceId, tenant: device.tenant, request: requestId, frame: frameType, reason, assignedTo: row?.device_id ?? null },
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
