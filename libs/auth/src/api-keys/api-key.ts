/**
 * What an API key is: `ormz_<key_id>_<secret>`. The key id (16 lowercase hex digits) names the stored row, so a key is
 * found by one indexed lookup and can be listed and revoked by its id; the secret is 32 random bytes (base64url), so
 * there is nothing to guess and no slow hash is needed. Only the SHA-256 of the whole key is stored, and a presented
 * key is compared with it in constant time. The `ormz_` prefix makes a leaked key easy to find in logs and for secret
 * scanners.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { UnauthenticatedError } from '../errors.js';

export const API_KEY_PREFIX = 'ormz_';
const KEY_ID_BYTES = 8;
const SECRET_BYTES = 32;
const KEY_ID_LENGTH = KEY_ID_BYTES * 2;
const SECRET_LENGTH = Math.ceil((SECRET_BYTES * 4) / 3);
/** `ormz_` + key id + `_` + secret: 65 characters. */
export const API_KEY_LENGTH = API_KEY_PREFIX.length + KEY_ID_LENGTH + 1 + SECRET_LENGTH;

const KEY_ID = /^[0-9a-f]{16}$/;
const SECRET = /^[A-Za-z0-9_-]{43}$/;
const SHAPE = `an Ormuz API key is ${API_KEY_PREFIX}<key id: ${KEY_ID_LENGTH} hex digits>_<secret: ${SECRET_LENGTH} base64url characters>, ${API_KEY_LENGTH} characters in all`;

/** A key as presented, split into its parts. */
export interface ParsedApiKey {
  readonly keyId: string;
  /** The whole key, as presented: what is hashed. */
  readonly key: string;
}

/** A new key: a fresh key id and secret. The key is returned to the caller once and never stored. */
export function newApiKey(): ParsedApiKey {
  const keyId = randomBytes(KEY_ID_BYTES).toString('hex');
  return { keyId, key: `${API_KEY_PREFIX}${keyId}_${randomBytes(SECRET_BYTES).toString('base64url')}` };
}

/**
 * Splits a presented key; throws UnauthenticatedError saying what is wrong with its shape. The message never repeats
 * the secret (it may be a real key with a typo, and messages end up in logs).
 */
export function parseApiKey(presented: unknown): ParsedApiKey {
  const problem = shapeProblem(presented);
  if (problem) throw new UnauthenticatedError(`This API key is malformed: ${problem}; ${SHAPE}.`);
  const key = presented as string;
  return { keyId: key.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + KEY_ID_LENGTH), key };
}

function shapeProblem(presented: unknown): string | undefined {
  if (typeof presented !== 'string') return `expected text, got ${presented === null ? 'null' : typeof presented}`;
  if (presented.length === 0) return 'it is empty';
  if (/\s/.test(presented)) return 'it contains whitespace (a line break or space copied with it?)';
  if (presented.startsWith('odt_'))
    return 'it is a device token (odt_…), which authenticates a device to the bridge, not an agent';
  if (!presented.startsWith(API_KEY_PREFIX)) return `it does not start with ${API_KEY_PREFIX}`;
  if (presented.length !== API_KEY_LENGTH)
    return `it is ${presented.length} characters long (truncated or pasted twice?)`;
  const keyId = presented.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + KEY_ID_LENGTH);
  if (!KEY_ID.test(keyId)) return 'its key id is not 16 lowercase hex digits';
  if (presented[API_KEY_PREFIX.length + KEY_ID_LENGTH] !== '_') return 'its key id is not followed by _';
  if (!SECRET.test(presented.slice(-SECRET_LENGTH))) return 'its secret has characters outside base64url';
  return undefined;
}

/** The SHA-256 of a whole key: all that is stored of it. */
export const hashApiKey = (key: string): Buffer => createHash('sha256').update(key, 'utf8').digest();

/** True when `key` is the key whose hash is `stored`; the comparison takes the same time wherever they differ. */
export function apiKeyMatches(key: string, stored: Buffer): boolean {
  const presented = hashApiKey(key);
  return stored.length === presented.length && timingSafeEqual(stored, presented);
}
