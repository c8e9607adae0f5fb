/**
 * When to try a provider request again, and how long to wait first. Pure: the clock and the random source are passed
 * in, so the rules are tested without waiting.
 */

/** How a provider request is retried. */
export interface RetryPolicy {
  /** Attempts in all, at least 1 (the first try included). */
  readonly attempts: number;
  /** The backoff's first ceiling, in ms; it doubles per attempt. */
  readonly baseDelayMs: number;
  /** No wait is longer than this, whatever the backoff or the server's `Retry-After` asks. */
  readonly maxDelayMs: number;
}

/**
 * True for the statuses that say "later" rather than "never": 408, 409 (OpenAI's conflicting-request lock), 429 and
 * every 5xx (Anthropic's 529 "overloaded" included). Every other 4xx is the request's fault and fails at once.
 */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * Exponential backoff with full jitter: a uniform wait in [0, min(cap, base · 2^(attempt-1))). Jitter spreads the
 * retries of many conversations hit by the same rate limit, so they do not come back in step.
 */
export function backoffMs(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.floor(random() * ceiling);
}

/**
 * The wait a `Retry-After` (or `retry-after-ms`) header asks for, in ms, capped at `capMs`; `undefined` when the
 * header is absent or unreadable. `Retry-After` is either delay-seconds or an HTTP date (RFC 9110 §10.2.3).
 */
export function retryAfterMs(headers: Headers, now: number, capMs: number): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.min(capMs, Math.ceil(Number(ms)));
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.min(capMs, Math.ceil(Number(value) * 1000));
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  return Math.min(capMs, Math.max(0, at - now));
}
