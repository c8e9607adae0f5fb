import { createHash } from 'node:crypto';
import { UnauthenticatedError } from '../errors.js';
import { API_KEY_LENGTH, apiKeyMatches, hashApiKey, newApiKey, parseApiKey } from './api-key.js';

describe('API key format', () => {
  it('makes ormz_<16 hex key id>_<43 base64url secret> keys, each different', () => {
    const keys = Array.from({ length: 50 }, () => newApiKey());
    for (const { keyId, key } of keys) {
      expect(key).toMatch(/^ormz_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
      expect(key).toHaveLength(API_KEY_LENGTH);
      expect(key.slice(5, 21)).toBe(keyId);
    }
    expect(new Set(keys.map((k) => k.key)).size).toBe(50);
    expect(new Set(keys.map((k) => k.keyId)).size).toBe(50);
  });

  it('parses a key back to its key id, also when its secret holds _ and -', () => {
    const { keyId, key } = newApiKey();
    expect(parseApiKey(key)).toEqual({ keyId, key });
    const tricky = `ormz_0123456789abcdef_${'_-'.repeat(21)}a`;
    expect(parseApiKey(tricky)).toEqual({ keyId: '0123456789abcdef', key: tricky });
  });

  /** The refusal of `presented`, which must be an UnauthenticatedError. */
  function refusal(presented: unknown): string {
    try {
      parseApiKey(presented);
    } catch (err) {
      expect(err).toBeInstanceOf(UnauthenticatedError);
      expect(err).toMatchObject({ code: 'unauthenticated' });
      return (err as Error).message;
    }
    throw new Error('the key was accepted');
  }

  it.each([
    ['no text', undefined, /expected text, got undefined/],
    ['a number', 42, /expected text, got number/],
    ['nothing', '', /it is empty/],
    ['a key and a line break', `${newApiKey().key}\n`, /whitespace/],
    ['a device token', `odt_${'a'.repeat(43)}`, /device token/],
    ["another vendor's key", `sk_${'a'.repeat(62)}`, /does not start with ormz_/],
    ['a truncated key', newApiKey().key.slice(0, -1), /64 characters long/],
    ['a key with a character more', `${newApiKey().key}x`, /66 characters long/],
    ['an upper-case key id', `ormz_0123456789ABCDEF_${'a'.repeat(43)}`, /key id is not 16 lowercase hex digits/],
    ['a wrong separator', `ormz_0123456789abcdef-${'a'.repeat(43)}`, /not followed by _/],
    ['a padded secret', `ormz_0123456789abcdef_${'a'.repeat(42)}=`, /secret has characters outside base64url/],
  ])('refuses %s as malformed, saying why and how a key looks', (_what, presented, why) => {
    const message = refusal(presented);
    expect(message).toMatch(/^This API key is malformed: /);
    expect(message).toMatch(why);
    expect(message).toContain('ormz_<key id: 16 hex digits>_<secret: 43 base64url characters>');
  });

  it('never repeats the presented key in its refusal', () => {
    const { key } = newApiKey();
    expect(refusal(`${key} `)).not.toContain(key.slice(22));
  });

  it('stores the SHA-256 of the whole key and matches only that key', () => {
    const { key } = newApiKey();
    const stored = hashApiKey(key);
    expect(stored.equals(createHash('sha256').update(key).digest())).toBe(true);
    expect(apiKeyMatches(key, stored)).toBe(true);
    const other = `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`;
    expect(apiKeyMatches(other, stored)).toBe(false);
    expect(apiKeyMatches(key, stored.subarray(0, 16))).toBe(false);
    expect(apiKeyMatches(key, Buffer.alloc(0))).toBe(false);
  });
});
