import type { AsOfV1 } from '@ormuz/contracts';
import { CliInputError } from './context.js';

/** RFC 3339 with a date, a time and a zone (`2026-05-01T10:00:00Z`, `…+02:00`). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** A point in the log: a stream sequence or a time. */
export type LogPoint = { readonly seq: number } | { readonly time: Date };

/**
 * Parses `value` given to `option` as a stream sequence (a whole number from 1) or an RFC 3339 time; anything else
 * is a {@link CliInputError} naming the option.
 */
export function logPoint(option: string, value: string): LogPoint {
  if (/^\d+$/.test(value)) {
    const seq = Number(value);
    if (!Number.isSafeInteger(seq) || seq < 1)
      throw new CliInputError(`${option} ${value}: a sequence is a whole number from 1.`);
    return { seq };
  }
  const time = RFC3339.test(value) ? new Date(value) : undefined;
  if (!time || Number.isNaN(time.getTime())) {
    throw new CliInputError(
      `${option} ${value} is neither a stream sequence nor an RFC 3339 time; write e.g. 2026-05-01T10:00:00Z or 1234.`,
    );
  }
  return { time };
}

/**
 * A commander option parser for `--as-of T`: a stream sequence or an RFC 3339 time up to `now`. Anything else, and a
 * time in the future, is refused before anything is sent.
 */
export function asOfOption(now: () => Date = () => new Date()): (value: string) => AsOfV1 {
  return (value) => {
    const point = logPoint('--as-of', value);
    if ('seq' in point) return point;
    const at = now();
    if (point.time.getTime() > at.getTime()) {
      throw new CliInputError(
        `--as-of ${value} is in the future (it is now ${at.toISOString()}); the log only knows the past.`,
      );
    }
    return { time: point.time.toISOString() };
  };
}
