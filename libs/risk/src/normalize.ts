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
 * Layer 1 also removes what is never part of a word: control characters (C0/C1, except white space) and emoji
 * (pictographs, skin-tone modifiers, regional indicators, the keycap mark), so `S😀end` and `Se\u0007nd` read `send`.
 *
 * Cyrillic and Greek look-alike letters are not folded here (Russian text must stay Russian); the classifier reads a
 * word that mixes them into Latin letters separately (see {@link latinSkeleton} and {@link cyrillicSkeleton}).
 */

/** Text of ASCII characters only. */
export const ASCII_ONLY = /^\p{ASCII}*$/u;
/** Printable ASCII and ASCII white space: nothing to remove or fold but case. */
const PLAIN_ASCII = /^[\x20-\x7E\t\n\v\f\r]*$/;
/**
 * Removed before anything else: default-ignorables (zero-width characters, bidi controls U+200E/F, U+202A–E,
 * U+2066–9, U+061C, variation selectors), control characters other than white space, and emoji.
 */
const IGNORABLE =
  /[\p{Default_Ignorable_Code_Point}\p{Extended_Pictographic}\p{Emoji_Modifier}\p{Regional_Indicator}\u20E3]|(?![\t\n\v\f\r\u0085])\p{Cc}/gu;
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
  // Printable ASCII has no ignorables, no compatibility forms and no special folds.
  if (PLAIN_ASCII.test(text)) return text.toLowerCase();
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
// The fast path. Text made only of words of letters, digits and combining marks, in scripts that separate words with
// spaces, segments exactly as Intl.Segmenter would (no rule breaks inside such a run), so it skips the segmenter, the
// costliest step by far. Two kinds of letters:
// - letters of Latin, Greek, Cyrillic, Armenian, Georgian, Ethiopic, Arabic, Hebrew and the Indic scripts (Unicode
//   word rules keep a run of them and digits together, marks included);
// - Hangul syllables, which ICU keeps together as one word per run but splits from any other letter or digit beside
//   them (`ab보내기12cd` → `ab`, `보내기`, `12cd`), and which are never followed by a mark here.
// All other text (punctuation, symbols, Hangul jamo, and Thai, Lao, Khmer, Myanmar, Han and Kana, which ICU splits
// with dictionaries) goes through Intl.Segmenter. Tests hold the two paths equal, letter by letter and on random text.
const SPACED_SCRIPTS =
  '\\p{sc=Latin}\\p{sc=Greek}\\p{sc=Cyrillic}\\p{sc=Armenian}\\p{sc=Georgian}\\p{sc=Ethiopic}\\p{sc=Arabic}\\p{sc=Hebrew}' +
  '\\p{sc=Devanagari}\\p{sc=Bengali}\\p{sc=Gurmukhi}\\p{sc=Gujarati}\\p{sc=Oriya}\\p{sc=Tamil}\\p{sc=Telugu}\\p{sc=Kannada}' +
  '\\p{sc=Malayalam}\\p{sc=Sinhala}';
const SPACED_LETTER = `[\\p{L}&&[${SPACED_SCRIPTS}]]`;
// Marks of those scripts and the shared (inherited) ones; a mark of another script (Han's U+16FF0, say) may not
// follow them the same way in ICU.
const SPACED_MARK = `[\\p{M}&&[\\p{sc=Inherited}${SPACED_SCRIPTS}]]`;
const HANGUL_SYLLABLE = '[\\uAC00-\\uD7A3]';
// One way only to read a run (a mark belongs to the letter or digit before it, a syllable stands alone, white space
// is required between runs), so the pattern cannot backtrack its way into a blow-up.
const PLAIN_RUN = `(?:${HANGUL_SYLLABLE}|(?:${SPACED_LETTER}|\\p{Nd})${SPACED_MARK}*)+`;
const PLAIN_WORDS = new RegExp(
  `^\\p{White_Space}*(?:${PLAIN_RUN}(?:\\p{White_Space}+${PLAIN_RUN})*)?\\p{White_Space}*$`,
  'v',
);
const WHITE_SPACE = /\p{White_Space}+/u;
const HANGUL = /[\uAC00-\uD7A3]/;
/** A run with a Hangul syllable beside any other letter or digit. */
const HANGUL_AND_OTHER = /[\uAC00-\uD7A3][^\uAC00-\uD7A3]|[^\uAC00-\uD7A3][\uAC00-\uD7A3]/;
const HANGUL_BOUNDARY = /(?<=[\uAC00-\uD7A3])(?=[^\uAC00-\uD7A3])|(?<=[^\uAC00-\uD7A3])(?=[\uAC00-\uD7A3])/;

/**
 * Splits text into words with `Intl.Segmenter` (Unicode word boundaries, dictionary segmentation for Thai, Chinese
 * and Japanese, which have no spaces), keeping only word-like segments (punctuation, spaces and emoji are dropped).
 * Elisions are split at apostrophes (`l'achat` → `l`, `achat`; `s'abonner` → `s`, `abonner`), and hyphens and
 * underscores follow Unicode rules (`sign-in` → `sign`, `in`; `send_money` stays one word). Does not normalise:
 * pass {@link normalizeForMatching} output to match the lexicon.
 */
export function segmentWords(text: string): string[] {
  if (!PLAIN_WORDS.test(text)) return segmentWithIcu(text);
  let words = text.split(WHITE_SPACE);
  if (words[0] === '' || words.at(-1) === '') words = words.filter((w) => w !== '');
  if (HANGUL.test(text) && HANGUL_AND_OTHER.test(text)) {
    words = words.flatMap((w) => (HANGUL_AND_OTHER.test(w) ? w.split(HANGUL_BOUNDARY) : [w]));
  }
  return DIGIT.test(text) ? splitAmounts(words) : words;
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
  return DIGIT.test(text) ? splitAmounts(words) : words;
}

const DIGIT = /\p{Nd}/u;
const LETTER_DIGIT = /\p{L}\p{M}*\p{Nd}|\p{Nd}\p{L}/u;
const LETTER_DIGIT_BOUNDARY = /(?<=\p{L}\p{M}*)(?=\p{Nd})|(?<=\p{Nd})(?=\p{L})/u;

/**
 * Unicode word rules keep letters and digits together (`Pay49.99` is one word); an amount written against a verb is
 * still two words, so words are split where letters meet digits.
 */
function splitAmounts(words: string[]): string[] {
  if (!words.some((w) => LETTER_DIGIT.test(w))) return words;
  return words.flatMap((w) => (LETTER_DIGIT.test(w) ? w.split(LETTER_DIGIT_BOUNDARY) : [w]));
}

/**
 * Characters that show nothing a reader could take for a label: white space, controls, format characters (bidi and
 * zero-width marks), default-ignorables, unpaired surrogates, unassigned code points and lone combining marks.
 */
const INVISIBLE_ONLY = /^[\p{White_Space}\p{Cc}\p{Cf}\p{Cs}\p{Cn}\p{M}\p{Default_Ignorable_Code_Point}]*$/u;

/** Whether `text` has at least one visible character (see {@link INVISIBLE_ONLY}); false for `'\u200B\u202E\u0007'`. */
export function hasVisibleText(text: string): boolean {
  return !INVISIBLE_ONLY.test(text);
}

const OVERRIDE = '\u202E';
/** What ends a right-to-left override: pop directional formatting, pop isolate, or a paragraph break. */
const OVERRIDE_END = /[\u202C\u2069\n\r\u0085\u2029]/;
const GRAPHEMES = new Intl.Segmenter('und', { granularity: 'grapheme' });

/**
 * The order in which a reader sees text that uses the right-to-left override (U+202E), or `null` when it has none.
 * An override shows every character after it, up to the next pop (U+202C, U+2069) or paragraph break, in reverse:
 * `\u202Ednes` is stored as `dnes` and read as `send`. Reversed by grapheme cluster, so accents stay on their letter.
 * Nested embeddings are not modelled: any override makes the text suspicious anyway (see {@link findDisguises}).
 */
export function visualOrder(text: string): string | null {
  if (!text.includes(OVERRIDE)) return null;
  let out = '';
  let i = 0;
  while (i < text.length) {
    const start = text.indexOf(OVERRIDE, i);
    if (start === -1) {
      out += text.slice(i);
      break;
    }
    out += text.slice(i, start);
    const rest = text.slice(start + 1);
    const endMatch = OVERRIDE_END.exec(rest);
    const end = endMatch ? start + 1 + endMatch.index : text.length;
    const graphemes = Array.from(GRAPHEMES.segment(text.slice(start + 1, end)), (g) => g.segment);
    out += graphemes.reverse().join('');
    i = end;
  }
  return out;
}

const HAS_LATIN = /\p{Script=Latin}/u;
/** Text with a Cyrillic or Greek character somewhere. */
export const HAS_CYRILLIC_OR_GREEK = /[\p{Script=Cyrillic}\p{Script=Greek}]/u;
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
/** A letter with no Latin look-alike. */
const UNCONFUSABLE_LETTER = new RegExp(`[\\p{L}--[${Object.keys(CONFUSABLES).join('')}]]`, 'v');
const HAS_LETTER = /\p{L}/u;

/**
 * The Latin reading of a word written with Cyrillic or Greek look-alike letters, or `null` when there is none. A word
 * gets one when it mixes Latin with Cyrillic or Greek letters (`sеnd` with a Cyrillic `е`), or when every letter of a
 * Cyrillic or Greek word has a Latin look-alike (`рау`). Expects a {@link normalizeForMatching} word.
 */
export function latinSkeleton(word: string): string | null {
  if (ASCII_ONLY.test(word) || !HAS_CYRILLIC_OR_GREEK.test(word)) return null;
  // Without Latin letters, only a word of look-alikes alone has a Latin reading (checked without allocating: most
  // Cyrillic and Greek words have a letter with no look-alike, often the first).
  if (!HAS_LATIN.test(word) && (UNCONFUSABLE_LETTER.test(word) || !HAS_LETTER.test(word))) return null;
  return word.replace(CONFUSABLE_CHARS, (c) => CONFUSABLES[c] ?? c);
}

const HAS_CYRILLIC = /\p{Script=Cyrillic}/u;
/** Latin letters that look like Cyrillic ones once lower-cased (the inverse of {@link CONFUSABLES}, Cyrillic side). */
const CYRILLIC_CONFUSABLES: Readonly<Record<string, string>> = {
  a: 'а',
  b: 'в',
  c: 'с',
  e: 'е',
  h: 'н',
  i: 'і',
  j: 'ј',
  k: 'к',
  m: 'м',
  o: 'о',
  p: 'р',
  s: 'ѕ',
  t: 'т',
  x: 'х',
  y: 'у',
};
const LATIN_CONFUSABLE_CHARS = new RegExp(`[${Object.keys(CYRILLIC_CONFUSABLES).join('')}]`, 'g');

/**
 * The Cyrillic reading of a Cyrillic word with Latin look-alike letters inside (`oтпpaвить` with Latin `o`, `p`,
 * `a`), or `null` when the word does not mix Latin into Cyrillic. Expects a {@link normalizeForMatching} word.
 */
export function cyrillicSkeleton(word: string): string | null {
  if (ASCII_ONLY.test(word) || !HAS_CYRILLIC.test(word) || !HAS_LATIN.test(word)) return null;
  return word.replace(LATIN_CONFUSABLE_CHARS, (c) => CYRILLIC_CONFUSABLES[c] ?? c);
}

/** Something in a label that hides what it says from the reader. */
export type Disguise =
  /** A right-to-left override (U+202E) shows the letters in another order than they are stored. */
  | { readonly kind: 'override' }
  /** One word mixes Latin with Cyrillic or Greek letters, at least one of them a look-alike of the other script. */
  | { readonly kind: 'mixed-script'; readonly word: string };

/** Most mixed-script words a label reports: one is enough to make it high, a few help the reader. */
const MAX_DISGUISED_WORDS = 3;
const MIXABLE = /[\p{Script=Latin}\p{Script=Cyrillic}\p{Script=Greek}]/u;

/**
 * The disguises in `text` (see {@link Disguise}), in order: an override first, then up to three mixed-script words as
 * the text spells them. Legitimate labels mix scripts between words (`Sberbank СберБанк`), and letters that only
 * exist in one script inside another's word (`5μg`), but not look-alikes inside one word. Pure; reads at most the
 * text it is given (the classifier bounds it).
 */
export function findDisguises(text: string): Disguise[] {
  const found: Disguise[] = [];
  if (text.includes(OVERRIDE)) found.push({ kind: 'override' });
  if (ASCII_ONLY.test(text) || !HAS_LATIN.test(text) || !HAS_CYRILLIC_OR_GREEK.test(text)) return found;
  let words = 0;
  for (const word of segmentWords(foldText(text))) {
    if (!MIXABLE.test(word) || !HAS_LATIN.test(word) || !HAS_CYRILLIC_OR_GREEK.test(word)) continue;
    const plain = stripMarks(word);
    const lookalike =
      [...plain].some((c) => CONFUSABLES[c] !== undefined) ||
      (HAS_CYRILLIC.test(plain) && [...plain].some((c) => CYRILLIC_CONFUSABLES[c] !== undefined));
    if (!lookalike) continue;
    found.push({ kind: 'mixed-script', word });
    if (++words === MAX_DISGUISED_WORDS) break;
  }
  return found;
}
