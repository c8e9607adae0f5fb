/**
 * Gauges read at scrape time from what the process already knows (its consumers' status, a read model): one read per
 * scrape, shared by every gauge that shows part of it. prom-client asks each metric's `collect` at once when it renders
 * the registry, so the gauges of one read call the shared reader in the same turn and wait on the same promise.
 */
import type { Logger } from 'pino';
import type { Gauge } from 'prom-client';

/** A reader that runs at most once at a time: callers arriving while it runs share its answer. */
export function sharedRead<T>(read: () => Promise<T>): () => Promise<T> {
  let current: Promise<T> | undefined;
  return () =>
    (current ??= read().finally(() => {
      current = undefined;
    }));
}

/**
 * A gauge's `collect` (prom-client calls it with the gauge as `this`): reads (shared), clears the gauge and lets
 * `show` set its series. A read that fails leaves the gauge without series and is logged at warn: one unreachable
 * dependency must not fail the whole scrape.
 */
export function collectFrom<T, L extends string = string>(
  read: () => Promise<T>,
  show: (gauge: Gauge<L>, value: T) => void,
  logger: Pick<Logger, 'warn'>,
): (this: Gauge<L>) => Promise<void> {
  return async function (this: Gauge<L>) {
    let value: T;
    try {
      value = await read();
    } catch (err) {
      this.reset();
      logger.warn(
        { err: err instanceof Error ? err.message : String(err) },
        'a metric could not be read for this scrape',
      );
      return;
    }
    this.reset();
    show(this, value);
  };
}
