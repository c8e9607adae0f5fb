/**
 * Canonical bytes of tool arguments: the exact bytes that are hashed, recorded and sent to an executor.
 *
 * Rules: object keys sorted by UTF-16 code unit order, strings (keys and values) in Unicode NFC, no insignificant
 * whitespace, numbers in JavaScript's shortest round-trip form. Values that JSON cannot carry faithfully (NaN,
 * Infinity, undefined inside arrays, functions, symbols, bigints) are refused rather than silently changed.
 */
import { createHash } from 'node:crypto';
import { OrmuzError } from './errors.js';

/** A JSON value as it travels in tool arguments and results. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** Raised when a value cannot be expressed as canonical JSON. */
export class NonCanonicalValueError extends OrmuzError {
  readonly code = 'non_canonical_value';
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`The value at ${path} cannot be sent: ${reason}. Send plain JSON: strings, finite numbers, booleans, null, arrays and objects.`);
  }
}

const MAX_DEPTH = 64;

function write(value: unknown, path: string, depth: number, out: string[]): void {
  if (depth > MAX_DEPTH) throw new NonCanonicalValueError(path, `it is nested deeper than ${MAX_DEPTH} levels`);
  switch (typeof value) {
    case 'string':
      out.push(JSON.stringify(value.normalize('NFC')));
      return;
    case 'number':
      if (!Number.isFinite(value)) throw new NonCanonicalValueError(path, `${value} is not a finite number`);
      out.push(JSON.stringify(Object.is(value, -0) ? 0 : value));
      return;
    case 'boolean':
      out.push(value ? 'true' : 'false');
      return;
    case 'object': {
      if (value === null) {
        out.push('null');
        return;
      }
      if (Array.isArray(value)) {
        out.push('[');
        value.forEach((item, i) => {
          if (i > 0) out.push(',');
          write(item, `${path}[${i}]`, depth + 1, out);
        });
        out.push(']');
        return;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) {
        throw new NonCanonicalValueError(path, 'it is not a plain object');
      }
      const entries = Object.keys(value)
        .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
        .map((k) => [k.normalize('NFC'), (value as Record<string, unknown>)[k]] as const)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      out.push('{');
      entries.forEach(([key, item], i) => {
        if (i > 0 && entries[i - 1]![0] === key) {
          throw new NonCanonicalValueError(path, `two keys normalise to the same text ${JSON.stringify(key)}`);
        }
        if (i > 0) out.push(',');
        out.push(JSON.stringify(key), ':');
        write(item, `${path}.${key}`, depth + 1, out);
      });
      out.push('}');
      return;
    }
    default:
      throw new NonCanonicalValueError(path, `a ${typeof value} has no JSON form`);
  }
}

/** Canonical JSON text of `value`. Throws {@link NonCanonicalValueError}. */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  write(value, '$', 0, out);
  return out.join('');
}

/** Hex SHA-256 of the UTF-8 bytes of `text` (or of raw bytes). */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The canonical payload of tool arguments together with its SHA-256: what is recorded before anything is sent. */
export interface CanonicalPayload {
  /** Canonical JSON text; its UTF-8 bytes are what executors receive and hash. */
  readonly payload: string;
  /** Lowercase hex SHA-256 of the payload's UTF-8 bytes. */
  readonly sha256: string;
}

/** Canonicalises `args` and hashes the result. Throws {@link NonCanonicalValueError}. */
export function canonicalPayload(args: unknown): CanonicalPayload {
  const payload = canonicalJson(args);
  return { payload, sha256: sha256Hex(payload) };
}
