/**
 * Canonical bytes of tool arguments: the exact bytes that are hashed, recorded and sent to an executor.
 *
 * Rules: object keys sorted by UTF-16 code unit order, strings (keys and values) in Unicode NFC, no insignificant
 * whitespace, numbers in JavaScript's shortest round-trip form. Values that JSON cannot carry faithfully (NaN,
 * Infinity, undefined inside arrays, functions, symbols, bigints) are refused rather than silently changed.
 */
import { hash } from 'node:crypto';
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

/**
 * Code units from U+0300 up. Text made only of code units below U+0300 (ASCII, Latin-1, Latin Extended, IPA) is
 * already in NFC: no character there decomposes or composes with a neighbour (the first combining mark is U+0300),
 * so such text skips `normalize`, the costliest step. canonical.spec.ts checks every pair below U+0300.
 */
const FIRST_NFC_SENSITIVE = 0x300;

function mayChangeUnderNfc(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) >= FIRST_NFC_SENSITIVE) return true;
  return false;
}

function nfc(text: string): string {
  return mayChangeUnderNfc(text) ? text.normalize('NFC') : text;
}

/**
 * The JSON string literal of `text` in NFC. Text with no code unit that JSON.stringify escapes (`"`, `\`, controls
 * below U+0020, lone surrogates) or that NFC may change is written as it is, between quotes.
 */
function quoted(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || c >= FIRST_NFC_SENSITIVE) return JSON.stringify(nfc(text));
  }
  return `"${text}"`;
}

/**
 * The keys (array indexes and NFC object keys) from the root down to the value being written: `trail[d]` is the key
 * taken at depth `d`. Paths are only built from it when a value is refused.
 */
type Trail = (string | number)[];

function refuse(trail: Trail, depth: number, reason: string): never {
  let path = '$';
  for (let d = 0; d < depth; d++) {
    const key = trail[d]!;
    path += typeof key === 'number' ? `[${key}]` : `.${key}`;
  }
  throw new NonCanonicalValueError(path, reason);
}

function write(value: unknown, depth: number, trail: Trail): string {
  if (depth > MAX_DEPTH) refuse(trail, depth, `it is nested deeper than ${MAX_DEPTH} levels`);
  switch (typeof value) {
    case 'string':
      return quoted(value);
    case 'number':
      if (!Number.isFinite(value)) refuse(trail, depth, `${value} is not a finite number`);
      // Shortest round-trip form, as JSON.stringify writes it; -0 is written 0 (String(-0) is "0").
      return String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) return writeArray(value as readonly unknown[], depth, trail);
      const proto: unknown = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) refuse(trail, depth, 'it is not a plain object');
      return writeObject(value as Record<string, unknown>, depth, trail);
    }
    default:
      return refuse(trail, depth, `a ${typeof value} has no JSON form`);
  }
}

function writeArray(array: readonly unknown[], depth: number, trail: Trail): string {
  let out = '[';
  const length = array.length;
  for (let i = 0; i < length; i++) {
    trail[depth] = i;
    // A hole has no JSON form (JSON.stringify would invent a null): refuse it like undefined.
    if (!(i in array)) refuse(trail, depth + 1, 'an empty array slot has no JSON form');
    if (i > 0) out += ',';
    out += write(array[i], depth + 1, trail);
  }
  return `${out}]`;
}

function writeObject(object: Record<string, unknown>, depth: number, trail: Trail): string {
  const keys = Object.keys(object);
  for (const key of keys) {
    if (mayChangeUnderNfc(key)) return writeObjectNormalisingKeys(object, keys, depth, trail);
  }
  // Every key is its own NFC form, and own keys are distinct: no two can collide.
  sortKeys(keys);
  let out = '{';
  let first = true;
  for (const key of keys) {
    const item = object[key];
    if (item === undefined) continue;
    if (first) first = false;
    else out += ',';
    trail[depth] = key;
    out += `${quoted(key)}:${write(item, depth + 1, trail)}`;
  }
  return `${out}}`;
}

/** Sorts distinct strings by UTF-16 code units, in place: insertion sort for the few keys arguments usually have. */
function sortKeys(keys: string[]): void {
  const n = keys.length;
  if (n > 12) {
    keys.sort();
    return;
  }
  for (let i = 1; i < n; i++) {
    const key = keys[i]!;
    let j = i - 1;
    while (j >= 0 && keys[j]! > key) {
      keys[j + 1] = keys[j]!;
      j--;
    }
    keys[j + 1] = key;
  }
}

/** {@link writeObject} for objects with a key that NFC may change: two keys may then become the same text. */
function writeObjectNormalisingKeys(
  object: Record<string, unknown>,
  keys: readonly string[],
  depth: number,
  trail: Trail,
): string {
  const entries: [string, unknown][] = [];
  for (const key of keys) {
    const item = object[key];
    if (item !== undefined) entries.push([nfc(key), item]);
  }
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  let out = '{';
  for (let i = 0; i < entries.length; i++) {
    const [key, item] = entries[i]!;
    if (i > 0) {
      if (entries[i - 1]![0] === key) {
        refuse(trail, depth, `two keys normalise to the same text ${JSON.stringify(key)}`);
      }
      out += ',';
    }
    trail[depth] = key;
    out += `${quoted(key)}:${write(item, depth + 1, trail)}`;
  }
  return `${out}}`;
}

/** Canonical JSON text of `value`. Throws {@link NonCanonicalValueError}. */
export function canonicalJson(value: unknown): string {
  return write(value, 0, []);
}

/** Hex SHA-256 of the UTF-8 bytes of `text` (or of raw bytes). */
export function sha256Hex(data: string | Uint8Array): string {
  return hash('sha256', data, 'hex');
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
