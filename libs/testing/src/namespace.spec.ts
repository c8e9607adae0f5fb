import { randomNamespace } from './namespace.js';

describe('randomNamespace', () => {
  it('is the prefix followed by 8 hex digits', () => {
    expect(randomNamespace()).toMatch(/^t[0-9a-f]{8}$/);
    expect(randomNamespace('audit_')).toMatch(/^audit_[0-9a-f]{8}$/);
  });

  it('gives a different name each time', () => {
    const names = new Set(Array.from({ length: 1000 }, () => randomNamespace()));
    expect(names.size).toBe(1000);
  });

  it('refuses a prefix that is not safe in a subject, stream name or SQL identifier', () => {
    for (const prefix of ['', 'a.b', 'a*', 'a>', 'a b', '1a', 'x'.repeat(17)]) {
      expect(() => randomNamespace(prefix)).toThrow(RangeError);
    }
  });
});
