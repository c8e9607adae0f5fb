import { generateKeyPair, SignJWT } from 'jose';
import { bearerOf, tokenExpiry } from './bearer.js';

const jwt = (payload: object) =>
  ['{"alg":"ES256"}', JSON.stringify(payload), 'sig']
    .map((p, i) => (i < 2 ? Buffer.from(p).toString('base64url') : p))
    .join('.');

describe('bearerOf', () => {
  it('takes the credential of a Bearer header and refuses anything else as unauthenticated', () => {
    expect(bearerOf('Bearer abc.def.ghi')).toBe('abc.def.ghi');
    expect(bearerOf(['bearer  k_123 '])).toBe('k_123');
    for (const header of [undefined, '', 'Basic YTpi', 'Bearer']) {
      expect(() => bearerOf(header)).toThrow(expect.objectContaining({ code: 'unauthenticated' }));
    }
  });
});

describe('tokenExpiry', () => {
  it("reads a JWT's exp, and nothing from an API key or a token without one", () => {
    expect(tokenExpiry(jwt({ exp: 1_900_000_000 }))).toEqual(new Date(1_900_000_000_000));
    expect(tokenExpiry(jwt({ sub: 'x' }))).toBeUndefined();
    expect(tokenExpiry('ormuz_key_abc')).toBeUndefined();
    expect(tokenExpiry('a.%%%.c')).toBeUndefined();
  });

  it('ignores an exp that is not a number of seconds, and a payload that is not a JSON object', () => {
    expect(tokenExpiry(jwt({ exp: '1900000000' }))).toBeUndefined();
    expect(tokenExpiry(jwt({ exp: null }))).toBeUndefined();
    expect(
      tokenExpiry(
        ['{"alg":"ES256"}', '[1,2]', 'sig'].map((p, i) => (i < 2 ? Buffer.from(p).toString('base64url') : p)).join('.'),
      ),
    ).toBeUndefined();
    expect(tokenExpiry('a.b')).toBeUndefined();
    expect(tokenExpiry('')).toBeUndefined();
  });

  it('reads the exp of a token signed by a real issuer', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256' })
      .setExpirationTime(1_900_000_123)
      .sign(privateKey);
    expect(tokenExpiry(token)).toEqual(new Date(1_900_000_123_000));
  });
});
