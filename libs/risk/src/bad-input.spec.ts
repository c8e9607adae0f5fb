// Bad target text: each kind is classified or refused with a reason, never a crash, and within a bounded amount of work.
import { foldText, MAX_FOLD_GROWTH } from './normalize.js';
import {
  MAX_FOLDED_TARGET_TEXT_LENGTH,
  MAX_TARGET_TEXT_LENGTH,
  RiskClassifier,
  type RiskInput,
} from './risk-classifier.js';

const classifier = new RiskClassifier();
const OVERRIDE_REASON =
  'target text contains a right-to-left override (U+202E), which shows its letters in another order than they are stored';
const NO_TARGET_REASON =
  'tool "device.tap" activates an element, and no target text says which one (it could be Send or Pay); ' +
  'resolve it from the latest observation and pass its text';

function tap(target_text: string): RiskInput {
  return { tool: 'device.tap', args: {}, target_text, foreground_package: 'com.example.messages' };
}

function repeatTo(unit: string, length: number): string {
  return unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
}

describe('bad target text', () => {
  describe('very long labels', () => {
    it.each([
      ['Latin words', 'open the map '],
      ['Thai without spaces', 'แผนที่ข้อความ'],
      ['Chinese without spaces', '打开地图消息'],
      ['zero-width characters between letters', 'a\u200B'],
      ['stacked combining marks', 'a\u0301\u0302\u0303\u0304'],
      ['characters NFKC expands eighteenfold', '\uFDFA'],
      ['look-alike letters in every word', 'm\u0430p '],
    ])('are high, say that only the first part was read, and stay bounded: %s', (_name, unit) => {
      const text = repeatTo(unit, 10_000);
      const verdict = classifier.classify(tap(text));
      expect(verdict.level).toBe('high');
      expect(verdict.reasons[0]).toBe(
        `target text is 10000 characters long; only the first ${MAX_TARGET_TEXT_LENGTH} were read, ` +
          'and no element label is that long',
      );
      // That only the first part is read is shown by the test below; the time it takes is measured by bench:risk.
    });

    it('are high and say so when made of thousands of different characters', () => {
      // Every character here is new to the classifier: what it knows of each is worked out as it reads them.
      const text = Array.from({ length: 10_000 }, (_, i) => String.fromCharCode(0x4e00 + i)).join('');
      const verdict = classifier.classify(tap(text));
      expect(verdict.level).toBe('high');
      expect(verdict.reasons[0]).toBe(
        `target text is 10000 characters long; only the first ${MAX_TARGET_TEXT_LENGTH} were read, ` +
          'and no element label is that long',
      );
    });

    it('does not read past the limit', () => {
      const text = `${repeatTo('open the map ', MAX_TARGET_TEXT_LENGTH)} Delete everything`;
      expect(classifier.classify(tap(text)).reasons.join('\n')).not.toContain('delete');
    });
  });

  describe('labels that NFKC makes many times longer', () => {
    const foldedReason =
      `target text is over ${MAX_FOLDED_TARGET_TEXT_LENGTH} characters once normalised (NFKC) character by ` +
      `character; only its start, up to ${MAX_FOLDED_TARGET_TEXT_LENGTH} of them, was read, and no element label is that long`;

    it('are high when 10,000 characters of the worst of them are sent, saying both lengths', () => {
      // U+FDFA folds to 18 characters: the 2,000 read would be 36,000 to match.
      const verdict = classifier.classify(tap('\uFDFA'.repeat(10_000)));
      expect(verdict.level).toBe('high');
      expect(verdict.reasons).toEqual([
        `target text is 10000 characters long; only the first ${MAX_TARGET_TEXT_LENGTH} were read, ` +
          'and no element label is that long',
        foldedReason,
      ]);
    });

    it('are cut after folding even when short before it, and what follows the cut is not read', () => {
      const text = `${'\uFDFA'.repeat(150)} Delete everything`;
      expect(text.length).toBeLessThan(MAX_TARGET_TEXT_LENGTH);
      const verdict = classifier.classify(tap(text));
      expect(verdict.level).toBe('high');
      expect(verdict.reasons[0]).toBe(foldedReason);
      expect(verdict.reasons.join('\n')).not.toContain('delete');
    });

    it('are read whole while they fold within the bound', () => {
      // U+3300 (㌀) folds to four katakana: 400 characters here.
      expect(classifier.classify(tap(`${'\u3300'.repeat(100)} 送信`)).reasons).toEqual([
        'target text means send: "送信" (Japanese)',
      ]);
    });

    it('are cut between characters when they mix in characters outside the BMP', () => {
      const text = '\uFDFA\u{1D5B2}'.repeat(600);
      expect(text.length).toBeLessThan(MAX_TARGET_TEXT_LENGTH);
      expect(classifier.classify(tap(text))).toEqual({
        level: 'high',
        reasons: [foldedReason],
      });
    });

    it('never fold one character to more than MAX_FOLD_GROWTH', () => {
      const growth = (cp: number) => {
        const c = String.fromCodePoint(cp);
        return foldText(c).length / c.length;
      };
      const over: number[] = [];
      for (let cp = 0; cp < 0x110000; cp++)
        if (!(cp >= 0xd800 && cp < 0xe000) && growth(cp) > MAX_FOLD_GROWTH) over.push(cp);
      expect(over).toEqual([]);
      expect(growth(0xfdfa)).toBe(MAX_FOLD_GROWTH);
    });
  });

  describe('labels of only control or invisible characters', () => {
    it.each([
      ['control characters', '\u0000\u0007\u001B\u007F'],
      ['zero-width and bidi controls', '\u200B\u200E\u200F\u202E\u2066\u2069'],
      ['a lone combining mark', '\u0301'],
      ['unpaired surrogates', '\uD800\uDFFF'],
    ])('make a tap high, since nothing says what it activates: %s', (_name, text) => {
      expect(classifier.classify(tap(text))).toEqual({ level: 'high', reasons: [NO_TARGET_REASON] });
    });

    it('say so when the tool does not need a label', () => {
      const verdict = classifier.classify({ ...tap('\u0007\u200B'), tool: 'device.scroll' });
      expect(verdict.level).toBe('low');
      expect(verdict.reasons[0]).toBe('target text has only invisible or control characters, so it names nothing');
    });
  });

  describe('mixed scripts', () => {
    it('names every risky word, whatever its script', () => {
      expect(classifier.classify(tap('Send / Отправить / 送信')).reasons).toEqual([
        'target text means send: "send" (English)',
        'target text means send: "отправить" (Russian)',
        'target text means send: "送信" (Japanese)',
      ]);
    });

    it('leaves labels that mix scripts between words low', () => {
      expect(classifier.classify(tap('Sberbank Онлайн 5µg 10kΩ 東京 Tokyo')).level).toBe('low');
    });
  });

  describe('right-to-left overrides', () => {
    it('are high, and the word they disguise is named', () => {
      expect(classifier.classify(tap('\u202Eeteled')).reasons).toEqual([
        OVERRIDE_REASON,
        'target text means delete or remove: "delete" (English)',
      ]);
    });

    it('are high even when the hidden text is harmless', () => {
      expect(classifier.classify(tap('\u202Epam nepo')).reasons).toEqual([OVERRIDE_REASON]);
    });

    it('leave ordinary bidi marks and isolates alone', () => {
      expect(classifier.classify(tap('\u200Fפתח מפה\u200F \u2067خريطة\u2069')).level).toBe('low');
    });
  });

  describe('homoglyphs from another script', () => {
    it('read a Cyrillic letter inside a Latin word as Latin', () => {
      expect(classifier.classify(tap('P\u0430y now')).reasons).toEqual([
        'target text means pay: "pay" (English), written with look-alike letters from another script',
      ]);
    });

    it('read Latin letters inside a Cyrillic word as Cyrillic', () => {
      expect(classifier.classify(tap('Удaлить')).reasons).toEqual([
        'target text means delete or remove: "удалить" (Russian), written with look-alike letters from another script',
      ]);
    });

    it('make a mixed-script word that spells nothing listed high, naming it', () => {
      expect(classifier.classify(tap('Open m\u0430p')).reasons).toEqual([
        'target text has a word that mixes Latin with Cyrillic or Greek look-alike letters: "mаp"',
      ]);
    });
  });
});
