import { randomBytes } from 'node:crypto';

const PREFIX_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,15}$/;

/**
 * A short random name that is safe as a NATS subject token, stream or consumer name and Postgres identifier:
 * `prefix` followed by 8 lowercase hex digits (`t1a2b3c4d`). Give each test file (or test) its own so runs never
 * see each other's streams.
 *
 * @param prefix 1 to 16 characters: a letter, then letters, digits, `_` or `-`. Throws `RangeError` otherwise.
 */
export function randomNamespace(prefix = 't'): string {
  if (!PREFIX_PATTERN.test(prefix)) {
    throw new RangeError(
      `randomNamespace prefix ${JSON.stringify(prefix)} is not NATS-safe: use 1 to 16 letters, digits, '_' or '-', ` +
        'starting with a letter.',
    );
  }
  return `${prefix}${randomBytes(4).toString('hex')}`;
}
