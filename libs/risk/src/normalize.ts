/**
 * Unicode normalisation and word segmentation for risk matching. Pure functions; every pattern is compiled once at
 * module load, and the segmentation of pieces of text that need `Intl.Segmenter` is kept (bounded).
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

import { Lru } from './lru.js';

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
// The same classes, to test one character (not global: a global pattern keeps where it stopped).
const IGNORABLE_CHAR = new RegExp(IGNORABLE.source, 'u');
const CASE_FOLD_CHAR = new RegExp(CASE_FOLD_CHARS.source, 'u');
const OPTIONAL_POINT = new RegExp(OPTIONAL_POINTS.source, 'v');
const MARK = /\p{M}/u;
const LGC_MARK = /[\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}]\p{M}/u;
const LGC_CHAR = /^[\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}]$/u;
const LGC_LETTER_AND_MARKS = /^[\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}]\p{M}*$/u;
const JAMO = /[\u1100-\u11FF\uA960-\uA97F\uD7B0-\uD7FF]/;
/** Scripts written without spaces, whose words the lexicon also keys joined up. */
const UNSPACED_SCRIPT =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Hangul}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;

// Facts about each UTF-16 code unit, worked out the first time it is met and kept (a table of 64K entries): scanning
// text with them costs a table lookup per character, where a Unicode property pattern costs far more on text that is
// not Latin-1. Each fact is defined by the pattern it stands for, and a test holds every entry to its definition.
// Surrogates have none of the facts but C_ASTRAL: text with a character outside the BMP is checked with the
// patterns themselves.
/** Set on every entry worked out. */
const C_KNOWN = 1;
/** White space that always separates words ({@link SPACE}). */
const C_SPACE = 1 << 1;
/** A letter of a script written with spaces ({@link SPACED_LETTER}). */
const C_LETTER = 1 << 2;
/** A decimal digit. */
const C_DIGIT = 1 << 3;
/** A mark of a script written with spaces ({@link SPACED_MARK}). */
const C_MARK = 1 << 4;
/** A Hangul syllable. */
const C_HANGUL = 1 << 5;
/**
 * {@link foldText} has more to do than NFKC, lower case, case folds and NFC: an ignorable or an optional point, in
 * the character or in its lower case.
 */
const C_FOLD = 1 << 6;
/**
 * {@link stripMarks} may change a word with it, wherever it stands: a letter it maps (`ł`), a character that
 * decomposes into a Latin, Greek or Cyrillic letter and a mark, or that does not come back from decomposing, or a
 * Hangul jamo (which composes with the one before it).
 */
const C_STRIP = 1 << 7;
const C_LATIN = 1 << 8;
const C_CYRILLIC = 1 << 9;
const C_GREEK = 1 << 10;
/** A script written without spaces, which the lexicon also keys joined up ({@link UNSPACED_SCRIPT}). */
const C_UNSPACED = 1 << 11;
/** Shows something a reader could take for a label ({@link INVISIBLE_ONLY}). */
const C_VISIBLE = 1 << 12;
/** A surrogate: half of a character outside the BMP. */
const C_ASTRAL = 1 << 13;
/** Any combining mark. */
const C_ANY_MARK = 1 << 14;
/** Its decomposition ends in a Latin, Greek or Cyrillic character: a mark after it is stripped. */
const C_LGC_END = 1 << 15;
/**
 * Lower case is all {@link foldText} does to it: no decomposition, no mark and no jamo (nothing composes with it),
 * in the character and in its lower case, and nothing else to fold (not {@link C_FOLD}).
 */
const C_SIMPLE = 1 << 16;
/** A case fold applies to it or its lower case (`ß`, `ı`, `ς`, Arabic alef forms), or capital sigma. */
const C_CASE_FOLD = 1 << 17;
/** Any letter. */
const C_ANY_LETTER = 1 << 18;
/** A Cyrillic or Greek letter with a Latin look-alike ({@link CONFUSABLES}). */
const C_CONFUSABLE = 1 << 19;
/**
 * {@link stripMarks} makes it, alone, a plain letter (kept in {@link strippedLetters}): a Latin, Greek or Cyrillic
 * letter that decomposes into a letter of those scripts and marks only (`é`, `ί`, `й`), or that it maps (`ł`).
 */
const C_STRIP_LETTER = 1 << 20;
/** Unicode word rules attach it to the character before it ({@link ATTACHING}). */
const C_ATTACHES = 1 << 21;
/** NFKC or case folding changes it (only while its facts are worked out). */
const C_CHANGES_WHEN_FOLDED = 1 << 22;
/** {@link IGNORABLE}: removed before and after NFKC. */
const C_IGNORABLE = 1 << 23;
/** An optional point, or its lower case is one ({@link OPTIONAL_POINTS}). */
const C_OPTIONAL_POINT = 1 << 24;
/** Bits 27 and up: how many characters {@link foldText} makes of it alone (0 to {@link MAX_FOLD_GROWTH}). */
const C_FOLDED_LENGTH_SHIFT = 27;

const CHAR_INFO = new Uint32Array(0x10000);
// Looked up by code: looking a new one-character string up as a key costs more.
const LETTER_FOLD_CODES = new Set(Object.keys(LETTER_FOLDS).map((c) => c.charCodeAt(0)));
/** What {@link stripMarks} makes of each {@link C_STRIP_LETTER} character. */
const strippedLetters = new Map<number, string>();

function charInfo(code: number): number {
  const info = CHAR_INFO[code] as number;
  return info === 0 ? learnBlock(code) : info;
}

/** Facts that are character classes, each with the pattern that finds them in a run of characters. */
let classFacts: readonly (readonly [bit: number, pattern: RegExp])[] | undefined;

/**
 * Works out the facts of the 256 code units around `code` (a block at a time: one pass of each class's pattern over
 * the block costs far less than testing each character), and returns those of `code`.
 */
function learnBlock(code: number): number {
  const start = code & ~0xff;
  if (start >= 0xd800 && start <= 0xdfff) {
    CHAR_INFO.fill(C_KNOWN | C_ASTRAL, start, start + 0x100);
    return C_KNOWN | C_ASTRAL;
  }
  classFacts ??= [
    [C_SPACE, new RegExp(SPACE, 'gv')],
    [C_LETTER, new RegExp(SPACED_LETTER, 'gv')],
    [C_DIGIT, /\p{Nd}/gu],
    [C_MARK, new RegExp(SPACED_MARK, 'gv')],
    [C_ANY_MARK, /\p{M}/gu],
    [C_ANY_LETTER, /\p{L}/gu],
    [C_ATTACHES, new RegExp(ATTACHING.source, 'gu')],
    [C_LATIN, /\p{Script=Latin}/gu],
    [C_CYRILLIC, /\p{Script=Cyrillic}/gu],
    [C_GREEK, /\p{Script=Greek}/gu],
    [C_UNSPACED, new RegExp(UNSPACED_SCRIPT.source, 'gu')],
    // Inverted below: the pattern finds what shows nothing.
    [C_VISIBLE, new RegExp(INVISIBLE_CHAR.source, 'gu')],
    [C_FOLD | C_IGNORABLE, new RegExp(IGNORABLE.source, 'gu')],
    [C_FOLD | C_OPTIONAL_POINT, new RegExp(OPTIONAL_POINTS.source, 'gv')],
    [C_CASE_FOLD, new RegExp(CASE_FOLD_CHARS.source, 'gu')],
    [C_CHANGES_WHEN_FOLDED, /\p{Changes_When_NFKC_Casefolded}/gu],
  ];
  const block = String.fromCharCode(...Array.from({ length: 0x100 }, (_, k) => start + k));
  const facts = new Uint32Array(0x100);
  for (const [bit, pattern] of classFacts) for (const m of block.matchAll(pattern)) (facts[m.index] as number) |= bit;
  for (let k = 0; k < 0x100; k++) CHAR_INFO[start + k] = learnChar(start + k, (facts[k] as number) ^ C_VISIBLE);
  return CHAR_INFO[code] as number;
}

/** The facts of `code`, from those of its class (`classes`) and what decomposing, folding and lower case make of it. */
function learnChar(code: number, classes: number): number {
  let info = C_KNOWN | (classes & ~C_CHANGES_WHEN_FOLDED);
  const c = String.fromCharCode(code);
  if (code >= 0xac00 && code <= 0xd7a3) info |= C_HANGUL;
  const lower = c.toLowerCase();
  if (lower !== c && IGNORABLE_CHAR.test(lower)) info |= C_FOLD;
  if (lower !== c && OPTIONAL_POINT.test(lower)) info |= C_FOLD | C_OPTIONAL_POINT;
  // Capital sigma: its lower case depends on what follows it, and the final one is folded.
  if (c === 'Σ' || (lower !== c && CASE_FOLD_CHAR.test(lower))) info |= C_CASE_FOLD;
  const nfd = c.normalize('NFD');
  const roundTrip = nfd === c || nfd.normalize('NFC') === c;
  const jamo = JAMO.test(c);
  if (roundTrip && !jamo && (LETTER_FOLD_CODES.has(code) || (nfd !== c && LGC_LETTER_AND_MARKS.test(nfd)))) {
    info |= C_STRIP_LETTER;
    strippedLetters.set(code, stripMarksFully(c));
  } else if (!roundTrip || jamo || (nfd !== c && LGC_MARK.test(nfd))) {
    info |= C_STRIP;
  }
  const last = nfd === c ? info & (C_LATIN | C_CYRILLIC | C_GREEK) : LGC_CHAR.test(nfd.slice(-1)) ? 1 : 0;
  if (last !== 0) info |= C_LGC_END;
  // A character that NFKC and case folding leave alone (most of them) has no compatibility form: its fold is its
  // lower case, composed, and only its canonical decomposition can differ from it.
  const stable = (classes & C_CHANGES_WHEN_FOLDED) === 0;
  const simple = (t: string) => (t === c && stable ? nfd : t.normalize('NFKD')) === t && !MARK.test(t) && !JAMO.test(t);
  if ((info & (C_FOLD | C_CASE_FOLD)) === 0 && simple(c) && simple(lower)) info |= C_SIMPLE;
  if (CONFUSABLE_CODES.has(code)) info |= C_CONFUSABLE;
  const foldedLength = stable && lower === c && (info & (C_FOLD | C_CASE_FOLD)) === 0 ? 1 : foldTextFully(c).length;
  return info | (foldedLength << C_FOLDED_LENGTH_SHIFT);
}

/** Whether every character of `text` has fact `bit` (none outside the BMP has any). */
function everyChar(text: string, bit: number): boolean {
  for (let i = 0; i < text.length; i++) if ((charInfo(text.charCodeAt(i)) & bit) === 0) return false;
  return true;
}

/**
 * Whether `text` has a character with fact `bit`; text with a character outside the BMP is asked of `astral` (the
 * pattern the fact stands for), or taken to have it when there is none.
 */
function hasChar(text: string, bit: number, astral?: RegExp): boolean {
  for (let i = 0; i < text.length; i++) {
    const info = charInfo(text.charCodeAt(i));
    if ((info & bit) !== 0) return true;
    if ((info & C_ASTRAL) !== 0) return astral ? astral.test(text) : true;
  }
  return false;
}

/**
 * Most characters {@link foldText} makes of one UTF-16 code unit: U+FDFA (ﷺ) becomes 18 under NFKC, and nothing
 * grows more (a test holds every character to it). Text up to `n / MAX_FOLD_GROWTH` long folds to at most `n`.
 */
export const MAX_FOLD_GROWTH = 18;

/**
 * How many characters {@link foldText} makes of `text`'s characters each on its own: never fewer than it makes of
 * the whole text (folding joins characters, as a letter and its mark, but never makes two longer together).
 */
export function foldedLengthBound(text: string): number {
  return foldCut(text, Infinity).size;
}

/**
 * Where to cut `text` so that it folds to at most `max` characters by {@link foldedLengthBound}: after the most
 * characters whose folds, each on its own, add up to at most `max` (`text.length` when all of them do), never
 * inside a character outside the BMP. A table lookup per character; nothing is folded.
 */
export function foldCut(text: string, max: number): { readonly at: number; readonly size: number } {
  let size = 0;
  let i = 0;
  while (i < text.length) {
    const info = charInfo(text.charCodeAt(i));
    let width = 1;
    let folded = info >>> C_FOLDED_LENGTH_SHIFT;
    if ((info & C_ASTRAL) !== 0) {
      const cp = text.codePointAt(i) as number;
      width = cp > 0xffff ? 2 : 1;
      folded = astralFoldedLength(cp);
    }
    if (size + folded > max) break;
    size += folded;
    i += width;
  }
  return { at: i, size };
}

/** Folded lengths of characters outside the BMP (and lone surrogates), as they are met; bounded. */
const astralFoldedLengths = new Map<number, number>();

function astralFoldedLength(cp: number): number {
  let length = astralFoldedLengths.get(cp);
  if (length === undefined) {
    length = foldTextFully(String.fromCodePoint(cp)).length;
    if (astralFoldedLengths.size >= 4096) astralFoldedLengths.clear();
    astralFoldedLengths.set(cp, length);
  }
  return length;
}

/**
 * Layer 1 of matching normalisation (see the module comment): ignorables removed, NFKC, lower case, `ß`/`ı`/`ς`
 * folded, Arabic and Hebrew optional points removed. Keeps every diacritic of Latin, Greek and Cyrillic text.
 */
export function foldText(text: string): string {
  // Printable ASCII has no ignorables, no compatibility forms and no special folds.
  if (PLAIN_ASCII.test(text)) return text.toLowerCase();
  // Nor has most other text: only its case changes (see C_SIMPLE).
  if (everyChar(text, C_SIMPLE)) return text.toLowerCase();
  // The steps of foldTextFully, each only when a character of the text calls for it.
  const kept = hasChar(text, C_IGNORABLE) ? text.replace(IGNORABLE, '') : text;
  const nfkc = kept.normalize('NFKC');
  const composed = nfkc === kept ? kept : hasChar(nfkc, C_IGNORABLE) ? nfkc.replace(IGNORABLE, '') : nfkc;
  const lower = composed.toLowerCase();
  let folded = hasChar(composed, C_CASE_FOLD) ? caseFold(lower) : lower;
  if (hasChar(composed, C_OPTIONAL_POINT)) folded = folded.replace(OPTIONAL_POINTS, '');
  // Text in NFKC is in NFC: left as it was (most text of scripts without case), it still is.
  return folded === text && composed === text ? text : folded.normalize('NFC');
}

/** {@link foldText} without its shortcuts; exported for the test that holds both equal. */
export function foldTextFully(text: string): string {
  let t = text.replace(IGNORABLE, '').normalize('NFKC').replace(IGNORABLE, '').toLowerCase();
  t = caseFold(t);
  t = t.replace(OPTIONAL_POINTS, '');
  return t.normalize('NFC');
}

function caseFold(lower: string): string {
  return lower.replace(CASE_FOLD_CHARS, (c) => CASE_FOLDS[c] ?? c);
}

/**
 * Layer 2 of matching normalisation: combining marks removed from Latin, Greek and Cyrillic letters, and stroked
 * letters mapped to their base (`ł` → `l`). Other scripts pass through unchanged. Expects {@link foldText} output.
 */
export function stripMarks(folded: string): string {
  // Read character by character: marks after a Latin, Greek or Cyrillic letter go, such letters with marks inside
  // become plain (C_STRIP_LETTER), other characters stay; anything else (C_STRIP, a mark of those scripts after
  // another script's letter, or kept marks in text that is not composed) is left to the full strip.
  let out = '';
  let copied = 0;
  let marks = false;
  let afterLgc = false;
  for (let i = 0; i < folded.length; i++) {
    const code = folded.charCodeAt(i);
    const info = charInfo(code);
    if ((info & (C_STRIP | C_ASTRAL)) !== 0) return stripMarksFully(folded);
    if ((info & C_ANY_MARK) !== 0) {
      if (afterLgc) {
        out += folded.slice(copied, i);
        copied = i + 1;
        continue;
      }
      // A Latin, Greek or Cyrillic mark among kept ones: which marks follow it depends on their canonical order.
      if ((info & C_LGC_END) !== 0) return stripMarksFully(folded);
      marks = true;
      continue;
    } else if ((info & C_STRIP_LETTER) !== 0) {
      out += folded.slice(copied, i) + (strippedLetters.get(code) as string);
      copied = i + 1;
      afterLgc = true;
      continue;
    }
    afterLgc = (info & C_LGC_END) !== 0;
  }
  const stripped = copied === 0 ? folded : out + folded.slice(copied);
  return marks && stripped.normalize('NFC') !== stripped ? stripMarksFully(folded) : stripped;
}

/** {@link stripMarks} without its shortcut; exported for the test that holds both equal. */
export function stripMarksFully(folded: string): string {
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
// the machine's locale; ICU still uses its dictionaries for Thai, Lao, Khmer, Myanmar, Chinese, Japanese and Korean.
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
// White space that always separates words. The narrow no-break space (U+202F) does not: Unicode word rules join
// letters across it (`a\u202Fb` is one word), as they do across `_`.
const SPACE = '[\\p{White_Space}--\\u202F]';
/**
 * What Unicode word rules attach to the character before it (a mark, a format character such as ZWJ, an emoji
 * modifier): text where one follows white space cannot be cut at its spaces and segmented piece by piece.
 */
const ATTACHING = /[\p{M}\p{Cf}\p{Grapheme_Extend}\p{Emoji_Modifier}]/u;
/**
 * Text up to this long is segmented piece by piece (between white space), and the pieces that need Intl.Segmenter
 * are kept: labels are made of the same words again and again (`ส่งข้อความ`, `确认付款`, `Pay€`), so a new label
 * mostly costs no segmenter call at all. Longer text is segmented at once, unless it is all plain words.
 */
const MAX_PIECEWISE_TEXT_LENGTH = 256;
const MAX_CACHED_CHUNK_LENGTH = 64;
const MAX_CACHED_CHUNKS = 4096;
const chunkWords = new Lru<string, readonly string[]>(MAX_CACHED_CHUNKS);

// What came before a character in a plain piece, for where its words and amounts split.
const AT_START = 0;
const AFTER_LETTER = 1;
const AFTER_LETTER_MARKS = 2;
const AFTER_DIGIT = 3;
const AFTER_DIGIT_MARKS = 4;
const AFTER_HANGUL = 5;

/**
 * Splits text into words with `Intl.Segmenter` (Unicode word boundaries, dictionary segmentation for Thai, Chinese
 * and Japanese, which have no spaces), keeping only word-like segments (punctuation, spaces and emoji are dropped).
 * Elisions are split at apostrophes (`l'achat` → `l`, `achat`; `s'abonner` → `s`, `abonner`), and hyphens and
 * underscores follow Unicode rules (`sign-in` → `sign`, `in`; `send_money` stays one word). Does not normalise:
 * pass {@link normalizeForMatching} output to match the lexicon.
 *
 * Gives exactly what {@link segmentWithIcu} gives, faster: plain words of spaced scripts are read in one pass over
 * the text (see the fast path above), and the other pieces between white space are segmented alone and kept (Unicode
 * word rules never join words across white space, except where a mark or format character follows it: such text is
 * segmented at once).
 */
export function segmentWords(text: string): string[] {
  const words: string[] = [];
  const n = text.length;
  for (let i = 0; i < n;) {
    if ((charInfo(text.charCodeAt(i)) & C_SPACE) !== 0) {
      i++;
      continue;
    }
    // A piece: up to the next white space.
    const start = i;
    while (i < n && (charInfo(text.charCodeAt(i)) & C_SPACE) === 0) i++;
    if (plainWords(text, start, i, words)) continue;
    if (
      n > MAX_PIECEWISE_TEXT_LENGTH ||
      (start > 0 && ATTACHING.test(String.fromCodePoint(text.codePointAt(start)!)))
    ) {
      return segmentWithIcu(text);
    }
    segmentPiece(text, start, i, words);
  }
  return words;
}

/**
 * Pushes the words of a piece that is not plain. Where a letter meets a digit the words part whatever the segmenter
 * says (see splitAmounts), so a piece of letters, digits and marks only is segmented part by part: the word in
 * `ส่งข้อความ12345` is then kept, and the number read as a plain word. Any other character (punctuation, a
 * connector such as U+202F, a format character) may change how the segmenter reads what is around it, and keeps the
 * piece whole.
 */
function segmentPiece(text: string, start: number, end: number, words: string[]): void {
  const cuts: number[] = [];
  let last = OTHER;
  let afterMark = false;
  for (let k = start; k < end; k++) {
    const info = charInfo(text.charCodeAt(k));
    if ((info & C_ANY_MARK) !== 0) {
      afterMark = true;
      continue;
    }
    // A letter that Unicode word rules attach to what is before it (U+FF9E) is not a plain letter.
    const kind =
      (info & C_ATTACHES) !== 0
        ? OTHER
        : (info & C_ANY_LETTER) !== 0
          ? LETTER
          : (info & C_DIGIT) !== 0
            ? DIGIT_KIND
            : OTHER;
    if (kind === OTHER) {
      segmentPart(text, start, end, words);
      return;
    }
    if ((kind === DIGIT_KIND && last === LETTER) || (kind === LETTER && last === DIGIT_KIND && !afterMark))
      cuts.push(k);
    last = kind;
    afterMark = false;
  }
  let part = start;
  for (const cut of cuts) {
    segmentPart(text, part, cut, words);
    part = cut;
  }
  segmentPart(text, part, end, words);
}

// The base before a point in a piece: for where letters meet digits.
const OTHER = 0;
const LETTER = 1;
const DIGIT_KIND = 2;

/** Pushes the words of `text.slice(start, end)`: plain words, or the segmenter's (kept for short parts). */
function segmentPart(text: string, start: number, end: number, words: string[]): void {
  if (plainWords(text, start, end, words)) return;
  const part = text.slice(start, end);
  const cacheable = part.length <= MAX_CACHED_CHUNK_LENGTH;
  let partWords = cacheable ? chunkWords.get(part) : undefined;
  if (partWords === undefined) {
    // Split at amounts here: only a word with a digit splits, and then the text has one.
    partWords = splitAmounts(icuWords(part));
    if (cacheable) chunkWords.set(part, partWords);
  }
  for (const w of partWords) words.push(w);
}

/**
 * Pushes the words of `text.slice(start, end)` (no white space in it) and returns true when it is plain words (see
 * the fast path), split where letters meet digits (the amounts rule below) or Hangul meets anything else; returns
 * false, pushing nothing, when it is not.
 */
function plainWords(text: string, start: number, end: number, words: string[]): boolean {
  const before = words.length;
  let after = AT_START;
  let word = start;
  for (let i = start; i < end; i++) {
    const info = charInfo(text.charCodeAt(i));
    if ((info & C_LETTER) !== 0) {
      if (after === AFTER_HANGUL || after === AFTER_DIGIT) words.push(text.slice(word, (word = i)));
      after = AFTER_LETTER;
    } else if ((info & C_DIGIT) !== 0) {
      if (after === AFTER_HANGUL || after === AFTER_LETTER || after === AFTER_LETTER_MARKS) {
        words.push(text.slice(word, (word = i)));
      }
      after = AFTER_DIGIT;
    } else if ((info & C_HANGUL) !== 0) {
      if (after !== AT_START && after !== AFTER_HANGUL) words.push(text.slice(word, (word = i)));
      after = AFTER_HANGUL;
    } else if ((info & C_MARK) !== 0 && after !== AT_START && after !== AFTER_HANGUL) {
      after = after === AFTER_DIGIT || after === AFTER_DIGIT_MARKS ? AFTER_DIGIT_MARKS : AFTER_LETTER_MARKS;
    } else {
      words.length = before;
      return false;
    }
  }
  if (end > start) words.push(text.slice(word, end));
  return true;
}

/** {@link segmentWords} without the fast path or kept pieces; exported for the tests that hold both equal. */
export function segmentWithIcu(text: string): string[] {
  return finishWords(text, icuWords(text));
}

/** The word-like segments of `text`, split at apostrophes. */
function icuWords(text: string): string[] {
  const words: string[] = [];
  const segments = WORDS.segment(text);
  // Stepping from segment to segment with `containing` gives the segments iteration gives, at half the cost.
  for (let i = 0; i < text.length;) {
    const s = segments.containing(i);
    if (s === undefined) break;
    const { segment } = s;
    i = s.index + segment.length;
    if (!s.isWordLike) continue;
    if (APOSTROPHES.test(segment)) {
      for (const part of segment.split(APOSTROPHES_G)) if (part) words.push(part);
    } else {
      words.push(segment);
    }
  }
  return words;
}

function finishWords(text: string, words: string[]): string[] {
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
const INVISIBLE_CHAR = /[\p{White_Space}\p{Cc}\p{Cf}\p{Cs}\p{Cn}\p{M}\p{Default_Ignorable_Code_Point}]/u;

/** Whether `text` has at least one visible character (see {@link INVISIBLE_ONLY}); false for `'\u200B\u202E\u0007'`. */
export function hasVisibleText(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const info = charInfo(text.charCodeAt(i));
    if ((info & C_VISIBLE) !== 0) return true;
    if ((info & C_ASTRAL) !== 0) return !INVISIBLE_ONLY.test(text);
  }
  return false;
}

/** Whether `text` has a letter of a script written without spaces (Han, Kana, Thai, Hangul, Lao, Khmer, Myanmar). */
export function hasUnspacedScript(text: string): boolean {
  return hasChar(text, C_UNSPACED, UNSPACED_SCRIPT);
}

/** Whether `text` has a Cyrillic or Greek character. */
export function hasCyrillicOrGreek(text: string): boolean {
  return hasChar(text, C_CYRILLIC | C_GREEK, HAS_CYRILLIC_OR_GREEK);
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
const HAS_CYRILLIC_OR_GREEK = /[\p{Script=Cyrillic}\p{Script=Greek}]/u;
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
const CONFUSABLE_CODES = new Set(Object.keys(CONFUSABLES).map((c) => c.charCodeAt(0)));
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
  if (!hasCyrillicOrGreek(word)) return null;
  // Without Latin letters, only a word of look-alikes alone has a Latin reading (checked without allocating: most
  // Cyrillic and Greek words have a letter with no look-alike, often the first).
  if (!hasChar(word, C_LATIN, HAS_LATIN) && !onlyLookalikeLetters(word)) return null;
  return word.replace(CONFUSABLE_CHARS, (c) => CONFUSABLES[c] ?? c);
}

/** Whether `word` has letters and every one has a Latin look-alike. */
function onlyLookalikeLetters(word: string): boolean {
  let letters = false;
  for (let i = 0; i < word.length; i++) {
    const info = charInfo(word.charCodeAt(i));
    if ((info & C_ASTRAL) !== 0) return !UNCONFUSABLE_LETTER.test(word) && HAS_LETTER.test(word);
    if ((info & C_ANY_LETTER) === 0) continue;
    if ((info & C_CONFUSABLE) === 0) return false;
    letters = true;
  }
  return letters;
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
  if (!hasChar(word, C_CYRILLIC, HAS_CYRILLIC) || !hasChar(word, C_LATIN, HAS_LATIN)) return null;
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
  if (!hasChar(text, C_LATIN, HAS_LATIN) || !hasCyrillicOrGreek(text)) return found;
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
