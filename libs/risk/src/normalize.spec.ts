import fc from 'fast-check';
import {
  foldText,
  latinSkeleton,
  normalizeForMatching,
  segmentWithIcu,
  segmentWords,
  stripMarks,
} from './normalize.js';

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
