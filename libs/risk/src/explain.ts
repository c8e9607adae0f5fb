/**
 * Why a target text reads as risky, word by word: the concept each match stands for, its languages and the lexicon's
 * form that matched (`ormuz risk classify --explain`). Explaining is for people; the classifier never calls it.
 */
import { HIGH_RISK_CONCEPTS, LANGUAGES, type LanguageCode } from './lexicon.js';
import { WordMatcher } from './word-matcher.js';

/** One match of the target text against the lexicon. */
export interface WordExplanation {
  /** The concept's id (`pay`, `delete`…), or `configured` for a word added by configuration. */
  readonly concept: string;
  /** What the concept means, as reasons say it. */
  readonly meaning: string;
  /** The lexicon's spelling of the word that matched. */
  readonly form: string;
  /** The languages that word belongs to: BCP 47 tag and name. */
  readonly languages: readonly { readonly code: string; readonly name: string }[];
  /** The text spelled it with look-alike letters from another script. */
  readonly lookalike: boolean;
}

let matcher: WordMatcher | undefined;
let conceptByMeaning: Map<string, string> | undefined;

/** Every lexicon match in `text` (none for a text that means nothing risky). */
export function explainText(text: string): WordExplanation[] {
  matcher ??= new WordMatcher();
  conceptByMeaning ??= new Map(HIGH_RISK_CONCEPTS.map((c) => [c.meaning, c.id]));
  return matcher.match(text).map((m) => ({
    concept: conceptByMeaning!.get(m.meaning) ?? 'configured',
    meaning: m.meaning,
    form: m.word,
    languages: m.languages.map((code) => ({ code, name: LANGUAGES[code as LanguageCode]?.name ?? code })),
    lookalike: m.lookalike,
  }));
}
