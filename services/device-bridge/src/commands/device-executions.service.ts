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
 *   is kept in `refused_reports`;
 * - an authorized call whose device does not connect before its offline deadline is sealed as expired.
 */
import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { OutcomeFrameV1, StartClaimFrameV1, StatusReportFrameV1, SubmitFrameV1 } from '@ormuz/contracts';
import { INFRA, ToolCalls, type Infrastructure } from '@ormuz/service-kit';
import { isCallAlreadyStartedError, isSealedCallError, isToolCallError } from '@ormuz/tool-call';
import { DEVICE_BRIDGE_CONFIG, type DeviceBridgeConfig } from '../config.js';
import type { DeviceIdentity } from '../domain/device-credentials.js';
import { ExecutionsRepository, type ExecutionRow } from '../persistence/executions.repository.js';

/** How the service reaches connected devices (implemented over the WebSocket gateway). */
export interface DeviceLink {
  isConnected(device: DeviceIdentity): boolean;
  /** Sends a submit frame; false when the device is not connected. */
  sendSubmit(device: DeviceIdentity, frame: Omit<SubmitFrameV1, 'v' | 'seq'>): boolean;
  sendCancel(device: DeviceIdentity, requestId: string, reason: string): void;
  /** Asks the device what its journal knows about a request; the device never runs anything for it. */
  sendStatusQuery(device: DeviceIdentity, requestId: string): void;
  connected(): DeviceIdentity[];
}

/** Dispatches in flight at once in one pass. */
const DISPATCH_CONCURRENCY = 32;
/** How long a dispatched call is remembered while the read model catches up, in ms. */
const RECENT_DISPATCH_MS = 60_000;

export type ClaimAnswer =
  | { readonly granted: true }
  | { readonly granted: false; readonly reason: 'sealed' | 'unknown_request' | 'already_started' | 'not_assigned'; readonly message: string };

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
  /** Calls dispatched by this replica whose `dispatched` the read model may not show yet: tenant/call id → time. */
  private readonly recentlyDispatched = new Map<string, number>();
  /** Calls whose start was granted on a live connection and whose outcome has not arrived, per device. */
  private readonly inFlight = new Map<string, Set<string>>();

  constructor(
    private readonly calls: ToolCalls,
    private readonly executions: ExecutionsRepository,
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
  idle(): Promise<void> {
    return this.kicking;
  }

  /**
   * One pass: every authorized call whose device is connected here is dispatched (recorded, then sent), up to
   * DISPATCH_CONCURRENCY at a time. One query per pass, whatever the number of devices.
   */
  private async dispatchReady(): Promise<void> {
    const now = Date.now();
    for (const [callId, at] of this.recentlyDispatched) if (now - at > RECENT_DISPATCH_MS) this.recentlyDispatched.delete(callId);
    const rows = (await this.executions.ready()).filter(
      (row) =>
        !this.recentlyDispatched.has(`${row.tenant}/${row.call_id}`) &&
        this.link?.isConnected({ tenant: row.tenant, deviceId: row.device_id }),
    );
    let next = 0;
    const worker = async () => {
      while (next < rows.length) {
        const row = rows[next++]!;
        await this.dispatch(row).catch((err) =>
          this.infra.logger.error({ err, call: row.call_id, device: row.device_id }, 'dispatch failed'),
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(DISPATCH_CONCURRENCY, rows.length) }, worker));
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
    // The read model shows the call as ready until it applies `dispatched`; do not dispatch it twice meanwhile.
    this.recentlyDispatched.set(`${row.tenant}/${row.call_id}`, Date.now());
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
        await this.calls.execute(
          device.tenant,
          row.call_id,
          {
            type: 'SealCall',
            data: { call_id: row.call_id, sealed_by: 'device-bridge', reason: clipText(`device ${device.deviceId} refused to run it (${why})`) },
          },
          cause,
        );
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
      await this.calls
        .execute(
          row.tenant,
          row.call_id,
          { type: 'SealCall', data: { call_id: row.call_id, sealed_by: 'device-bridge', reason: 'device offline past its deadline' } },
          { correlationid: row.call_id, causationid: randomUUID() },
        )
        .catch((err) => {
          if (!isToolCallError(err)) throw err;
        });
    }
    for (const row of await this.executions.overdue(now)) {
      this.link?.sendCancel({ tenant: row.tenant, deviceId: row.device_id }, row.request_id ?? row.call_id, 'deadline passed');
      if (row.status === 'started') {
        await this.markUnknown(row, 'timeout', `no outcome by the deadline ${row.deadline?.toISOString()}`);
      } else {
        await this.calls
          .execute(
            row.tenant,
            row.call_id,
            { type: 'SealCall', data: { call_id: row.call_id, sealed_by: 'device-bridge', reason: 'not started before its deadline' } },
            { correlationid: row.call_id, causationid: randomUUID() },
          )
          .catch((err) => {
            if (!isToolCallError(err)) throw err;
          });
      }
    }
  }

  /**
   * The request as this device may see it. A request assigned to another device of the tenant is refused and the
   * attempt is kept (log line at warn and a `refused_reports` row); a device never learns more than "not yours".
   */
  private async assigned(
    device: Sender,
    requestId: string,
    frameType: 'start_claim' | 'outcome' | 'status_report',
  ): Promise<{ kind: 'mine'; row: ExecutionRow } | { kind: 'other' } | { kind: 'unknown' }> {
    const row = await this.executions.find(device.tenant, requestId);
    if (!row) return { kind: 'unknown' };
    if (row.device_id === device.deviceId) return { kind: 'mine', row };
    this.infra.logger.warn(
      { device: device.deviceId, tenant: device.tenant, request: requestId, frame: frameType, assignedTo: row.device_id },
      'device reported for a request assigned to another device; refused',
    );
    await this.executions
      .recordRefusedReport({
        at: new Date(),
        tenant: device.tenant,
        device_id: device.deviceId,
        session_id: device.sessionId ?? null,
        request_id: requestId,
        frame_type: frameType,
        assigned_device_id: row.device_id,
        reason: 'not_assigned',
      })
      .catch((err) => this.infra.logger.error({ err, request: requestId }, 'could not store a refused report'));
    return { kind: 'other' };
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
