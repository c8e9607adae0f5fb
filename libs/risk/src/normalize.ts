/**
 * Unicode normalisation and word segmentation for risk matching. Pure functions; every pattern is compiled once at
 * module load.
 *
 * Matching folds text in two layers:
 *
 * 1. {@link foldText} (all scripts): drop default-ignorable code points (zero-width space, ZWNJ, ZWJ, BOM, soft
 *    hyphen, word joiner, bidi controls, variation selectors, Hangul fillers, tag characters), NFKC (full-width and
 *    half-width forms, ligatures, Arabic presentation forms), locale-independent lower case, then the few folds
 *    lower-casing leaves: `ß`/`ẞ` → `ss`, dotless `ı` → `i`, Greek final `ς` → `σ`. Arabic and Hebrew lose only their
 *    optional vowel points (harakat, niqqud, cantillation) and the tatweel, and Arabic alef variants become bare alef,
 *    because UI text is written both with and without them; the letters themselves are untouched.
 * 2. {@link stripMarks} (Latin, Greek and Cyrillic letters only): combining marks after a letter of those scripts are
 *    removed (`Envíar` → `enviar`, `İptal` → `iptal`, `Αποστολή` → `αποστολη`, `ё` → `е`), and letters that carry
 *    their stroke inside the code point are mapped (`ł` → `l`, `đ` → `d`, `ø` → `o`, `æ` → `ae`, `œ` → `oe`). Marks
 *    in Devanagari, Thai, Hangul, Arabic and Hebrew are essential to the word and are never stripped.
 *
 * Cyrillic and Greek look-alike letters are not folded here (Russian text must stay Russian); the classifier reads a
 * word that mixes them into Latin letters separately (see {@link latinSkeleton}).
 */

const ASCII_ONLY = /^\p{ASCII}*$/u;
const IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;
/**
 * Arabic harakat, Quranic marks and the tatweel; Hebrew niqqud and cantillation. All are optional in written text
 * (`v` flag: combining marks whose script extensions include Arabic or Hebrew, except the generic ones at
 * U+0300–U+036F, which Latin text uses too).
 */
const OPTIONAL_POINTS = new RegExp('[[[\\p{scx=Arabic}\\p{scx=Hebrew}]&&\\p{M}]--[\\u0300-\\u036F]]|\\u0640', 'gv');
const CASE_FOLDS: Readonly<Record<string, string>> = {
  ß: 'ss',
  ı: 'i',
  ς: 'σ',
  // Arabic alef with hamza or madda, and wasla, read as bare alef; alef maqsura as ya; Persian keyboard ya and kaf.
  آ: 'ا',
  أ: 'ا',
  إ: 'ا',
  ٱ: 'ا',
  ى: 'ي',
  ی: 'ي',
  ک: 'ك',
};
const CASE_FOLD_CHARS = new RegExp(`[${Object.keys(CASE_FOLDS).join('')}]`, 'gu');

const LGC_LETTER_MARKS = /([\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}])\p{M}+/gu;
const LETTER_FOLDS: Readonly<Record<string, string>> = {
  ł: 'l',
  đ: 'd',
  ð: 'd',
  ø: 'o',
  æ: 'ae',
  œ: 'oe',
  ħ: 'h',
  ŧ: 't',
  ŀ: 'l',
  þ: 'th',
};
const LETTER_FOLD_CHARS = new RegExp(`[${Object.keys(LETTER_FOLDS).join('')}]`, 'gu');

/**
 * Layer 1 of matching normalisation (see the module comment): ignorables removed, NFKC, lower case, `ß`/`ı`/`ς`
 * folded, Arabic and Hebrew optional points removed. Keeps every diacritic of Latin, Greek and Cyrillic text.
 */
export function foldText(text: string): string {
  // ASCII has no ignorables, no compatibility forms and no special folds.
  if (ASCII_ONLY.test(text)) return text.toLowerCase();
  let t = text.replace(IGNORABLE, '').normalize('NFKC').replace(IGNORABLE, '').toLowerCase();
  t = t.replace(CASE_FOLD_CHARS, (c) => CASE_FOLDS[c] ?? c);
  t = t.replace(OPTIONAL_POINTS, '');
  return t.normalize('NFC');
}

/**
 * Layer 2 of matching normalisation: combining marks removed from Latin, Greek and Cyrillic letters, and stroked
 * letters mapped to their base (`ł` → `l`). Other scripts pass through unchanged. Expects {@link foldText} output.
 */
export function stripMarks(folded: string): string {
  if (ASCII_ONLY.test(folded)) return folded;
  return folded
    .normalize('NFD')
    .replace(LGC_LETTER_MARKS, '$1')
    .normalize('NFC')
    .replace(LETTER_FOLD_CHARS, (c) => LETTER_FOLDS[c] ?? c);
}

/**
 * The form text is matched in: NFKC, case-folded (`ß` → `ss`, Turkish `İ`/`ı` → `i`, Greek final sigma → `σ`),
 * zero-width and bidi control characters removed, and diacritics stripped from Latin, Greek and Cyrillic letters only
 * (Devanagari, Thai, Hangul, Arabic and Hebrew keep their marks; Arabic and Hebrew lose only optional vowel points).
 * Total on any string, including lone surrogates; never throws.
 *
 * @example normalizeForMatching('ＳＥＮ\u200BＤ') === 'send'; normalizeForMatching('Envíar') === 'enviar'
 */
export function normalizeForMatching(text: string): string {
  return stripMarks(foldText(text));
}

// One segmenter for the process: construction is the expensive part. The root locale keeps results independent of
// the machine's locale; ICU still uses its dictionaries for Thai, Chinese and Japanese.
const WORDS = new Intl.Segmenter('und', { granularity: 'word' });
const APOSTROPHES = /['\u2019]/;
const APOSTROPHES_G = /['\u2019]+/g;
// Text made only of words in Latin, Greek, Cyrillic, Arabic, Hebrew or Devanagari, each word a letter or digit
// followed by letters, digits and combining marks, segments exactly as Intl.Segmenter would: no rule breaks inside
// such a run. It skips the segmenter, the costliest step; all other text (punctuation, symbols, Hangul, which ICU
// splits from Latin, Han, Kana, Thai) goes through Intl.Segmenter. A property test holds the two paths equal.
const SPACED_LETTER = '[\\p{sc=Latin}\\p{sc=Greek}\\p{sc=Cyrillic}\\p{sc=Arabic}\\p{sc=Hebrew}\\p{sc=Devanagari}]';
const PLAIN_WORD = `(?:(?=\\p{L})${SPACED_LETTER}|\\p{Nd})(?:(?=\\p{L})${SPACED_LETTER}|\\p{Nd}|\\p{M})*`;
// White space between words is required, so a run of letters can be read only one way (no backtracking blow-up).
const PLAIN_WORDS = new RegExp(
  `^\\p{White_Space}*(?:${PLAIN_WORD}(?:\\p{White_Space}+${PLAIN_WORD})*)?\\p{White_Space}*$`,
  'u',
);
const WHITE_SPACE = /\p{White_Space}+/u;

/**
 * Splits text into words with `Intl.Segmenter` (Unicode word boundaries, dictionary segmentation for Thai, Chinese
 * and Japanese, which have no spaces), keeping only word-like segments (punctuation, spaces and emoji are dropped).
 * Elisions are split at apostrophes (`l'achat` → `l`, `achat`; `s'abonner` → `s`, `abonner`), and hyphens and
 * underscores follow Unicode rules (`sign-in` → `sign`, `in`; `send_money` stays one word). Does not normalise:
 * pass {@link normalizeForMatching} output to match the lexicon.
 */
export function segmentWords(text: string): string[] {
  if (PLAIN_WORDS.test(text)) return text.split(WHITE_SPACE).filter((w) => w !== '');
  return segmentWithIcu(text);
}

/** {@link segmentWords} without the fast path; exported for the test that holds both paths equal. */
export function segmentWithIcu(text: string): string[] {
  const words: string[] = [];
  for (const s of WORDS.segment(text)) {
    if (!s.isWordLike) continue;
    if (APOSTROPHES.test(s.segment)) {
      for (const part of s.segment.split(APOSTROPHES_G)) if (part) words.push(part);
    } else {
      words.push(s.segment);
    }
  }
  return words;
}

const HAS_LATIN = /\p{Script=Latin}/u;
const HAS_CYRILLIC_OR_GREEK = /[\p{Script=Cyrillic}\p{Script=Greek}]/u;
const LETTER = /\p{L}/gu;
/** Cyrillic and Greek letters that look like Latin ones once lower-cased (from Unicode's confusables, trimmed). */
const CONFUSABLES: Readonly<Record<string, string>> = {
  а: 'a',
  в: 'b',
  е: 'e',
  һ: 'h',
  н: 'h',
  і: 'i',
  ј: 'j',
  к: 'k',
  ӏ: 'l',
  м: 'm',
  о: 'o',
  р: 'p',
  ԛ: 'q',
  с: 'c',
  ѕ: 's',
  т: 't',
  у: 'y',
  ԝ: 'w',
  х: 'x',
  ԁ: 'd',
  ѵ: 'v',
  α: 'a',
  β: 'b',
  ε: 'e',
  η: 'n',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ο: 'o',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
  γ: 'y',
  ζ: 'z',
};
const CONFUSABLE_CHARS = new RegExp(`[${Object.keys(CONFUSABLES).join('')}]`, 'gu');

/**
 * The Latin reading of a word written with Cyrillic or Greek look-alike letters, or `null` when there is none. A word
 * gets one when it mixes Latin with Cyrillic or Greek letters (`sеnd` with a Cyrillic `е`), or when every letter of a
 * Cyrillic or Greek word has a Latin look-alike (`рау`). Expects a {@link normalizeForMatching} word.
 */
export function latinSkeleton(word: string): string | null {
  if (ASCII_ONLY.test(word) || !HAS_CYRILLIC_OR_GREEK.test(word)) return null;
  const skeleton = word.replace(CONFUSABLE_CHARS, (c) => CONFUSABLES[c] ?? c);
  if (HAS_LATIN.test(word)) return skeleton;
  const letters = word.match(LETTER) ?? [];
  return letters.length > 0 && letters.every((c) => CONFUSABLES[c] !== undefined) ? skeleton : null;
}
