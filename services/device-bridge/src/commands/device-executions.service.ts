/**
 * The bridge's side of the tracked execution protocol, wired to the log:
 * - dispatch: an authorized call for a connected device is recorded as dispatched (an append that loses to a seal),
 *   then sent as a submit frame with its exact payload bytes and hash;
 * - start claim: the device may run the call only after `started` is appended with an expected sequence, so a
 *   concurrent seal and start can never both win;
 * - outcome: recorded as reported; a late outcome after `outcome_unknown` is still recorded;
 * - lost connection, new boot id, deadline: a started call becomes `outcome_unknown` with its cause, never succeeded.
 */
import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { OutcomeFrameV1, StartClaimFrameV1, SubmitFrameV1 } from '@ormuz/contracts';
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
  connected(): DeviceIdentity[];
}

export type ClaimAnswer =
  | { readonly granted: true }
  | { readonly granted: false; readonly reason: 'sealed' | 'unknown_request' | 'already_started' | 'not_assigned'; readonly message: string };

@Injectable()
export class DeviceExecutionsService {
  private link: DeviceLink | undefined;
  private kicking: Promise<void> = Promise.resolve();
  private again = false;
  private busy = false;
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
        for (const device of this.link?.connected() ?? []) {
          await this.dispatchFor(device).catch((err) =>
            this.infra.logger.error({ err, device: device.deviceId }, 'dispatch pass failed'),
          );
        }
      } while (this.again);
      this.busy = false;
    })();
  }

  /** Resolves when the dispatcher is idle (for orderly shutdown). */
  idle(): Promise<void> {
    return this.kicking;
  }

  private async dispatchFor(device: DeviceIdentity): Promise<void> {
    for (const row of await this.executions.sendable(device.tenant, device.deviceId)) {
      if (!this.link?.isConnected(device)) return;
      let deadline = row.deadline?.toISOString();
      if (row.status === 'ready') {
        deadline = new Date(Date.now() + this.config.executionTimeoutMs).toISOString();
        try {
          await this.calls.execute(
            row.tenant,
            row.call_id,
            {
              type: 'DispatchCall',
              data: {
                call_id: row.call_id,
                request_id: row.call_id,
                executor: { kind: 'device', device_id: row.device_id },
                deadline,
              },
            },
            { correlationid: row.call_id, causationid: randomUUID() },
          );
        } catch (err) {
          // Sealed or otherwise moved on since the row was read: the projection will catch up; nothing is sent.
          if (isToolCallError(err)) continue;
          throw err;
        }
      }
      this.link.sendSubmit(device, {
        type: 'submit',
        request_id: row.request_id ?? row.call_id,
        call_id: row.call_id,
        tool: row.tool,
        payload: row.payload,
        payload_sha256: row.payload_sha256,
        deadline: deadline!,
        verdict: row.verdict ?? { level: 'low', reasons: [] },
      });
    }
  }

  /** A device says hello: a new boot id means started calls of the previous boot have an unknown outcome. */
  async onConnected(device: DeviceIdentity, bootId: string): Promise<void> {
    for (const row of await this.executions.started(device.tenant, device.deviceId)) {
      if (row.boot_id && row.boot_id !== bootId) {
        await this.markUnknown(row, 'reboot', `device booted again (boot ${bootId}) while the call was running`);
      }
    }
    this.kick();
  }

  async onStartClaim(device: DeviceIdentity, frame: StartClaimFrameV1, bootId: string): Promise<ClaimAnswer> {
    const row = await this.owned(device, frame.request_id);
    if (!row) return { granted: false, reason: 'unknown_request', message: `No request ${frame.request_id} is assigned to this device.` };
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

  async onOutcome(device: DeviceIdentity, frame: OutcomeFrameV1): Promise<void> {
    const row = await this.owned(device, frame.request_id);
    if (!row) {
      this.infra.logger.warn({ device: device.deviceId, request: frame.request_id }, 'outcome for a request this device does not own; ignored');
      return;
    }
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

  /** Calls past their deadline: cancel on the device and record outcome_unknown (timeout). */
  async sweepOverdue(now = new Date()): Promise<void> {
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

  private async owned(device: DeviceIdentity, requestId: string): Promise<ExecutionRow | undefined> {
    const row = await this.executions.find(device.tenant, requestId);
    return row && row.device_id === device.deviceId ? row : undefined;
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
