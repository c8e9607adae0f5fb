import { canonicalJson, canonicalPayload, NonCanonicalValueError } from './canonical.js';

describe('canonicalJson', () => {
  it('sorts keys at every depth and drops insignificant whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 2 }], c: 'x' } })).toBe('{"a":{"c":"x","d":[2,{"y":2,"z":1}]},"b":1}');
  });

  it('normalises strings and keys to NFC so equal text gives equal bytes', () => {
    const decomposed = { 'cafe\u0301': 'e\u0301' };
    const composed = { 'caf\u00e9': '\u00e9' };
    expect(canonicalPayload(decomposed)).toEqual(canonicalPayload(composed));
  });

  it('refuses values JSON cannot carry instead of changing them', () => {
    expect(() => canonicalJson({ n: Number.NaN })).toThrow(NonCanonicalValueError);
    expect(() => canonicalJson({ n: Infinity })).toThrow(/\$\.n/);
    expect(() => canonicalJson({ d: new Date(0) })).toThrow(/plain object/);
    expect(() => canonicalJson({ b: 10n })).toThrow(/bigint/);
  });

  it('refuses two keys that become the same after normalisation', () => {
    expect(() => canonicalJson({ 'cafe\u0301': 1, 'caf\u00e9': 2 })).toThrow(/same text/);
  });

  it('gives the hash of the exact bytes', () => {
    expect(canonicalPayload({}).sha256).toBe('44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a');
  });
});
