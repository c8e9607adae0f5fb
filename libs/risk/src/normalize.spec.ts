import fc from 'fast-check';
import {
  cyrillicSkeleton,
  findDisguises,
  foldCut,
  foldedLengthBound,
  foldText,
  foldTextFully,
  hasCyrillicOrGreek,
  hasUnspacedScript,
  hasVisibleText,
  latinSkeleton,
  normalizeForMatching,
  segmentWithIcu,
  segmentWords,
  stripMarks,
  stripMarksFully,
  visualOrder,
} from './normalize.js';
import { HIGH_RISK_CONCEPTS, READ_ONLY_NEIGHBOURS, READ_ONLY_PHRASES } from './lexicon.js';

describe('normalizeForMatching', () => {
  it.each([
    ['folds full-width forms (NFKC)', 'ＳＥＮＤ', 'send'],
    ['folds half-width katakana (NFKC)', 'ｲﾝｽﾄｰﾙ', 'インストール'],
    ['folds ligatures (NFKC)', 'ﬁnance', 'finance'],
    ['lower-cases', 'Send', 'send'],
    ['strips Latin diacritics', 'Envíar', 'enviar'],
    ['strips Latin diacritics in lower case too', 'envíar', 'enviar'],
    ['leaves unaccented text alone', 'enviar', 'enviar'],
    ['folds a decomposed accent like a composed one', 'Enve\u0301r', 'enver'],
    ['reads Turkish dotted capital İ as i', 'SİL', 'sil'],
    ['reads Turkish dotless ı as i', 'Sıfırla', 'sifirla'],
    ['reads German ß as ss', 'Straße', 'strasse'],
    ['reads German capital ẞ as ss', 'STRAẞE', 'strasse'],
    ['maps Polish ł, which does not decompose', 'Zapłać', 'zaplac'],
    ['maps Vietnamese đ and strips its tones', 'Đặt hàng', 'dat hang'],
    ['folds Greek final sigma and tonos', 'ΟΔΟΣ οδός', 'οδοσ οδοσ'],
    ['strips Greek tonos', 'Αποστολή', 'αποστολη'],
    ['strips Cyrillic diaeresis (ё → е)', 'Удалённые', 'удаленные'],
    ['keeps Devanagari marks', 'हटाएं', 'हटाएं'],
    ['keeps Thai marks', 'ส่ง', 'ส่ง'],
    ['composes Hangul jamo and keeps the syllables', '\u1107\u1169\u1102\u1162\u1100\u1175', '보내기'],
    ['drops Arabic harakat and reads hamza alef as alef', 'إرْسَال', 'ارسال'],
    ['drops the Arabic tatweel', 'ارســال', 'ارسال'],
    ['drops Hebrew niqqud', 'שְׁלַח', 'שלח'],
    ['reads Turkish capital I and dotless ı alike', 'SIFIRLA Sıfırla', 'sifirla sifirla'],
    ['folds Greek capitals with tonos and final sigma', 'ΑΠΟΣΤΟΛΉ Πληρωμής', 'αποστολη πληρωμησ'],
    ['drops Greek dialytika', 'Ακυρώΐ', 'ακυρωι'],
    ['drops Arabic harakat and tatweel inside bidi marks', '\u200Fادْفَــع\u200F', 'ادفع'],
    ['removes emoji inside a word', 'S😀end', 'send'],
    ['removes skin-tone emoji and flags', '👍🏽 Pay 🇪🇺', ' pay '],
    ['removes the keycap mark', '1️⃣', '1'],
    ['removes control characters other than white space', 'Se\u0007n\u0000d\tnow', 'send\tnow'],
    ['removes C1 control characters', 'Pa\u0085y\u009B', 'pa\u0085y'],
  ])('%s', (_name, input, expected) => {
    expect(normalizeForMatching(input)).toBe(expected);
  });

  it.each([
    ['zero-width space', '\u200B'],
    ['zero-width non-joiner', '\u200C'],
    ['zero-width joiner', '\u200D'],
    ['byte order mark', '\uFEFF'],
    ['soft hyphen', '\u00AD'],
    ['word joiner', '\u2060'],
    ['left-to-right mark', '\u200E'],
    ['right-to-left mark', '\u200F'],
    ['Arabic letter mark', '\u061C'],
    ['right-to-left override', '\u202E'],
    ['first-strong isolate', '\u2068'],
    ['variation selector', '\uFE0F'],
  ])('removes the %s', (_name, char) => {
    expect(normalizeForMatching(`s${char}e${char}nd`)).toBe('send');
  });

  it('removes bidi embeddings around a word', () => {
    expect(normalizeForMatching('\u202Bsend\u202C \u2066pay\u2069')).toBe('send pay');
  });

  it('never throws on lone surrogates and keeps them', () => {
    expect(normalizeForMatching('a\uD800b')).toBe('a\uD800b');
  });

  it('is the two layers composed: foldText keeps Latin diacritics, stripMarks removes them', () => {
    expect(foldText('ENVÍAR')).toBe('envíar');
    expect(stripMarks(foldText('ENVÍAR'))).toBe('enviar');
    expect(foldText('Gửi')).toBe('gửi');
  });
});

describe('segmentWords', () => {
  it.each([
    ['splits at spaces and drops punctuation', 'Send money!', ['Send', 'money']],
    ['keeps a compound whole', 'Postcode', ['Postcode']],
    ['splits at hyphens', 'sign-in', ['sign', 'in']],
    ['splits French elisions at the apostrophe', "s'abonner à l'offre", ['s', 'abonner', 'à', 'l', 'offre']],
    ['splits at a typographic apostrophe too', 'l\u2019achat', ['l', 'achat']],
    ['keeps underscores inside a word (Unicode rules)', 'send_money', ['send_money']],
    ['segments Chinese without spaces', '发送消息', ['发送', '消息']],
    ['segments Japanese without spaces', '送信する', ['送信', 'する']],
    ['segments Thai without spaces', 'ส่งข้อความ', ['ส่ง', 'ข้อความ']],
    ['keeps Korean words between spaces', '메시지 보내기', ['메시지', '보내기']],
    ['drops emoji and symbols', '✉️ → Send', ['Send']],
    ['returns nothing for punctuation only', ' … !! ', []],
    ['splits an amount from the verb it is written against', 'Pay49.99', ['Pay', '49.99']],
    ['splits an amount before the verb', '49,99zahlen', ['49,99', 'zahlen']],
    ['drops currency symbols next to a verb', 'Pay €49.99', ['Pay', '49.99']],
    ['keeps a Hindi amount apart from the verb', '₹499 का भुगतान करें', ['499', 'का', 'भुगतान', 'करें']],
    ['segments Khmer without spaces', 'ផ្ញើសារ', ['ផ្ញើ', 'សារ']],
    ['segments Lao without spaces', 'ສົ່ງຂໍ້ຄວາມ', ['ສົ່ງ', 'ຂໍ້ຄວາມ']],
    ['segments Myanmar without spaces', 'ပေးပို့မည်', ['ပေး', 'ပို့', 'မည်']],
  ])('%s', (_name, input, expected) => {
    expect(segmentWords(input)).toEqual(expected);
  });
});

describe('latinSkeleton', () => {
  it('reads a word mixing Cyrillic look-alikes into Latin as Latin', () => {
    expect(latinSkeleton('s\u0435nd')).toBe('send');
  });

  it('reads a Cyrillic word made only of look-alike letters as Latin', () => {
    expect(latinSkeleton('\u0440\u0430\u0443')).toBe('pay');
  });

  it('leaves plain Latin and ordinary Russian alone', () => {
    expect(latinSkeleton('send')).toBeNull();
    expect(latinSkeleton('отправить')).toBeNull();
  });
});

describe('cyrillicSkeleton', () => {
  it('reads Latin look-alikes inside a Cyrillic word as Cyrillic', () => {
    expect(cyrillicSkeleton('oтпpaвить')).toBe('отправить');
  });

  it('leaves words that do not mix Latin into Cyrillic alone', () => {
    expect(cyrillicSkeleton('отправить')).toBeNull();
    expect(cyrillicSkeleton('send')).toBeNull();
  });
});

describe('hasVisibleText', () => {
  it.each([
    ['empty text', ''],
    ['white space', ' \t\n'],
    ['zero-width and bidi controls', '\u200B\u200E\u202E\u2066\u2069'],
    ['control characters', '\u0000\u0007\u001B\u007F\u009B'],
    ['a lone combining mark', '\u0301'],
    ['unpaired surrogates', '\uD800\uDFFF'],
  ])('is false for %s', (_name, text) => {
    expect(hasVisibleText(text)).toBe(false);
  });

  it.each([
    ['a letter', '\u200Ba'],
    ['a digit', '1'],
    ['a symbol', '€'],
    ['an emoji', '😀'],
  ])('is true for %s', (_name, text) => {
    expect(hasVisibleText(text)).toBe(true);
  });
});

describe('visualOrder', () => {
  it('is null without a right-to-left override', () => {
    expect(visualOrder('Send \u202Bمرحبا\u202C')).toBeNull();
  });

  it('reverses what follows the override, up to the end of the text', () => {
    expect(visualOrder('\u202Ednes')).toBe('send');
  });

  it('reverses only up to the pop of the override', () => {
    expect(visualOrder('Tap \u202EyaP\u202C now')).toBe('Tap Pay\u202C now');
  });

  it('keeps accents on their letters', () => {
    expect(visualOrder('\u202Ea\u0301b')).toBe('ba\u0301');
  });
});

describe('findDisguises', () => {
  it('finds a right-to-left override', () => {
    expect(findDisguises('\u202Ednes')).toEqual([{ kind: 'override' }]);
  });

  it('finds a Latin word with a Cyrillic look-alike letter', () => {
    expect(findDisguises('Please s\u0435nd it')).toEqual([{ kind: 'mixed-script', word: 's\u0435nd' }]);
  });

  it('finds a Cyrillic word with Latin look-alike letters', () => {
    expect(findDisguises('oтпpaвить')).toEqual([{ kind: 'mixed-script', word: 'oтпpaвить' }]);
  });

  it('reports at most three mixed-script words', () => {
    expect(findDisguises(Array(10).fill('s\u0435nd').join(' '))).toHaveLength(3);
  });

  it.each([
    ['scripts mixed between words', 'Sberbank СберБанк'],
    ['a Greek letter with no Latin look-alike in a unit', '5µg 10kΩ'],
    ['plain Russian', 'Отправить'],
    ['plain ASCII', 'Send'],
  ])('finds nothing in %s', (_name, text) => {
    expect(findDisguises(text)).toEqual([]);
  });
});

describe('segmentWords (property)', () => {
  // The fast path for plain spaced-script text must give exactly what Intl.Segmenter gives.
  const alphabet = fc.constantFrom(
    ..."aZéß0 9\t\u00A0\u0301\u0308-.'’_,:;!?@#".split(''),
    ...'сЖёΣςάعربيةשלוםहटाएंक्षअ보내기한글ส่งข้อ发送確認すカナ١٢'.split(''),
    '😀',
    '\u200B',
    '\u200D',
    'ǅ',
    'ª',
    'Ⅻ',
    '½',
  );
  it('gives the same words on its fast path as Intl.Segmenter does', () => {
    fc.assert(
      fc.property(fc.string({ unit: alphabet, maxLength: 24 }), (text) => {
        expect(segmentWords(text)).toEqual(segmentWithIcu(text));
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('segmentWords fast path (scripts written with spaces)', () => {
  // Scripts whose words the fast path reads without Intl.Segmenter, and Hangul syllables, which ICU keeps together
  // per run but splits from other letters and digits.
  const SCRIPTS = [
    'Latin',
    'Greek',
    'Cyrillic',
    'Armenian',
    'Georgian',
    'Ethiopic',
    'Arabic',
    'Hebrew',
    'Devanagari',
    'Bengali',
    'Gurmukhi',
    'Gujarati',
    'Oriya',
    'Tamil',
    'Telugu',
    'Kannada',
    'Malayalam',
    'Sinhala',
  ];
  const scripts = SCRIPTS.map((s) => `\\p{sc=${s}}`).join('');
  const letter = new RegExp(`^[\\p{L}&&[${scripts}]]$`, 'v');
  const digit = /^\p{Nd}$/u;
  const mark = new RegExp(`^[\\p{M}&&[\\p{sc=Inherited}${scripts}]]$`, 'v');
  const letters: string[] = [];
  const digits: string[] = [];
  const marks: string[] = [];
  for (let cp = 0; cp < 0x110000; cp++) {
    if (cp >= 0xd800 && cp < 0xe000) continue;
    const c = String.fromCodePoint(cp);
    if (letter.test(c)) letters.push(c);
    else if (digit.test(c)) digits.push(c);
    else if (mark.test(c)) marks.push(c);
  }
  const hangul = Array.from({ length: 0xd7a3 - 0xac00 + 1 }, (_, i) => String.fromCharCode(0xac00 + i));

  function sameAsIcu(texts: readonly string[]): string[] {
    return texts.filter((t) => JSON.stringify(segmentWords(t)) !== JSON.stringify(segmentWithIcu(t)));
  }

  it('reads every letter of those scripts as Intl.Segmenter does, alone and beside others', () => {
    expect(letters.length).toBeGreaterThan(4000);
    const texts = letters.flatMap((l) => [l, `a${l}`, `${l}1`, `1${l}`, `${l}\u0301`, `가${l}`, `${l}가 ${l}`]);
    expect(sameAsIcu(texts)).toEqual([]);
  });

  it('reads every digit and every mark of those scripts as Intl.Segmenter does', () => {
    const texts = [
      ...digits.flatMap((d) => [d, `a${d}`, `${d}a`, `가${d}`, `${d}\u0301`]),
      ...marks.flatMap((m) => [`a${m}`, `a${m}b`, `1${m}`, `${m}가`, `क${m}क`]),
    ];
    expect(sameAsIcu(texts)).toEqual([]);
  });

  it('reads Hangul syllables as Intl.Segmenter does, in runs and beside other letters and digits', () => {
    const sample = hangul.filter((_, i) => i % 13 === 0);
    const texts = sample.flatMap((h) => [h, `${h}${h}${h}`, `ab${h}12cd`, `${h}é ${h}`, `1${h}`]);
    expect(sameAsIcu(texts)).toEqual([]);
  });

  it('reads every word of the lexicon as Intl.Segmenter does', () => {
    const words = [
      ...HIGH_RISK_CONCEPTS.flatMap((c) => Object.values(c.words).flatMap((w) => w ?? [])),
      ...Object.values(READ_ONLY_PHRASES).flatMap((w) => w ?? []),
      ...Object.values(READ_ONLY_NEIGHBOURS).flatMap((n) => [...(n.before ?? []), ...(n.after ?? [])]),
    ];
    expect(sameAsIcu(words.map(foldText))).toEqual([]);
  });

  it('gives the same words on random text of those scripts as Intl.Segmenter does', () => {
    const unit = fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(...letters) },
      { weight: 3, arbitrary: fc.constantFrom(' ', '\t', '\u00A0', '\u3000', '\n') },
      { weight: 2, arbitrary: fc.constantFrom(...digits) },
      { weight: 2, arbitrary: fc.constantFrom(...marks) },
      { weight: 2, arbitrary: fc.constantFrom(...hangul) },
      // Characters that send text to Intl.Segmenter: punctuation, joiners, Thai, jamo, a mark of another script.
      { weight: 1, arbitrary: fc.constantFrom('.', "'", '-', '_', '\u200D', '\u200C', 'ส', '\u1100', '\u{16FF0}') },
    );
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 24 }), (text) => {
        expect(segmentWords(text)).toEqual(segmentWithIcu(text));
      }),
      { numRuns: 3_000 },
    );
  });
});

describe('segmentWords piece by piece (text that needs Intl.Segmenter)', () => {
  // Intl.Segmenter iterated the plain way, split at apostrophes and amounts as segmentWords documents.
  const segmenter = new Intl.Segmenter('und', { granularity: 'word' });
  function iterated(text: string): string[] {
    const words = [...segmenter.segment(text)]
      .filter((s) => s.isWordLike)
      .flatMap((s) => s.segment.split(/['\u2019]+/).filter((w) => w !== ''));
    if (!/\p{Nd}/u.test(text)) return words;
    return words.flatMap((w) => w.split(/(?<=\p{L}\p{M}*)(?=\p{Nd})|(?<=\p{Nd})(?=\p{L})/u));
  }
  const unit = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.constantFrom(
        'ส่งข้อความ',
        'ชำระเงิน',
        '确认付款',
        '今すぐ購入する',
        'ផ្ញើសារ',
        'ສົ່ງ',
        'ပေးပို့မည်',
        '送信済み',
      ),
    },
    { weight: 4, arbitrary: fc.constantFrom(' ', '  ', '\n', '\u00A0', '\u3000', '\u202F') },
    { weight: 2, arbitrary: fc.constantFrom('Pay', '49.99', '€', "l'achat", 'sign-in', '보내기', 'a1', '!', '…') },
    { weight: 1, arbitrary: fc.constantFrom('\u0301', '\u200D', '\u200B', '👍', '\u{1F3FD}', '\uFF9E', '\u0E48') },
  );

  it('gives, piece by piece and again from kept pieces, what Intl.Segmenter gives for the whole text', () => {
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 12 }), (units) => {
        const text = units.join('');
        const expected = segmentWithIcu(text);
        expect(segmentWords(text)).toEqual(expected);
        expect(segmentWords(text)).toEqual(expected);
      }),
      { numRuns: 3_000 },
    );
  });

  it('steps through the segments that iterating Intl.Segmenter gives', () => {
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 12 }), (units) => {
        const text = units.join('');
        expect(segmentWithIcu(text)).toEqual(iterated(text));
      }),
      { numRuns: 2_000 },
    );
  });

  it('parts pieces where letters meet digits as the segmenter and the amounts rule would, for every letter', () => {
    const digits = ['1', '๑', '١', '१', '၁'];
    const letters: string[] = [];
    for (let cp = 0; cp < 0x10000; cp += 3) {
      const c = String.fromCharCode(cp);
      if (/\p{L}/u.test(c)) letters.push(c);
    }
    const differ = letters.flatMap((l, i) => {
      const d = digits[i % digits.length] as string;
      return [`ส่ง${l}${d}`, `${d}${l}确认`, `a${l}${d}\u0301x`, `${d}\u0E48${l}`].filter(
        (t) => JSON.stringify(segmentWords(t)) !== JSON.stringify(segmentWithIcu(t)),
      );
    });
    expect(differ).toEqual([]);
  });

  it('keeps what the segmenter returned from being changed through a result', () => {
    const first = segmentWords('确认付款 确认付款');
    first.push('changed');
    first[0] = 'changed';
    expect(segmentWords('确认付款 确认付款')).toEqual(['确认', '付款', '确认', '付款']);
  });
});

describe('normalisation shortcuts, character by character', () => {
  // The shortcuts read facts about each character from a table; every character of the BMP (lone surrogates too),
  // alone and in company, gets from them what the full definitions give.
  const all = Array.from({ length: 0x10000 }, (_, i) => String.fromCharCode(i));

  it('fold every character as the full fold does', () => {
    const differ = all.filter((c) =>
      [c, `A${c}b`, `${c}\u0301`, `Σ${c}`, `${c}Σ`].some((t) => foldText(t) !== foldTextFully(t)),
    );
    expect(differ).toEqual([]);
  });

  it('strip marks from every character as the full strip does, folded or not', () => {
    const differ = all.filter((c) =>
      [c, `a${c}`, `${c}\u0301`, `${c}\u1161`, `क${c}`, `${c}\u093C`, `क\u093C${c}`, `é${c}`, foldText(`${c}z`)].some(
        (t) => stripMarks(t) !== stripMarksFully(t),
      ),
    );
    expect(differ).toEqual([]);
  });

  it('fold and strip random runs of letters and marks as the full definitions do', () => {
    const marks = all.filter((c) => /\p{M}/u.test(c));
    const letters = all.filter(
      (c, i) => /[\p{L}\p{N}]/u.test(c) && (i % 5 === 0 || /[\p{sc=Latn}\p{sc=Grek}\p{sc=Cyrl}]/u.test(c)),
    );
    const unit = fc.oneof(
      fc.constantFrom(...marks),
      fc.constantFrom(...letters),
      fc.constantFrom('Σ', 'ß', 'İ', ' ', '\u1161'),
    );
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 8 }), (units) => {
        const text = units.join('');
        expect(foldText(text)).toBe(foldTextFully(text));
        for (const t of [text, foldText(text), text.normalize('NFC')]) expect(stripMarks(t)).toBe(stripMarksFully(t));
      }),
      { numRuns: 5_000 },
    );
  });

  it('tell visible characters and scripts as their patterns do', () => {
    const invisible = /^[\p{White_Space}\p{Cc}\p{Cf}\p{Cs}\p{Cn}\p{M}\p{Default_Ignorable_Code_Point}]*$/u;
    const cyrillicOrGreek = /[\p{Script=Cyrillic}\p{Script=Greek}]/u;
    const unspaced =
      /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Hangul}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;
    const differ = all.filter(
      (c) =>
        hasVisibleText(c) === invisible.test(c) ||
        hasCyrillicOrGreek(`a${c}`) !== cyrillicOrGreek.test(c) ||
        hasUnspacedScript(`${c}1`) !== unspaced.test(c),
    );
    expect(differ).toEqual([]);
  });

  it('tell how long every character folds, and bound the fold of text by it', () => {
    expect(all.filter((c) => foldedLengthBound(c) !== foldTextFully(c).length)).toEqual([]);
    expect(foldedLengthBound('\uFDFA\u{1D400}\u{1F600}')).toBe(19);
    const sample = all.filter((c, i) => i % 7 === 0 || foldTextFully(c).length !== 1);
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...sample, 'Σ', 'ß', '\u0301', '\u3099', '\u1161'), { maxLength: 12 }),
        (chars) => {
          const text = chars.join('');
          expect(foldText(text).length).toBeLessThanOrEqual(foldedLengthBound(text));
        },
      ),
      { numRuns: 3_000 },
    );
  });

  it('cut text where its characters fold past a length, never inside a character', () => {
    expect(foldCut('\uFDFA'.repeat(10), 40)).toEqual({ at: 2, size: 36 });
    expect(foldCut('ab\u{1D400}c', 2)).toEqual({ at: 2, size: 2 });
    expect(foldCut('ab\u{1D400}c', 3)).toEqual({ at: 4, size: 3 });
    expect(foldCut('short', 2000)).toEqual({ at: 5, size: 5 });
  });

  it('read text with characters outside the BMP by the patterns themselves', () => {
    expect(hasVisibleText('\u200B\u{E0001}')).toBe(false);
    expect(hasVisibleText('\u200B\u{1D400}')).toBe(true);
    expect(hasUnspacedScript('a\u{20000}')).toBe(true);
    expect(hasCyrillicOrGreek('a\u{1D6A8}')).toBe(false);
    expect(foldText('\u{1D400}\u{1F600}b')).toBe('ab');
  });
});
