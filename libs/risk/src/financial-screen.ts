/**
 * Whether a screen shows financial data: an IBAN, an account or card number, or a balance. An app that is on no list
 * and whose name says nothing is still a finance app when its screen looks like one. Pure; bounded in the text read.
 *
 * The evidence is named without repeating the number: reasons end up in audit rows, and an account number has no
 * business there.
 */

/** Most screen texts read, and most characters read of each: a screen has a few hundred elements at most. */
export const MAX_SCREEN_TEXTS = 300;
export const MAX_SCREEN_TEXT_LENGTH = 500;

/** Two letters, two check digits, then 11 to 30 letters or digits, in groups of four or not (ISO 13616). */
const IBAN = /(?<![\p{L}\p{N}])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}(?![\p{L}\p{N}])/gu;

/** A card or account number with all but its last digits masked: `•••• 1234`, `****1234`, `xxxx-xxxx-1234`. */
// Bounded groups with a required separator between them, so a long run of x or * is read in one way only.
const MASKED_NUMBER = /(?<![•*●·∙xX])[•*●·∙xX]{3,6}(?:[\s-][•*●·∙xX]{3,6}){0,3}[\s-]?\d{3,4}(?!\d)/u;

/** Labels of an account number, in the languages banking apps use (matched on lower-cased text). */
const ACCOUNT_LABELS = [
  'account no',
  'account number',
  'acct',
  'a/c',
  'kontonummer',
  'konto',
  'número de cuenta',
  'cuenta',
  'número da conta',
  'conta',
  'numéro de compte',
  'compte',
  'conto',
  'rekening',
  'nomor rekening',
  'numer rachunku',
  'rachunek',
  'номер счёта',
  'номер счета',
  'счёт',
  'счет',
  'рахунок',
  'hesap no',
  'số tài khoản',
  'खाता संख्या',
  '口座番号',
  '账号',
  '账户',
  '賬戶',
  '계좌번호',
];

/** Labels of a balance (matched on lower-cased text). */
const BALANCE_LABELS = [
  'balance',
  'available balance',
  'saldo',
  'solde',
  'kontostand',
  'баланс',
  'остаток',
  'залишок',
  'bakiye',
  'số dư',
  'शेष राशि',
  '余额',
  '餘額',
  '残高',
  '잔액',
];

/** Scripts whose words are not separated by spaces: their labels match anywhere, the others as whole words. */
const NO_SPACES = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

function labelPattern(labels: readonly string[]): RegExp {
  const escaped = labels.map((l) => {
    const e = l.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    return NO_SPACES.test(l) ? e : `(?<![\\p{L}\\p{M}])${e}(?![\\p{L}\\p{M}])`;
  });
  return new RegExp(escaped.join('|'), 'u');
}

const ACCOUNT_LABEL = labelPattern(ACCOUNT_LABELS);
const BALANCE_LABEL = labelPattern(BALANCE_LABELS);

/** Six or more digits, possibly grouped by spaces or hyphens: what an account number looks like next to its label. */
const ACCOUNT_DIGITS = /\d(?:[ -]?\d){5,}/u;

/** A sum of money: a currency sign or code next to a number, or a number with two decimals. */
const AMOUNT = new RegExp(
  [
    String.raw`(?:[$€£¥₹₽₴₩₺₦₱฿₫]|R\$|zł|Rp|kr|[A-Z]{3})\s?-?\d[\d\s.,\u00a0\u202f']*`,
    String.raw`\d[\d\s.,\u00a0\u202f']*\s?(?:[$€£¥₹₽₴₩₺₦₱฿₫]|zł|Rp|kr|руб|грн|[A-Z]{3})(?![\p{L}])`,
    String.raw`(?<![\d.,])\d{1,3}(?:[.,\u00a0\u202f ]\d{3})*[.,]\d{2}(?![\d])`,
  ].join('|'),
  'u',
);

const HAS_DIGIT = /\d/u;

/** ISO 7064 mod 97-10, as IBANs are checked: the country and check digits moved to the end, letters as 10…35. */
function ibanChecks(candidate: string): boolean {
  const iban = candidate.replace(/ /g, '');
  if (iban.length < 15 || iban.length > 34) return false;
  const moved = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const ch of moved) {
    const code = ch.charCodeAt(0);
    const value = code >= 65 ? String(code - 55) : ch;
    for (const digit of value) remainder = (remainder * 10 + Number(digit)) % 97;
  }
  return remainder === 1;
}

/**
 * What on the screen shows financial data, as a reason names it (`an IBAN`, `a masked card or account number`, `an
 * account number`, `a balance`), or `null` when nothing does. A label and its value may sit in one text or in two
 * neighbouring ones ("Balance" above "€1,204.50"). Reads at most {@link MAX_SCREEN_TEXTS} texts of at most
 * {@link MAX_SCREEN_TEXT_LENGTH} characters each.
 */
export function financialScreenEvidence(texts: readonly unknown[]): string | null {
  const read: string[] = [];
  for (const t of texts.slice(0, MAX_SCREEN_TEXTS)) {
    if (typeof t === 'string' && t.trim() !== '') read.push(t.slice(0, MAX_SCREEN_TEXT_LENGTH));
  }
  // Every kind of evidence has digits in the text or its neighbour: most texts are passed over with one cheap test.
  const digits = read.map((t) => HAS_DIGIT.test(t));
  for (let i = 0; i < read.length; i++) {
    if (!digits[i] && !digits[i + 1]) continue;
    const text = read[i]!;
    if (digits[i]) {
      for (const m of text.toUpperCase().matchAll(IBAN)) if (ibanChecks(m[0])) return 'an IBAN';
      if (MASKED_NUMBER.test(text)) return 'a masked card or account number';
    }
    const lower = text.toLowerCase();
    const next = read[i + 1] ?? '';
    if (ACCOUNT_LABEL.test(lower) && (ACCOUNT_DIGITS.test(text) || ACCOUNT_DIGITS.test(next)))
      return 'an account number';
    if (BALANCE_LABEL.test(lower) && (AMOUNT.test(text) || AMOUNT.test(next))) return 'a balance';
  }
  return null;
}
