// Text reaches the classifier with invisible characters and in any case: a label of the lexicon that is high as written
// must stay high, naming the same word, however much zero-width, bidi and case noise it carries.
import fc from 'fast-check';
import { HIGH_RISK_CONCEPTS } from './lexicon.js';
import { RiskClassifier, type RiskInput } from './risk-classifier.js';

const classifier = new RiskClassifier();

function tap(target_text: string): RiskInput {
  return { tool: 'device.tap', args: {}, target_text, foreground_package: 'com.example.messages' };
}

/** The words a label was judged high on, without the note on look-alike letters. */
function wordReasons(text: string): string[] {
  return classifier
    .classify(tap(text))
    .reasons.filter((r) => r.startsWith('target text means'))
    .map((r) => r.replace(/, written with look-alike letters from another script$/, ''));
}

const words = [...new Set(HIGH_RISK_CONCEPTS.flatMap((c) => Object.values(c.words).flat()))];
const labels = words.filter((w) => classifier.classify(tap(w)).level === 'high');

const ZERO_WIDTH = ['\u200B', '\u200C', '\u200D', '\u2060', '\uFEFF', '\u00AD'];
// U+200E/F, U+061C, the embeddings and overrides U+202A–E, and the isolates U+2066–9.
const BIDI = ['\u200E', '\u200F', '\u061C', '\u202A', '\u202B', '\u202C', '\u202D', '\u202E'];
const ISOLATES = ['\u2066', '\u2067', '\u2068', '\u2069'];
const noiseChar = fc.constantFrom(...ZERO_WIDTH, ...BIDI, ...ISOLATES);

/** Per code point of the label: upper, lower or kept case, and up to two noise characters before it. */
const noisy = fc.constantFrom(...labels).chain((label) => {
  const chars = [...label];
  return fc
    .tuple(
      fc.array(fc.tuple(fc.constantFrom('upper', 'lower', 'keep'), fc.array(noiseChar, { maxLength: 2 })), {
        minLength: chars.length,
        maxLength: chars.length,
      }),
      fc.array(noiseChar, { maxLength: 3 }),
    )
    .map(([perChar, tail]) => ({
      label,
      text:
        chars
          .map((c, i) => {
            const [mode, noise] = perChar[i]!;
            const cased = mode === 'upper' ? c.toUpperCase() : mode === 'lower' ? c.toLowerCase() : c;
            return noise.join('') + cased;
          })
          .join('') + tail.join(''),
    }));
});

describe('high labels under noise (property)', () => {
  it('covers the lexicon: nearly every listed word is high on its own', () => {
    expect(labels.length).toBeGreaterThan(0.95 * words.length);
  });

  it('keeps every high label high, naming the same words, with zero-width, bidi and case noise', () => {
    fc.assert(
      fc.property(noisy, ({ label, text }) => {
        expect(classifier.classify(tap(text)).level).toBe('high');
        for (const reason of wordReasons(label)) expect(wordReasons(text)).toContain(reason);
      }),
      { numRuns: 3_000 },
    );
  });

  it('keeps every high label high when the whole label is upper-cased and wrapped in isolates', () => {
    for (const label of labels) {
      expect([label, classifier.classify(tap(`\u2067${label.toUpperCase()}\u2069\u200F`)).level]).toEqual([
        label,
        'high',
      ]);
    }
  });
});
