import { financialScreenEvidence, MAX_SCREEN_TEXTS } from './financial-screen.js';
import { classifyRisk } from './risk-classifier.js';

describe('financialScreenEvidence', () => {
  it.each<[string, string[], string]>([
    ['a German IBAN in groups', ['Empfänger', 'DE89 3704 0044 0532 0130 00'], 'an IBAN'],
    ['a British IBAN without spaces', ['To: GB29NWBK60161331926819'], 'an IBAN'],
    ['a masked card number', ['Visa •••• 4242'], 'a masked card or account number'],
    ['a masked account number with stars', ['Checking ****1234'], 'a masked card or account number'],
    ['an account number under its label', ['Account number', '12345678'], 'an account number'],
    ['a Polish account number', ['Numer rachunku: 61 1090 1014 0000 0712 1981 2874'], 'an account number'],
    ['a Russian account number', ['Номер счёта 40817810099910004312'], 'an account number'],
    ['a balance above its amount', ['Available balance', '€1,204.50'], 'a balance'],
    ['a balance in the same text', ['Saldo: R$ 3.250,00'], 'a balance'],
    ['a Ukrainian balance', ['Залишок', '12 500,00 грн'], 'a balance'],
    ['a Japanese balance', ['残高', '¥120,000'], 'a balance'],
    ['a Chinese balance', ['余额 ¥88.00'], 'a balance'],
    ['an Indonesian account number', ['Nomor rekening', '1234 5678 90'], 'an account number'],
  ])('finds %s', (_, texts, evidence) => {
    expect(financialScreenEvidence(texts)).toBe(evidence);
  });

  it.each<[string, string[]]>([
    ['an ordinary chat', ['Alice', 'See you at 7', 'Send']],
    ['an IBAN-shaped string whose check digits fail', ['DE00 3704 0044 0532 0130 00']],
    ['a balance label without an amount', ['Balance your work and life']],
    ['an amount without a label', ['Lunch', '12.50']],
    ['a phone number', ['Call +1 555 123 4567']],
    ['an order number', ['Order 123456789 shipped']],
    ['nothing at all', []],
    ['values that are not text', [42 as unknown as string, null as unknown as string]],
  ])('finds nothing in %s', (_, texts) => {
    expect(financialScreenEvidence(texts)).toBeNull();
  });

  it(`reads at most ${MAX_SCREEN_TEXTS} texts, and long runs of mask or digit characters stay fast`, () => {
    const noise = ['x', '*', '•', '1', '1 ', 'Balance 1', 'Konto 1-'].map((s) => s.repeat(10_000));
    const texts = [
      ...Array.from({ length: MAX_SCREEN_TEXTS }, (_, i) => noise[i % noise.length]!),
      'GB29NWBK60161331926819',
    ];
    const started = process.hrtime.bigint();
    expect(financialScreenEvidence(texts.map((t) => `${t}z`))).not.toBe('an IBAN');
    // A guard against catastrophic backtracking, not a benchmark: the real figure is a few milliseconds.
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(2000);
  });
});

describe('classifyRisk: an unknown app judged by its screen', () => {
  const tap = (screen_text: string[] | null, foreground_package = 'com.example.unknownapp') =>
    classifyRisk({ tool: 'device.tap', args: {}, target_text: 'Open', foreground_package, screen_text });

  it('is high when the screen shows an IBAN, and the reason does not repeat the number', () => {
    const verdict = tap(['Transfer to', 'DE89 3704 0044 0532 0130 00']);
    expect(verdict.level).toBe('high');
    expect(verdict.reasons).toContain(
      'foreground app "com.example.unknownapp" is treated as a payment, banking, wallet or exchange app: its screen shows an IBAN',
    );
    expect(verdict.reasons.join('\n')).not.toMatch(/3704/);
  });

  it('is high when the screen shows a balance', () => {
    expect(tap(['Balance', '$2,310.07']).level).toBe('high');
  });

  it('is low when the screen shows nothing financial, and says it looked', () => {
    const verdict = tap(['Notes', 'Buy milk']);
    expect(verdict.level).toBe('low');
    expect(verdict.reasons).toContain(
      'foreground app "com.example.unknownapp" is not a payment, banking, wallet, exchange or system-settings app, and its screen shows no account number, IBAN or balance',
    );
  });

  it('is low without screen text, as before', () => {
    expect(tap(null).level).toBe('low');
  });

  it('reads screen text that is not an array of strings as absent, never throwing', () => {
    const odd = {
      tool: 'device.tap',
      args: {},
      target_text: 'Open',
      foreground_package: 'com.example.x',
      screen_text: 'IBAN',
    };
    expect(classifyRisk(odd as never).level).toBe('low');
  });
});
