// Properties of the classifier over arbitrary input: it never throws, always answers within the wire contract, and is
// deterministic (the same call always gets the same verdict, in a fresh classifier too).
import fc from 'fast-check';
import { classifyLines } from './classify-lines.js';
import { MAX_REASON_LENGTH, MAX_REASONS, RiskClassifier, classifyRisk, type RiskInput } from './risk-classifier.js';

const RUNS = 2_000;

// Any UTF-16 code unit, lone surrogates included, and the characters this classifier cares about most.
const awkward = fc.constantFrom(
  '\u200B',
  '\u200D',
  '\u00AD',
  '\u202E',
  '\uFEFF',
  '\uD800',
  '\uDFFF',
  'İ',
  'ı',
  'ß',
  'Σ',
  'ς',
  'е',
  '\u0301',
  'ـ',
  '\u05B0',
  '्',
  '่',
  ' ',
  '.',
  '_',
  "'",
);
const unit = fc.oneof(
  fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
  awkward,
);
const text = fc.oneof(
  fc.string({ unit, maxLength: 60 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.constantFrom('Send', 'Sender', '送信済み', 'ส่ง', 'Gửi', 'Confirm transfer', ''),
);
const pkg = fc.oneof(
  fc.constant(null),
  text,
  fc.constantFrom('com.example.bank', 'com.example.messages', 'com.android.settings'),
);
const tool = fc.oneof(
  text,
  fc.constantFrom('device.tap', 'device.type_text', 'device.press_key', 'device.toggle_setting', 'device.open_app'),
);
const args = fc.oneof(
  fc.object({ maxDepth: 4 }),
  fc.dictionary(fc.constantFrom('key', 'setting', 'text', 'action', '__proto__', 'constructor'), fc.anything()),
);
const input = fc.record(
  { tool, args, target_text: fc.option(text), foreground_package: pkg },
  { requiredKeys: ['tool', 'args'] },
) as fc.Arbitrary<RiskInput>;

const fresh = new RiskClassifier();

describe('classifyRisk (properties)', () => {
  it('never throws, answers within the contract, and gives the same verdict every time', () => {
    fc.assert(
      fc.property(input, (call) => {
        const first = classifyRisk(call);
        expect(['high', 'low', 'refused']).toContain(first.level);
        expect(first.reasons.length).toBeGreaterThan(0);
        expect(first.reasons.length).toBeLessThanOrEqual(MAX_REASONS);
        for (const r of first.reasons) expect(r.length).toBeLessThanOrEqual(MAX_REASON_LENGTH);
        expect(first.fix !== undefined).toBe(first.level === 'refused');
        expect(classifyRisk(call)).toEqual(first);
        expect(fresh.classify(call)).toEqual(first);
      }),
      { numRuns: RUNS },
    );
  });

  it('never throws on values that are not calls at all', () => {
    fc.assert(
      fc.property(fc.anything(), (value) => {
        const verdict = classifyRisk(value as RiskInput);
        expect(classifyRisk(value as RiskInput)).toEqual(verdict);
      }),
      { numRuns: RUNS },
    );
  });

  it('keeps a high-risk word high whatever plain words surround it', () => {
    const word = fc.stringMatching(/^[a-z]{1,8}$/);
    fc.assert(
      fc.property(fc.array(word, { maxLength: 4 }), fc.array(word, { maxLength: 4 }), (before, after) => {
        const target_text = [...before, 'Delete', ...after].join(' ');
        const verdict = classifyRisk({
          tool: 'device.tap',
          args: {},
          target_text,
          foreground_package: 'com.example.messages',
        });
        expect(verdict.reasons).toContain('target text means delete or remove: "delete" (English)');
      }),
      { numRuns: RUNS },
    );
  });
});

describe('classifyLines (properties)', () => {
  it('answers every non-blank line with one JSON line and never throws', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.string({ unit, maxLength: 80 }),
            input.map((c) => JSON.stringify(c) ?? ''),
          ),
          { maxLength: 5 },
        ),
        (lines) => {
          const out = classifyLines(lines);
          expect(out).toHaveLength(lines.filter((l) => l.trim() !== '').length);
          for (const l of out) expect(typeof JSON.parse(l)).toBe('object');
        },
      ),
      { numRuns: RUNS },
    );
  });
});
