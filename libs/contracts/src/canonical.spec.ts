import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { canonicalJson, canonicalPayload, NonCanonicalValueError, sha256Hex } from './canonical.js';

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

/** What the refusal says about where: its `path`, and the message naming it. */
function refusal(value: unknown): { path: string; message: string } {
  try {
    canonicalJson(value);
  } catch (err) {
    if (err instanceof NonCanonicalValueError) return { path: err.path, message: err.message };
    throw err;
  }
  throw new Error('expected a NonCanonicalValueError');
}

describe('canonicalJson edges', () => {
  it('writes -0 as 0, alone, in arrays and in objects', () => {
    expect(canonicalJson(-0)).toBe('0');
    expect(canonicalJson([-0, 0, [-0]])).toBe('[0,0,[0]]');
    expect(canonicalJson({ z: -0 })).toBe('{"z":0}');
    expect(canonicalPayload({ z: -0 })).toEqual(canonicalPayload({ z: 0 }));
  });

  it('writes numbers in their shortest round-trip form', () => {
    expect(canonicalJson([1e21, 1e-7, 0.1 + 0.2, -5e-324, 2 ** 53 + 2, 100])).toBe(
      '[1e+21,1e-7,0.30000000000000004,-5e-324,9007199254740994,100]',
    );
  });

  it('writes nested arrays and objects inside arrays, keeping array order', () => {
    expect(canonicalJson([[], [[1, 'b'], [{ b: 2, a: [true, null] }]], {}])).toBe(
      '[[],[[1,"b"],[{"a":[true,null],"b":2}]],{}]',
    );
  });

  it('normalises strings nested in arrays and keys nested in objects', () => {
    expect(canonicalJson({ list: [['e\u0301'], { 'e\u0301': 'A\u030a' }] })).toBe(
      '{"list":[["\u00e9"],{"\u00e9":"\u00c5"}]}',
    );
    // Singletons and compatibility characters: NFC changes the first, keeps the second.
    expect(canonicalJson(['\u212b', '\ufb01'])).toBe('["\u00c5","\ufb01"]');
  });

  it('sorts keys by UTF-16 code units after normalisation', () => {
    expect(canonicalJson({ b: 1, B: 2, é: 3, 'e\u0301x': 4, e: 5, '\ud83d\ude00': 6, '\uff41': 7 })).toBe(
      // A surrogate pair (U+D83D U+DE00) sorts before U+FF41: code units, not code points.
      '{"B":2,"b":1,"e":5,"é":3,"éx":4,"😀":6,"ａ":7}',
    );
  });

  it('drops object members whose value is undefined, also before looking for colliding keys', () => {
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
    expect(canonicalJson({ 'cafe\u0301': undefined, 'caf\u00e9': 2 })).toBe('{"café":2}');
  });

  it('refuses NFC collisions, naming the object where they meet', () => {
    const nested = { a: [0, { b: { 'e\u0301': 1, '\u00e9': 2 } }] };
    expect(refusal(nested)).toEqual({
      path: '$.a[1].b',
      message: expect.stringMatching(/^The value at \$\.a\[1\]\.b cannot be sent: two keys normalise to the same text "é"\./),
    });
    // Three spellings of Å: the letter, A + ring, and the Ångström sign.
    expect(refusal({ '\u00c5': 1, 'A\u030a': 2 }).path).toBe('$');
    expect(refusal({ x: { '\u212b': 1, '\u00c5': 2 } }).path).toBe('$.x');
  });

  it('names the exact place of a refused value, keys in their NFC form', () => {
    expect(refusal({ a: [1, { b: Number.NaN }] }).path).toBe('$.a[1].b');
    expect(refusal({ a: [1, { b: Number.NaN }] }).message).toMatch(/^The value at \$\.a\[1\]\.b cannot be sent: NaN is not a finite number\./);
    expect(refusal([[0, [1, -Infinity]]]).path).toBe('$[0][1][1]');
    expect(refusal({ 'e\u0301': { x: [undefined] } }).path).toBe('$.\u00e9.x[0]');
    expect(refusal({ a: [1, undefined] }).message).toMatch(/\$\.a\[1\] cannot be sent: a undefined has no JSON form/);
    expect(refusal({ f: [() => 1] }).message).toMatch(/\$\.f\[0\] cannot be sent: a function has no JSON form/);
    expect(refusal({ s: Symbol('x') }).message).toMatch(/a symbol has no JSON form/);
    expect(refusal({ a: { b: new Map() } })).toMatchObject({ path: '$.a.b', message: expect.stringMatching(/plain object/) });
    expect(refusal(undefined).path).toBe('$');
    expect(refusal(Number.NaN).path).toBe('$');
  });

  it('reports the first refused value in key order, after earlier siblings were written', () => {
    expect(refusal({ z: Number.NaN, a: [Infinity] }).path).toBe('$.a[0]');
    // A bad value sorting before a collision is reported first; one sorting after it is not reached.
    expect(refusal({ a: Number.NaN, 'e\u0301': 1, '\u00e9': 2 }).path).toBe('$.a');
    expect(refusal({ '\u00ff': Number.NaN, 'e\u0301': 1, '\u00e9': 2 }).message).toMatch(/same text/);
  });

  it('refuses nesting deeper than 64 levels, naming where', () => {
    let ok: unknown = 1;
    for (let i = 0; i < 64; i++) ok = [ok];
    expect(canonicalJson(ok)).toBe(`${'['.repeat(64)}1${']'.repeat(64)}`);
    const deep = { a: [ok] };
    const r = refusal(deep);
    expect(r.path).toBe(`$.a${'[0]'.repeat(64)}`);
    expect(r.message).toMatch(/nested deeper than 64 levels/);
  });

  it('accepts objects without a prototype and refuses class instances', () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { b: 1, a: 2 });
    expect(canonicalJson(bare)).toBe('{"a":2,"b":1}');
    class Point {
      x = 1;
    }
    expect(refusal({ p: new Point() }).path).toBe('$.p');
  });

  it('escapes what JSON must escape, lone surrogates included', () => {
    expect(canonicalJson({ 'q"\\\n': '\u0000\ud800' })).toBe('{"q\\"\\\\\\n":"\\u0000\\ud800"}');
  });
});

describe('the NFC shortcut', () => {
  it('holds: text of code units below U+0300 is already NFC, alone and in every pair', () => {
    // Why canonical.ts may skip normalize() for such text: no character there composes with a neighbour.
    const chars = Array.from({ length: 0x300 }, (_, c) => String.fromCharCode(c));
    const changed: string[] = [];
    for (const a of chars) {
      if (a.normalize('NFC') !== a) changed.push(a);
      for (const b of chars) {
        const pair = a + b;
        if (pair.normalize('NFC') !== pair) changed.push(pair);
      }
    }
    expect(changed).toEqual([]);
  });
});

describe('sha256Hex', () => {
  it('hashes the UTF-8 bytes of text, and raw bytes, as createHash does', () => {
    for (const data of ['', 'abc', 'é😀', '\ud800 lone', new Uint8Array([0, 1, 255])]) {
      expect(sha256Hex(data)).toBe(createHash('sha256').update(data).digest('hex'));
    }
  });
});

// ---------------------------------------------------------------------------------------------------------------
// The implementation before it was made faster, kept to hold the current one to exactly the same output and errors.

function referenceWrite(value: unknown, path: string, depth: number, out: string[]): void {
  if (depth > 64) throw new NonCanonicalValueError(path, `it is nested deeper than ${64} levels`);
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
        for (let i = 0; i < value.length; i++) {
          if (!(i in value)) throw new NonCanonicalValueError(`${path}[${i}]`, 'an empty array slot has no JSON form');
          if (i > 0) out.push(',');
          referenceWrite(value[i], `${path}[${i}]`, depth + 1, out);
        }
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
        referenceWrite(item, `${path}.${key}`, depth + 1, out);
      });
      out.push('}');
      return;
    }
    default:
      throw new NonCanonicalValueError(path, `a ${typeof value} has no JSON form`);
  }
}

function outcome(f: () => string): { text: string } | { error: string; path: string } {
  try {
    return { text: f() };
  } catch (err) {
    if (err instanceof NonCanonicalValueError) return { error: err.message, path: err.path };
    throw err;
  }
}

describe('canonicalJson against the reference implementation', () => {
  const unit = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom('a', 'b', 'e', 'A', 'z', '_', '.', '"', '\\', '\n', ' ') },
    {
      weight: 2,
      arbitrary: fc.constantFrom('é', '\u0301', '\u030a', 'Å', '\u212b', '\ufb01', 'ｅ', 'ß', '😀', '\ud800', 'ǅ', 'ő'),
    },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) },
  );
  const text = fc.string({ unit, maxLength: 6 });
  const leaf = fc.oneof(
    text,
    fc.double(),
    fc.constantFrom(-0, 0, 1e21, Number.NaN, Infinity, 5e-324),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.constantFrom(new Date(0), 1n, () => 0),
  );
  const { value } = fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leaf,
      fc.array(tie('value'), { maxLength: 4 }),
      fc.array(tie('value'), { maxLength: 4 }).map((a) => {
        // Empty slots: refused, since JSON has no form for them.
        const sparse = [...a];
        if (sparse.length > 1) delete sparse[sparse.length % 2];
        return sparse;
      }),
      fc.dictionary(text, tie('value'), { maxKeys: 5 }),
      // Past the insertion-sort size.
      fc.dictionary(text, leaf, { minKeys: 10, maxKeys: 20 }),
      fc
        .dictionary(text, tie('value'), { maxKeys: 3 })
        .map((d) => Object.assign(Object.create(null) as Record<string, unknown>, d)),
    ),
  }));

  it('gives the same text, or the same refusal at the same path', () => {
    fc.assert(
      fc.property(value, (v) => {
        const reference = outcome(() => {
          const out: string[] = [];
          referenceWrite(v, '$', 0, out);
          return out.join('');
        });
        expect(outcome(() => canonicalJson(v))).toEqual(reference);
      }),
      { numRuns: 3_000 },
    );
  });

  it('gives the same bytes as JSON.stringify for plain JSON of NFC text', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const text = canonicalJson(v);
        const out: string[] = [];
        referenceWrite(v, '$', 0, out);
        expect(text).toBe(out.join(''));
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(v)));
      }),
      { numRuns: 1_000 },
    );
  });
});

describe('canonicalJson with sparse arrays', () => {
  it('refuses an empty slot instead of writing invalid JSON', () => {
    // eslint-disable-next-line no-sparse-arrays
    expect(() => canonicalJson({ a: [, 1] })).toThrow(/\$\.a\[0\].*empty array slot/);
  });
});
