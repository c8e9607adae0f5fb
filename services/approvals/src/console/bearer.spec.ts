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
});
