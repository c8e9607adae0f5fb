/** `v` with `digits` decimals, or `n/a` when it is not finite. */
export const fmt = (v: number, digits = 3): string => (Number.isFinite(v) ? v.toFixed(digits) : 'n/a');

/** A rate as `12,345/s`, or `n/a` when it is not finite. */
export const fmtRate = (v: number): string =>
  Number.isFinite(v) ? `${Math.round(v).toLocaleString('en-US')}/s` : 'n/a';

/** Microseconds, two decimals below 10 µs and one above. */
export const fmtUs = (v: number): string => `${fmt(v, v < 10 ? 2 : 1)} µs`;
