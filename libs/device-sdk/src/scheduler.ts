/**
 * Timers of the device client behind a small interface, so a process that runs many devices (a simulated fleet) can
 * put all of their timers on one shared {@link TimerWheel} instead of one Node timer each.
 */

/** Cancels a scheduled callback. Calling it again, or after the callback ran, does nothing. */
export type CancelTimer = () => void;

/**
 * Where the device client schedules its timers (hello timeout, heartbeat check, reconnect backoff).
 * `keepAlive: false` means the pending timer alone does not keep the process running (Node's `unref`).
 */
export interface DeviceScheduler {
  /** Runs `fn` once, no earlier than `ms` milliseconds from now. */
  timeout(fn: () => void, ms: number, keepAlive?: boolean): CancelTimer;
  /** Runs `fn` every `ms` milliseconds until cancelled. */
  interval(fn: () => void, ms: number, keepAlive?: boolean): CancelTimer;
}

/** The default scheduler: one Node timer per call. */
export const NODE_SCHEDULER: DeviceScheduler = {
  timeout(fn, ms, keepAlive = true) {
    const timer = setTimeout(fn, ms);
    if (!keepAlive) timer.unref();
    return () => clearTimeout(timer);
  },
  interval(fn, ms, keepAlive = true) {
    const timer = setInterval(fn, ms);
    if (!keepAlive) timer.unref();
    return () => clearInterval(timer);
  },
};

/** Options of {@link TimerWheel}. */
export interface TimerWheelOptions {
  /** Resolution in milliseconds: a callback runs up to one tick (plus event-loop delay) late. Default 50. */
  readonly tickMs?: number;
  /** Slots in the wheel; delays beyond `tickMs · slots` take extra turns. Default 512 (25.6 s at 50 ms). */
  readonly slots?: number;
  /**
   * Receives an error thrown by a callback. Default: rethrown on the next tick of the event loop, as an uncaught
   * exception, the same as a throwing Node timer callback. Either way the other timers keep running.
   */
  readonly onError?: (err: unknown) => void;
}

interface WheelEntry {
  readonly fn: () => void;
  /** 0 for a one-shot timer. */
  readonly periodMs: number;
  readonly keepAlive: boolean;
  slot: number;
  /** Full turns of the wheel still to wait before the entry is due in its slot. */
  rounds: number;
  live: boolean;
}

/**
 * A hashed timing wheel: any number of timers on one Node interval that runs only while timers are pending.
 * Adding and cancelling are O(1); each tick visits one slot. A callback never runs early; it runs up to `tickMs`
 * late, which suits backoff, hello and heartbeat timers measured in hundreds of milliseconds or more.
 * A callback that throws does not disturb the wheel (see {@link TimerWheelOptions.onError}).
 */
export class TimerWheel implements DeviceScheduler {
  private readonly tickMs: number;
  private readonly slots: Set<WheelEntry>[];
  /** Slot of the last tick processed. */
  private cursor = 0;
  /** Time of the last tick processed (monotonic clock, ms). */
  private lastTick = 0;
  private timer: NodeJS.Timeout | undefined;
  private count = 0;
  private kept = 0;
  private readonly onError: (err: unknown) => void;

  constructor(options: TimerWheelOptions = {}) {
    this.tickMs = Math.max(1, options.tickMs ?? 50);
    this.onError =
      options.onError ??
      ((err) =>
        process.nextTick(() => {
          throw err;
        }));
    this.slots = Array.from({ length: Math.max(2, options.slots ?? 512) }, () => new Set<WheelEntry>());
  }

  /** Timers pending. */
  get size(): number {
    return this.count;
  }

  timeout(fn: () => void, ms: number, keepAlive = true): CancelTimer {
    return this.add(fn, ms, 0, keepAlive);
  }

  interval(fn: () => void, ms: number, keepAlive = true): CancelTimer {
    return this.add(fn, ms, Math.max(ms, this.tickMs), keepAlive);
  }

  /** Cancels every pending timer and stops the wheel's own interval. */
  clear(): void {
    for (const slot of this.slots) {
      for (const entry of slot) entry.live = false;
      slot.clear();
    }
    this.count = 0;
    this.kept = 0;
    this.sync();
  }

  private add(fn: () => void, ms: number, periodMs: number, keepAlive: boolean): CancelTimer {
    if (this.count === 0) this.lastTick = performance.now();
    const entry: WheelEntry = { fn, periodMs, keepAlive, slot: 0, rounds: 0, live: true };
    this.place(entry, ms);
    this.count += 1;
    if (keepAlive) this.kept += 1;
    this.sync();
    return () => this.cancel(entry);
  }

  private place(entry: WheelEntry, ms: number): void {
    // Count from the last processed tick, not from now, so the entry is never due before `ms` has passed.
    const ticks = Math.max(1, Math.ceil((performance.now() - this.lastTick + Math.max(0, ms)) / this.tickMs));
    entry.slot = (this.cursor + ticks) % this.slots.length;
    entry.rounds = Math.floor((ticks - 1) / this.slots.length);
    this.slots[entry.slot]!.add(entry);
  }

  private cancel(entry: WheelEntry): void {
    if (!entry.live) return;
    entry.live = false;
    this.slots[entry.slot]!.delete(entry);
    this.count -= 1;
    if (entry.keepAlive) this.kept -= 1;
    this.sync();
  }

  /** Runs the interval only while timers are pending, and keeps the process alive only for keep-alive timers. */
  private sync(): void {
    if (this.count === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    this.timer ??= setInterval(() => this.tick(), this.tickMs);
    if (this.kept > 0) this.timer.ref();
    else this.timer.unref();
  }

  private tick(): void {
    // A busy event loop can skip intervals: process every tick that is due, in order.
    const due = Math.floor((performance.now() - this.lastTick) / this.tickMs);
    for (let i = 0; i < due && this.count > 0; i++) {
      this.cursor = (this.cursor + 1) % this.slots.length;
      this.lastTick += this.tickMs;
      const slot = this.slots[this.cursor]!;
      if (slot.size === 0) continue;
      // A snapshot: an interval put back into this same slot waits for the next turn.
      for (const entry of [...slot]) {
        if (!entry.live) continue;
        if (entry.rounds > 0) {
          entry.rounds -= 1;
          continue;
        }
        slot.delete(entry);
        if (entry.periodMs > 0) this.place(entry, entry.periodMs);
        else {
          entry.live = false;
          this.count -= 1;
          if (entry.keepAlive) this.kept -= 1;
        }
        try {
          entry.fn();
        } catch (err) {
          this.onError(err);
        }
      }
    }
    if (this.count === 0) this.lastTick = performance.now();
    this.sync();
  }
}
