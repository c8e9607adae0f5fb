/**
 * The window of re-sent calls: the calls without the client's operation id made within the last `windowMs`, by
 * fingerprint (domain/resent-calls.ts, which says what makes two calls the same and what the window means), each with
 * the operation id it was submitted under. Memory of this process only, bounded.
 */
import { LRUCache } from 'lru-cache';
import { callFingerprint, type CallPrincipal } from '../domain/resent-calls.js';

/** How many calls the window remembers at most; the least recently made is forgotten first. */
export const RESENT_CALLS_REMEMBERED = 50_000;

/**
 * The calls made within the last `windowMs` (0: none, every call is its own), by fingerprint: the operation id each
 * was submitted under. `now` is the clock (milliseconds, monotonic).
 */
export class ResentCalls {
  private readonly seen: LRUCache<string, string> | undefined;

  constructor(
    readonly windowMs: number,
    now: () => number = () => performance.now(),
    maxEntries: number = RESENT_CALLS_REMEMBERED,
  ) {
    if (!Number.isInteger(windowMs) || windowMs < 0)
      throw new Error(`windowMs must be a whole number ≥ 0, got ${windowMs}`);
    this.seen =
      windowMs === 0
        ? undefined
        : new LRUCache<string, string>({ max: maxEntries, ttl: windowMs, ttlResolution: 0, perf: { now } });
  }

  /**
   * The operation id to submit a call under that came without the client's own: the original's when the same call was
   * made within the window, else `operationId` (the session-derived one), remembered from now on.
   */
  operationIdOf(
    who: CallPrincipal,
    tool: string,
    args: Readonly<Record<string, unknown>>,
    operationId: string,
  ): string {
    if (!this.seen) return operationId;
    const fingerprint = callFingerprint(who, tool, args);
    if (fingerprint === undefined) return operationId;
    const original = this.seen.get(fingerprint);
    if (original !== undefined) return original;
    this.seen.set(fingerprint, operationId);
    return operationId;
  }
}
