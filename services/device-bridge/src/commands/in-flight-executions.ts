/**
 * What this replica holds in memory about the executions in flight on each device's current connection: the calls
 * submitted over it and not yet settled by the device, and those whose start was granted and whose outcome has not
 * arrived. The claims and outcomes that follow a submit find their call here without a read of the executions table.
 *
 * A view, never the record: the log is the record and the executions table its projection. A connection starts with
 * an empty view (a reconnect reads the table), a restart loses it and loses nothing, and it is bounded per device:
 * a call it does not hold is looked up in the table.
 */
import { Injectable } from '@nestjs/common';
import { DEVICE_MAX_IN_FLIGHT_LIMIT } from '@ormuz/contracts';
import type { DeviceIdentity } from '../domain/device-credentials.js';
import type { ExecutionRow } from '../persistence/executions.repository.js';

/**
 * Submitted calls remembered per device: the largest window twice over (the window's own calls, and the dispatched
 * ones a reconnect sends again).
 */
const SUBMITTED_PER_DEVICE = 2 * DEVICE_MAX_IN_FLIGHT_LIMIT;

export const deviceKey = (device: DeviceIdentity): string => `${device.tenant}/${device.deviceId}`;

@Injectable()
export class InFlightExecutions {
  /** Calls submitted over the device's current connection and not yet settled by it, per device. */
  private readonly submitted = new Map<string, Map<string, ExecutionRow>>();
  /** Calls whose start was granted on a live connection and whose outcome has not arrived, per device. */
  private readonly started = new Map<string, Set<string>>();
  /** Requests a connection was asked to seal to settle an unknown outcome, per session: asked once each. */
  private readonly sealsAsked = new Map<string, Set<string>>();

  /** The call was submitted to the device (as the row says, now dispatched with `deadline`). */
  sent(device: DeviceIdentity, row: ExecutionRow, deadline: Date): void {
    const key = deviceKey(device);
    let mine = this.submitted.get(key);
    if (!mine) this.submitted.set(key, (mine = new Map()));
    if (mine.size >= SUBMITTED_PER_DEVICE && !mine.has(row.call_id)) return;
    mine.set(row.call_id, { ...row, status: 'dispatched', request_id: row.request_id ?? row.call_id, deadline });
  }

  /** The call the device was submitted under `requestId` on this connection, if it is held here. */
  submittedCall(device: DeviceIdentity, requestId: string): ExecutionRow | undefined {
    return this.submitted.get(deviceKey(device))?.get(requestId);
  }

  /** The device is done with the call: no claim or outcome of it is expected on this connection any more. */
  settled(device: DeviceIdentity, callId: string): void {
    const key = deviceKey(device);
    const mine = this.submitted.get(key);
    if (!mine) return;
    mine.delete(callId);
    if (mine.size === 0) this.submitted.delete(key);
  }

  /** The call's start was granted on the device's live connection. */
  startGranted(device: DeviceIdentity, callId: string): void {
    const key = deviceKey(device);
    let set = this.started.get(key);
    if (!set) this.started.set(key, (set = new Set()));
    set.add(callId);
  }

  /** The call's outcome arrived (or its journal settled it): it no longer runs. */
  finished(device: DeviceIdentity, callId: string): void {
    const key = deviceKey(device);
    const set = this.started.get(key);
    if (!set) return;
    set.delete(callId);
    if (set.size === 0) this.started.delete(key);
  }

  /** A new connection of the device: what the previous one was sent is read again from the table. */
  connected(device: DeviceIdentity): void {
    this.submitted.delete(deviceKey(device));
  }

  /** The device's connection is gone: forgets its calls and returns those that were running. */
  disconnected(device: DeviceIdentity): string[] {
    const key = deviceKey(device);
    const running = [...(this.started.get(key) ?? [])];
    this.submitted.delete(key);
    this.started.delete(key);
    return running;
  }

  /** True the first time a session is asked to seal `requestId`; false after. */
  firstSealAsk(sessionId: string, requestId: string): boolean {
    let asked = this.sealsAsked.get(sessionId);
    if (!asked) this.sealsAsked.set(sessionId, (asked = new Set()));
    if (asked.has(requestId)) return false;
    asked.add(requestId);
    return true;
  }

  sessionEnded(sessionId: string): void {
    this.sealsAsked.delete(sessionId);
  }
}
