import { WordMatcher } from './word-matcher.js';

const matcher = new WordMatcher([
  // Khmer, Lao and Myanmar are not in the lexicon yet; deployment words show their segmentation reaches the lookup.
  { meaning: 'send', language: 'km', words: ['ផ្ញើ'] },
  { meaning: 'send', language: 'lo', words: ['ສົ່ງ'] },
  { meaning: 'pay', language: 'my', words: ['ငွေပေးချေ'] },
]);

function words(text: string): string[] {
  return matcher.match(text).map((m) => `${m.meaning}: ${m.word}${m.lookalike ? ' (look-alike)' : ''}`);
}

describe('WordMatcher', () => {
  describe('Vietnamese typed without diacritics', () => {
    it.each([
      ['Thanh toan', 'pay: thanh toán'],
      ['THANH TOAN NGAY', 'pay: thanh toán'],
      ['dat hang', 'buy or order: đặt hàng'],
      ['Gui tin nhan', 'send: gửi'],
      ['Mua', 'buy or order: mua'],
    ])('matches %s', (text, found) => {
      expect(words(text)).toContain(found);
    });

    it('still matches the accented words exactly', () => {
      expect(words('Thanh toán')).toEqual(['pay: thanh toán']);
    });

    it('does not read an accented harmless word as its unaccented risky twin', () => {
      expect(words('mùa thu')).toEqual([]);
      expect(words('Múa')).toEqual([]);
    });

    it('reads text unaccented only when no word carries a diacritic', () => {
      // `mùa` shows the text was typed with tones, so `thanh toan` is read as written: not the listed `thanh toán`.
      expect(words('thanh toan mùa')).toEqual([]);
    });

    it('keeps unaccented read-only phrases low', () => {
      expect(words('nguoi gui')).toEqual([]);
      expect(words('lich su thanh toan')).toEqual([]);
    });
  });

  describe('case folding', () => {
    it.each([
      ['Turkish dotted capital', 'SİL', 'delete or remove: sil'],
      ['Turkish plain capital', 'SIL', 'delete or remove: sil'],
      ['Greek capitals without tonos', 'ΑΠΟΣΤΟΛΗ', 'send: αποστολή'],
      ['German capitals', 'JETZT KAUFEN', 'buy or order: jetzt kaufen'],
    ])('matches a %s', (_name, text, found) => {
      expect(words(text)).toContain(found);
    });
  });

  describe('invisible characters', () => {
    it.each([
      ['right-to-left marks around Arabic', '\u200Fإرسال\u200F', 'send: إرسال'],
      ['isolates around Hebrew', '\u2067שלח\u2069', 'send: שלח'],
      ['a tatweel and harakat', 'إِرْسَــال', 'send: إرسال'],
      ['zero-width characters inside a word', 'S\u200Be\u200Cn\u200Dd\uFEFF', 'send: send'],
      ['emoji inside and around a word', '📨 Se😀nd', 'send: send'],
    ])('ignores %s', (_name, text, found) => {
      expect(words(text)).toContain(found);
    });
  });

  describe('scripts without spaces', () => {
    it.each([
      ['Thai', 'ส่งข้อความเลย', 'send: ส่ง'],
      ['Japanese', '今すぐ送信する', 'send: 送信'],
      ['Chinese', '立即发送消息', 'send: 发送'],
      ['Khmer', 'ផ្ញើសារ', 'send: ផ្ញើ'],
      ['Lao', 'ສົ່ງຂໍ້ຄວາມ', 'send: ສົ່ງ'],
      ['Myanmar', 'ငွေပေးချေမည်', 'pay: ငွေပေးချေ'],
    ])('finds a %s word inside a sentence', (_name, text, found) => {
      expect(words(text)).toContain(found);
    });

    it('reads words joined up in text with such a script, whatever their own script', () => {
      // A run of words is read joined up as well as spaced, and reaches a key whose starts are not keys themselves.
      const joining = new WordMatcher([
        { meaning: 'test', language: 'xx', words: ['a', 'ab'] },
        { meaning: 'test', language: 'th', words: ['ส่งab'] },
      ]);
      const found = (text: string) => joining.match(text).map((m) => m.word);
      expect(found('a b')).toEqual(['a']);
      expect(found('a b 送')).toEqual(['ab']);
      expect(found('ส่ง a-b')).toEqual(['ส่งab', 'ส่ง']);
      expect(found('x b a 送')).toEqual(['a']);
    });
  });

  describe('amounts and currency symbols next to a verb', () => {
    it.each([
      ['Pay €49.99', 'pay: pay'],
      ['Pay€49.99', 'pay: pay'],
      ['Pay49.99', 'pay: pay'],
      ['Pay $5.00 now', 'pay: pay'],
      ['₹499 का भुगतान करें', 'pay: भुगतान करें'],
      ['支付¥99', 'pay: 支付'],
      ['ชำระเงิน฿99', 'pay: ชำระเงิน'],
      ['Оплатить 499 ₽', 'pay: оплатить'],
    ])('matches %s', (text, found) => {
      expect(words(text)).toContain(found);
    });
  });

  describe('disguised text', () => {
    it('reads a right-to-left override in the order it is shown', () => {
      expect(words('\u202EyaP')).toEqual(['pay: pay']);
    });

    it('reads Latin look-alikes inside a Cyrillic word as Cyrillic', () => {
      expect(words('oтпpaвить')).toEqual(['send: отправить (look-alike)']);
    });

    it('reads Cyrillic look-alikes inside a Latin word as Latin', () => {
      expect(words('\u0405\u0435nd')).toEqual(['send: send (look-alike)']);
    });

    it('leaves ordinary Russian and Latin mixed between words alone', () => {
      expect(words('Сбербанк Online')).toEqual([]);
    });
  });
});
