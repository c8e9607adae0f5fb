/** Options for {@link waitFor}. */
export interface WaitForOptions {
  /**
   * Give up after this many milliseconds. Default 30 000: the bound only turns a hang into a failure. A wait returns as
   * soon as its condition holds, so a generous bound costs nothing on an idle machine and keeps a loaded one green.
   */
  readonly timeoutMs?: number;
  /** Pause between attempts, in milliseconds. Default 20. */
  readonly intervalMs?: number;
  /** What is being waited for, in words; it leads the timeout error (`the audit projection to reach seq 12`). */
  readonly message?: string;
}

/** Raised by {@link waitFor} when the predicate did not hold in time. `cause` is the last error it threw, if any. */
export class WaitTimeoutError extends Error {
  constructor(
    readonly what: string,
    readonly timeoutMs: number,
    readonly attempts: number,
    lastError: unknown,
  ) {
    super(
      `Timed out after ${timeoutMs} ms (${attempts} attempt${attempts === 1 ? '' : 's'}) waiting for ${what}` +
        (lastError === undefined ? '.' : `; the last attempt threw: ${describe(lastError)}`),
      lastError === undefined ? undefined : { cause: lastError },
    );
    this.name = 'WaitTimeoutError';
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

type Truthy<T> = Exclude<T, false | null | undefined | 0 | ''>;

const TIMED_OUT = Symbol('timed out');

/**
 * Polls `predicate` until it returns (or resolves to) a truthy value, and returns that value. Use it instead of
 * sleeping: wait on a projection's checkpoint, a row, a status.
 *
 * A predicate that throws counts as "not yet"; its last error is reported if time runs out. An attempt that is still
 * pending when time runs out is abandoned (its promise is left to settle on its own) and the wait fails.
 *
 * @throws WaitTimeoutError after `timeoutMs`, naming `message`.
 */
export async function waitFor<T>(predicate: () => T | Promise<T>, options: WaitForOptions = {}): Promise<Truthy<T>> {
  const { timeoutMs = 30_000, intervalMs = 20 } = options;
  const what = options.message ?? (predicate.name ? `${predicate.name}()` : 'the condition');
  const deadline = Date.now() + timeoutMs;
  let attempts = 0;
  let lastError: unknown;
  for (;;) {
    attempts++;
    let timer: NodeJS.Timeout | undefined;
    try {
      const remaining = Math.max(0, deadline - Date.now());
      const expiry = new Promise<typeof TIMED_OUT>((resolve) => {
        timer = setTimeout(resolve, remaining, TIMED_OUT);
      });
      const value = await Promise.race([Promise.resolve().then(predicate), expiry]);
      if (value === TIMED_OUT) throw new WaitTimeoutError(what, timeoutMs, attempts, lastError);
      if (value) return value as Truthy<T>;
      lastError = undefined;
    } catch (err) {
      if (err instanceof WaitTimeoutError) throw err;
      lastError = err;
    } finally {
      clearTimeout(timer);
    }
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new WaitTimeoutError(what, timeoutMs, attempts, lastError);
    await new Promise((resolve) => setTimeout(resolve, Math.min(intervalMs, remaining)));
  }
}
