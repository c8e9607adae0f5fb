import { performance } from 'node:perf_hooks';

/** Milliseconds on the monotonic clock (`performance.now()`). */
export const now = (): number => performance.now();

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<unknown> => new Promise((r) => setTimeout(r, ms));

/** The `p`th percentile (nearest rank) of samples already sorted ascending; NaN when there are none. */
export function pct(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

/** Every figure a bench reads off a set of latency samples; each bench picks the ones it reports. */
export interface LatencySummary {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  /** The largest sample (NaN when there are none). */
  max: number;
  /** Sum of the samples over max(1, n). */
  mean: number;
}

/** Sorts a copy of `samples` ascending and summarises it. */
export function summarize(samples: readonly number[] | Float64Array): LatencySummary {
  const s = Float64Array.from(samples).sort();
  let sum = 0;
  for (const v of s) sum += v;
  return {
    n: s.length,
    p50: pct(s, 50),
    p90: pct(s, 90),
    p99: pct(s, 99),
    max: s.at(-1) ?? Number.NaN,
    mean: sum / Math.max(1, s.length),
  };
}
