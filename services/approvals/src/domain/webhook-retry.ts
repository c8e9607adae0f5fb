/**
 * What an attempt's answer means for its delivery, and when to try again. Pure: the deliverer gives it the answer,
 * the attempt number and a source of randomness.
 */

/** What came back from one POST: a status (with its `Retry-After`, if any), or no answer at all. */
export type AttemptAnswer =
  | { readonly kind: 'response'; readonly status: number; readonly retryAfter: string | null }
  | { readonly kind: 'no_response'; readonly error: string }
  /** Not sent: the URL's host is (or now resolves to) an address webhooks may not reach. */
  | { readonly kind: 'refused'; readonly error: string };

/** What to do next: stop (delivered, or failed for good), or try again after a delay. */
export type AttemptVerdict =
  | { readonly next: 'delivered' }
  | { readonly next: 'failed'; readonly why: string }
  | { readonly next: 'retry'; readonly why: string; readonly retryAfterMs: number | null };

export interface RetrySettings {
  /** Attempts in all, the first included; the last one's failure fails the delivery. */
  readonly maxAttempts: number;
  /** Delay before the second attempt; it doubles for each one after, up to `maxDelayMs`. */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

/** The longest `Retry-After` honoured: a receiver cannot park a delivery for longer than a day. */
const MAX_RETRY_AFTER_MS = 24 * 3600_000;

/**
 * 2xx delivers. No answer (connection refused or reset, DNS, timeout), 408, 429 and 5xx are worth another try: the
 * receiver may be back later. Any other status (a 3xx, which is not followed, or a 4xx) says the request itself is
 * unwelcome, and sending it again will not change that: the delivery fails at once; so does one refused before it
 * was sent (a private address).
 */
export function judgeAttempt(answer: AttemptAnswer, now: Date): AttemptVerdict {
  // The operator must change the URL (or the platform its settings): trying again would be refused again.
  if (answer.kind === 'refused') return { next: 'failed', why: answer.error };
  if (answer.kind === 'no_response') return { next: 'retry', why: answer.error, retryAfterMs: null };
  const { status } = answer;
  if (status >= 200 && status < 300) return { next: 'delivered' };
  if (status === 408 || status === 429 || status >= 500) {
    return { next: 'retry', why: `HTTP ${status}`, retryAfterMs: retryAfterMs(answer.retryAfter, now) };
  }
  const hint = status >= 300 && status < 400 ? ' (redirects are not followed: register the final URL)' : '';
  return { next: 'failed', why: `HTTP ${status}${hint}` };
}

/**
 * The delay before the attempt after `attempt` (1-based): the receiver's `Retry-After` when it gave one, else
 * exponential backoff with jitter (between half and all of `base × 2^(attempt-1)`, capped), so that endpoints that
 * fail together are not all retried at the same instant. Undefined when `attempt` was the last allowed.
 */
export function nextDelayMs(
  attempt: number,
  retryAfter: number | null,
  settings: RetrySettings,
  random: () => number = Math.random,
): number | undefined {
  if (attempt >= settings.maxAttempts) return undefined;
  if (retryAfter !== null) return retryAfter;
  const ceiling = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** Math.min(attempt - 1, 30));
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}

/** `Retry-After` in milliseconds from `now`: delay-seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterMs(header: string | null, now: Date): number | null {
  if (!header) return null;
  const value = header.trim();
  const ms = /^\d+$/.test(value) ? Number(value) * 1000 : Date.parse(value) - now.getTime();
  if (!Number.isFinite(ms)) return null;
  return Math.min(Math.max(0, ms), MAX_RETRY_AFTER_MS);
}
