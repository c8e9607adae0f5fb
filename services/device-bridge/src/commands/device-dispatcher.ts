/**
 * Which ready calls go to which device, and when: the bridge's dispatcher.
 *
 * - dispatch: an authorized call for a device connected here is recorded as dispatched (an append that loses to a
 *   seal), then sent as a submit frame with its exact payload bytes and hash;
 * - from the committed batch: when the executions projection commits rows that became ready, they are handed over
 *   with the state the batch holds (the row as committed, and the call's state folded from the batch's events), and
 *   dispatched at once: no query of the table, no load of the call (docs/decisions/0014);
 * - flow control: a device is sent at most as many requests as its window has room for (`DeviceLink.room`); ready
 *   calls beyond it wait in memory, oldest authorization first, bounded per device, and go as the device finishes
 *   others, so a backlog drains at the device's pace;
 * - the table is the record: a device that connects, or whose waiting calls overflowed the memory, has its ready
 *   calls read from the table; every replica looks for ready calls of its devices when the leader announces a batch
 *   and every second, so a call whose dispatch failed, whose device is on another replica, or that a rebuilt read
 *   model wrote again, is found by a query;
 * - an authorized call whose device does not connect before its offline deadline is sealed as expired.
 */
import { Inject, Injectable } from '@nestjs/common';
import { DEVICE_MAX_IN_FLIGHT_LIMIT } from '@ormuz/contracts';
import type { Loaded } from '@ormuz/event-log';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';
import {
  activeTraceparent,
  contextOfTraceparent,
  inSpan,
  ORMUZ_DEVICE_ID,
  ORMUZ_RISK_LEVEL,
  toolCallAttributes,
} from '@ormuz/tracing';
import { isToolCallError, type ToolCallState } from '@ormuz/tool-call';
import { DEVICE_BRIDGE_CONFIG, type DeviceBridgeConfig } from '../config.js';
import type { DeviceIdentity } from '../domain/device-credentials.js';
import { ExecutionsRepository, type ExecutionRow } from '../persistence/executions.repository.js';
import type { DeviceLink } from './device-link.js';
import { ExecutionLog } from './execution-log.js';
import { FoldedCalls, type CommittedEvent } from './folded-calls.js';
import { deviceKey, InFlightExecutions } from './in-flight-executions.js';

/** Dispatch appends in flight at once, across devices. */
const DISPATCH_CONCURRENCY = 256;
/** Ready calls read per query of a pass. */
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
 * Ready calls of one device held in memory while its window is full, and read at once from the table to fill it.
 * Twice the largest window: enough to skip calls dispatched a moment ago that still read as ready, small enough that
 * a fleet of devices with backlogs holds little.
 */
const WAITING_PER_DEVICE = 2 * DEVICE_MAX_IN_FLIGHT_LIMIT;
/** Ready calls held in memory across devices; beyond, they are read from the table when their device has room. */
const WAITING_MAX = 50_000;

/** A call ready to dispatch and, when the committed batch held its events, its state and version on the log. */
export interface ReadyCall {
  readonly row: ExecutionRow;
  readonly known?: Loaded<ToolCallState>;
}

/** What the executions projection committed, as far as dispatching goes (see executions.reactor.ts). */
export interface CommittedReady {
  /** The batch's events, in stream order. */
  readonly events: readonly CommittedEvent[];
  /** The rows the batch left ready, as committed. */
  readonly ready: readonly ExecutionRow[];
}

/** The ready calls of one device connected here that wait for room in its window. */
interface Waiting {
  /** Oldest authorization first. */
  calls: ReadyCall[];
  readonly ids: Set<string>;
  /** The table may hold ready calls of the device that are not in `calls` (it connected; or too many waited). */
  more: boolean;
  /** A read of the table for this device is under way. */
  reading: boolean;
}

@Injectable()
export class DeviceDispatcher {
  private link: DeviceLink | undefined;
  private kicking: Promise<void> = Promise.resolve();
  private again = false;
  private busy = false;
  /**
   * Calls this replica took to dispatch, whose `dispatched` the read model may not show yet: tenant/call id → time.
   * Nothing takes them again meanwhile.
   */
  private readonly taken = new Map<string, number>();
  /** Highest `last_seq` of a ready call the passes have read: the next pass reads only calls authorized after it. */
  private readUpTo = 0;
  /** When the last full pass started (epoch ms). */
  private lastFullPass = Number.NEGATIVE_INFINITY;
  /**
   * Devices connected here whose connection the dispatcher has taken up (after the reconnect's status queries and
   * resends, so a call dispatched meanwhile is not sent twice): only these are dispatched to.
   */
  private readonly serving = new Set<string>();
  /** Devices connected here with ready calls waiting for room, per device. */
  private readonly waiting = new Map<string, Waiting>();
  private waitingCount = 0;
  /** Calls taken for dispatch and not yet sent, per device: they count against its window. */
  private readonly dispatching = new Map<string, number>();
  /** Calls taken for dispatch and waiting for an append slot. */
  private readonly queue: ReadyCall[] = [];
  private readonly workers = new Set<Promise<void>>();
  private readonly folded = new FoldedCalls();

  constructor(
    private readonly log: ExecutionLog,
    private readonly executions: ExecutionsRepository,
    private readonly inFlight: InFlightExecutions,
    @Inject(DEVICE_BRIDGE_CONFIG) private readonly config: DeviceBridgeConfig,
    @Inject(INFRA) private readonly infra: Infrastructure,
  ) {}

  attach(link: DeviceLink): void {
    this.link = link;
  }

  // --- from the committed batch -----------------------------------------------------------------------------------

  /**
   * The executions projection committed a batch: its ready rows whose device is connected here are dispatched into
   * the room their windows have, with the call states folded from the batch. @returns how many ready rows are for
   * devices not connected here (another replica's, or offline).
   */
  committed(batch: CommittedReady): number {
    this.folded.fold(batch.events);
    const here: ReadyCall[] = [];
    let elsewhere = 0;
    for (const row of batch.ready) {
      const known = this.folded.take(row.tenant, row.call_id, row.last_seq);
      if (this.servesDevice(row)) here.push(known ? { row, known } : { row });
      else elsewhere++;
    }
    this.offer(here);
    return elsewhere;
  }

  /** Whether the row's device is connected here and taken up by the dispatcher. */
  private servesDevice(row: ExecutionRow): boolean {
    const device = { tenant: row.tenant, deviceId: row.device_id };
    return this.serving.has(deviceKey(device)) && (this.link?.isConnected(device) ?? false);
  }

  /** A new leadership: the batches it commits may not follow those folded before. */
  leading(): void {
    this.folded.clear();
  }

  // --- waiting calls and windows ----------------------------------------------------------------------------------

  /** Adds ready calls of devices served here to their waiting lists, then fills those devices' windows. */
  private offer(calls: readonly ReadyCall[]): void {
    const touched = new Map<string, DeviceIdentity>();
    for (const call of calls) {
      const device = { tenant: call.row.tenant, deviceId: call.row.device_id };
      const key = deviceKey(device);
      if (!this.serving.has(key) || this.taken.has(`${call.row.tenant}/${call.row.call_id}`)) continue;
      const waiting = this.waitingOf(key);
      if (waiting.ids.has(call.row.call_id)) continue;
      if (waiting.calls.length >= WAITING_PER_DEVICE || this.waitingCount >= WAITING_MAX) {
        // Read back from the table once the device has room.
        waiting.more = true;
        continue;
      }
      // Batches and reads arrive in stream order, mostly after what waits: sorted only when one does not.
      const last = waiting.calls.at(-1);
      waiting.calls.push(call);
      if (last && last.row.last_seq > call.row.last_seq) waiting.calls.sort((a, b) => a.row.last_seq - b.row.last_seq);
      waiting.ids.add(call.row.call_id);
      this.waitingCount++;
      touched.set(key, device);
    }
    for (const device of touched.values()) this.fill(device);
  }

  private waitingOf(key: string): Waiting {
    let waiting = this.waiting.get(key);
    if (!waiting) this.waiting.set(key, (waiting = { calls: [], ids: new Set(), more: false, reading: false }));
    return waiting;
  }

  /** Requests the device takes now, less the dispatches already taken for it. */
  private freeSlots(device: DeviceIdentity): number {
    return (this.link?.room(device) ?? 0) - (this.dispatching.get(deviceKey(device)) ?? 0);
  }

  /**
   * Dispatches the device's oldest waiting calls into the free slots of its window; when none wait and the table may
   * hold more, reads them.
   */
  private fill(device: DeviceIdentity): void {
    const key = deviceKey(device);
    const waiting = this.waiting.get(key);
    if (!waiting || !this.serving.has(key)) return;
    let free = this.freeSlots(device);
    while (free > 0 && waiting.calls.length > 0) {
      const call = waiting.calls.shift()!;
      waiting.ids.delete(call.row.call_id);
      this.waitingCount--;
      if (this.taken.has(`${call.row.tenant}/${call.row.call_id}`)) continue;
      this.take(call);
      free--;
    }
    if (free > 0 && waiting.more && !waiting.reading) void this.readWaiting(device, waiting);
    else if (waiting.calls.length === 0 && !waiting.more && !waiting.reading) this.waiting.delete(key);
  }

  /**
   * Reads the device's oldest ready calls from the table into its waiting list. A read that finds nothing new (calls
   * dispatched a moment ago still read as ready) waits for the next opening, the next batch or the next pass.
   */
  private async readWaiting(device: DeviceIdentity, waiting: Waiting): Promise<void> {
    waiting.reading = true;
    let rows: ExecutionRow[];
    try {
      rows = await this.executions.readyFor(device.tenant, device.deviceId, WAITING_PER_DEVICE);
    } catch (err) {
      // The pass takes the calls later.
      this.infra.logger.error(
        { err, tenant: device.tenant, device: device.deviceId },
        'reading the ready calls of a device failed',
      );
      return;
    } finally {
      waiting.reading = false;
    }
    if (this.waiting.get(deviceKey(device)) !== waiting) return;
    waiting.more = rows.length >= WAITING_PER_DEVICE;
    // Fills the window when it added anything; otherwise waits (reading again now would find the same).
    this.offer(rows.filter((row) => !waiting.ids.has(row.call_id)).map((row) => ({ row })));
    if (waiting.calls.length === 0 && !waiting.more && this.waiting.get(deviceKey(device)) === waiting)
      this.waiting.delete(deviceKey(device));
  }

  /** The device finished a request and its window has room: its waiting calls go. */
  onWindowOpen(device: DeviceIdentity): void {
    this.fill(device);
  }

  /**
   * A device connected here: the dispatched calls it may never have received are sent again (a duplicate observes
   * its journal), then its ready calls are read from the table into its window.
   */
  async onConnected(device: DeviceIdentity): Promise<void> {
    for (const row of await this.executions.sendable(device.tenant, device.deviceId)) {
      if (row.status === 'dispatched' && row.deadline) this.send(device, row, row.deadline);
    }
    const key = deviceKey(device);
    this.serving.add(key);
    const waiting = this.waitingOf(key);
    waiting.more = true;
    this.fill(device);
  }

  /** The device is no longer connected here: what waited for it is read again when it comes back. */
  onDisconnected(device: DeviceIdentity): void {
    const key = deviceKey(device);
    this.serving.delete(key);
    const waiting = this.waiting.get(key);
    if (!waiting) return;
    this.waitingCount -= waiting.calls.length;
    this.waiting.delete(key);
  }

  // --- dispatch ---------------------------------------------------------------------------------------------------

  /**
   * Takes the call for dispatch and starts a worker for it, up to DISPATCH_CONCURRENCY in all (busy workers take the
   * rest when they are done), so a call never waits behind another's dispatch while there is room.
   */
  private take(call: ReadyCall): void {
    const row = call.row;
    this.taken.set(`${row.tenant}/${row.call_id}`, Date.now());
    const key = deviceKey({ tenant: row.tenant, deviceId: row.device_id });
    this.dispatching.set(key, (this.dispatching.get(key) ?? 0) + 1);
    this.queue.push(call);
    if (this.workers.size < DISPATCH_CONCURRENCY) {
      const worker: Promise<void> = this.work().finally(() => this.workers.delete(worker));
      this.workers.add(worker);
    }
  }

  private async work(): Promise<void> {
    for (let call = this.queue.shift(); call; call = this.queue.shift()) {
      const row = call.row;
      try {
        await this.dispatch(call);
      } catch (err) {
        // Not recorded (the log was unreachable, say): the next full pass takes the call again.
        this.taken.delete(`${row.tenant}/${row.call_id}`);
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

  private async dispatch({ row, known: folded }: ReadyCall): Promise<void> {
    const device = { tenant: row.tenant, deviceId: row.device_id };
    // A call found in the table is loaded here (the append would load it anyway) for the trace it continues.
    const known = folded ?? (await this.log.load(row.tenant, row.call_id));
    const attributes = {
      ...toolCallAttributes({ tenant: row.tenant, tool: row.tool, callId: row.call_id }),
      [ORMUZ_DEVICE_ID]: row.device_id,
      ...(row.verdict ? { [ORMUZ_RISK_LEVEL]: row.verdict.level } : {}),
    };
    const parent = contextOfTraceparent(known.traceparent);
    await inSpan('@ormuz/device-bridge', `dispatch ${row.tool}`, { parent, attributes }, async () => {
      const deadline = new Date(Date.now() + this.config.executionTimeoutMs);
      try {
        await this.log.dispatch(row.tenant, row.call_id, row.device_id, deadline.toISOString(), known);
      } catch (err) {
        // Sealed or otherwise moved on since the row was read: the projection will catch up; nothing is sent.
        if (isToolCallError(err)) return;
        throw err;
      }
      this.send(device, row, deadline, activeTraceparent());
    });
  }

  private send(device: DeviceIdentity, row: ExecutionRow, deadline: Date, traceparent?: string): void {
    this.inFlight.sent(device, row, deadline);
    this.link?.sendSubmit(device, {
      type: 'submit',
      request_id: row.request_id ?? row.call_id,
      call_id: row.call_id,
      tool: row.tool,
      payload: row.payload,
      payload_sha256: row.payload_sha256,
      deadline: deadline.toISOString(),
      verdict: row.verdict ?? { level: 'low', reasons: [] },
      ...(traceparent === undefined ? {} : { traceparent }),
    });
  }

  // --- passes over the table --------------------------------------------------------------------------------------

  /** Wakes a pass over the table's ready calls; concurrent kicks collapse into one more pass. */
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
   * connected here join their device's waiting calls. The read model is read in pages by stream sequence, so however
   * many calls wait for devices that are offline or connected elsewhere, a pass costs one query per page of new calls.
   */
  private async dispatchReady(): Promise<void> {
    const now = Date.now();
    // Entries are added once each, in time order: the expired ones are at the front.
    for (const [callId, at] of this.taken) {
      if (now - at <= RECENT_DISPATCH_MS) break;
      this.taken.delete(callId);
    }
    const full = now - this.lastFullPass >= FULL_PASS_MS;
    if (full) this.lastFullPass = now;
    let after = full ? 0 : this.readUpTo;
    for (;;) {
      const page = await this.executions.ready(after, READY_PAGE);
      this.offer(page.filter((row) => this.servesDevice(row)).map((row) => ({ row })));
      after = page.at(-1)?.last_seq ?? after;
      this.readUpTo = Math.max(this.readUpTo, after);
      if (page.length < READY_PAGE) return;
    }
  }

  // --- offline deadline -------------------------------------------------------------------------------------------

  /** Authorized calls whose device did not connect before the offline deadline are sealed as expired. */
  async sealOffline(now = new Date()): Promise<void> {
    for (const row of await this.executions.waitingSince(new Date(now.getTime() - this.config.offlineDeadlineMs))) {
      await this.log.seal(row.tenant, row.call_id, 'device offline past its deadline');
    }
  }
}
