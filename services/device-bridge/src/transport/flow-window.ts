/**
 * The flow-control window of one device connection: which requests the bridge is waiting on the device to finish or
 * answer, and the frames held back until there is room.
 *
 * A request enters the window when the first frame that asks something of the device about it is sent (a submit, a
 * status query, a seal or a cancel), and leaves it when the device has said its last word about it: its outcome was
 * acknowledged, its start was refused, it refused the submit, or it reported a state it will not leave by itself.
 * Later frames about a request already in the window take no new slot. So the device never holds more than
 * `capacity` requests of this connection, and never sends more than a few frames per request at once: a backlog
 * of any size drains at the device's pace instead of flooding either side's queue.
 *
 * Pure state, no I/O: the gateway sends what {@link FlowWindow.offer} and {@link FlowWindow.release} hand back.
 */
import { isSettledRequestState, type DeviceRequestState } from '@ormuz/contracts';

/** Whether a status report in this state ends the device's part in the request (frees its slot). */
export function reportEndsRequest(state: DeviceRequestState): boolean {
  return isSettledRequestState(state);
}

/** A frame waiting for room, with the request it concerns. */
export interface WindowedFrame<F> {
  readonly requestId: string;
  readonly frame: F;
}

/** How many finished requests a window remembers (oldest forgotten first). */
const FINISHED_REMEMBERED = 1024;

export class FlowWindow<F> {
  private readonly held = new Set<string>();
  private readonly waiting: WindowedFrame<F>[] = [];
  /** Requests the device has said its last word about on this connection, most recent last. */
  private readonly finished = new Set<string>();

  /** @param capacity requests in flight at once, at least 1. */
  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`a window holds at least 1 request, not ${capacity}`);
  }

  /** Requests in flight. */
  get inFlight(): number {
    return this.held.size;
  }

  /** Frames held back for lack of room. */
  get backlog(): number {
    return this.waiting.length;
  }

  /** Slots free for new requests once the held-back frames are sent (0 while any wait). */
  get room(): number {
    return this.waiting.length > 0 ? 0 : Math.max(0, this.capacity - this.held.size);
  }

  holds(requestId: string): boolean {
    return this.held.has(requestId);
  }

  /**
   * Whether the device has said its last word about `requestId` on this connection (it was released and not offered
   * again since): telling it to stop the request (a seal after it refused the submit, say) would take a slot for an
   * answer it has given already.
   */
  finishedWith(requestId: string): boolean {
    return this.finished.has(requestId);
  }

  /**
   * A frame about `requestId` to send. @returns the frame when it may go now (the request is in the window already,
   * or a slot was free and is now taken); `undefined` when it waits for room, in arrival order.
   */
  offer(requestId: string, frame: F): F | undefined {
    if (this.held.has(requestId)) return frame;
    this.finished.delete(requestId);
    if (this.waiting.length === 0 && this.held.size < this.capacity) {
      this.held.add(requestId);
      return frame;
    }
    this.waiting.push({ requestId, frame });
    return undefined;
  }

  /**
   * The device is done with `requestId`. @returns the held-back frames that may go now, oldest first (each has taken
   * its slot). Releasing a request not in the window changes nothing.
   */
  release(requestId: string): F[] {
    if (!this.held.delete(requestId)) return [];
    this.finished.add(requestId);
    if (this.finished.size > FINISHED_REMEMBERED) this.finished.delete(this.finished.values().next().value!);
    const ready: F[] = [];
    while (this.waiting.length > 0) {
      const next = this.waiting[0]!;
      if (!this.held.has(next.requestId)) {
        if (this.held.size >= this.capacity) break;
        this.held.add(next.requestId);
      }
      this.waiting.shift();
      ready.push(next.frame);
    }
    return ready;
  }
}
