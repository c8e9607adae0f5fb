/**
 * Compiles the lexicon into lookup tables once, then finds high-risk words in text by whole words. Pure.
 *
 * Text is folded (`foldText`), segmented (`segmentWords`) and each word also stripped of Latin/Greek/Cyrillic marks
 * (`stripMarks`). Every run of up to {@link MAX_SPAN} consecutive words is looked up as a key: the words joined by one
 * space, and (for entries in scripts written without spaces: Han, Kana, Thai, Hangul) the words joined with nothing,
 * so a dictionary segmenter splitting `卸载` into `卸` + `载`, or Korean written with or without a space, still
 * matches. A key is always aligned on word boundaries: `Postcode` never contains `post`.
 *
 * Three more readings of the same text are looked up, each only when the text calls for it:
 * - Languages matched with their marks kept (Vietnamese, whose tones tell words apart: `mua` buy, `mùa` season) are
 *   also matched without them, but only when the whole text carries no diacritic at all: that is text typed without
 *   them (`Thanh toan`), where the unaccented word is the best reading there is, while any accented text is still
 *   read exactly (`mùa` stays low).
 * - A word mixing Latin and Cyrillic or Greek look-alike letters is read in Latin (`sеnd`) and in Cyrillic
 *   (`oтпpaвить`); the match says it was written with look-alikes.
 * - Text with a right-to-left override (U+202E) is also read in the order it is shown (`visualOrder`).
 */
import {
  HIGH_RISK_CONCEPTS,
  LANGUAGES,
  READ_ONLY_NEIGHBOURS,
  READ_ONLY_PHRASES,
  type LanguageCode,
  type WordsByLanguage,
} from './lexicon.js';
import { Lru } from './lru.js';
import { cyrillicSkeleton, foldText, latinSkeleton, segmentWords, stripMarks, visualOrder } from './normalize.js';

/** Longest run of words looked up as one key. */
const MAX_SPAN = 8;
/** Texts whose matches are kept (labels repeat from call to call; segmenting is the costly step), and the longest. */
const MAX_CACHED_TEXTS = 2048;
const MAX_CACHED_TEXT_LENGTH = 256;
const NO_MATCHES: readonly WordMatch[] = Object.freeze([]);
const UNSPACED_SCRIPT =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Hangul}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;

/** Words a deployment adds to the lexicon: a meaning (an existing concept's or a new one), a language, the words. */
export interface ExtraHighRiskWords {
  /** What the words mean, as reasons say it (`pay`, `send`, `cancel my plan`). */
  readonly meaning: string;
  /** A lexicon language code, or any other tag (reasons then name the tag). */
  readonly language: string;
  readonly words: readonly string[];
}

/** One high-risk word found in text. */
export interface WordMatch {
  /** The lexicon's spelling of the word. */
  readonly word: string;
  readonly meaning: string;
  /** Languages the word belongs to, in lexicon order. */
  readonly languages: readonly string[];
  /** The text spelled it with Cyrillic or Greek look-alike letters among Latin ones. */
  readonly lookalike: boolean;
}

interface Entry {
  readonly word: string;
  readonly meaning: string;
  readonly language: string;
  readonly rank: number;
  /** The language's script (`Latin` when the language is not in the lexicon): look-alike readings match only it. */
  readonly script: string;
}

interface Neighbours {
  readonly before: ReadonlySet<string>;
  readonly after: ReadonlySet<string>;
  /** The same words without marks, for matches made in unaccented text. */
  readonly bareBefore: ReadonlySet<string>;
  readonly bareAfter: ReadonlySet<string>;
}

interface Hit {
  readonly start: number;
  readonly end: number;
  readonly entry: Entry;
  readonly lookalike: boolean;
  /** Matched without the marks its language keeps (unaccented text). */
  readonly bare: boolean;
}

/** Lookup tables: keys with marks stripped, keys with marks kept, and the latter's keys without marks. */
interface Tables {
  readonly stripped: Table;
  readonly exact: Table;
  readonly bare: Table;
}

type Table = Map<string, Entry[]>;

function addKey(table: Table, key: string, entry: Entry): void {
  const list = table.get(key);
  if (!list) table.set(key, [entry]);
  else if (!list.some((e) => e.word === entry.word && e.meaning === entry.meaning && e.language === entry.language)) {
    list.push(entry);
  }
}

/** Finds high-risk words in text; build once, use many times. */
export class WordMatcher {
  /** Keys of entries matched with marks stripped, and of those matched with marks kept (Vietnamese). */
  private readonly high: Tables = { stripped: new Map(), exact: new Map(), bare: new Map() };
  private readonly readOnly: Tables = { stripped: new Map(), exact: new Map(), bare: new Map() };
  private readonly neighbours = new Map<string, Neighbours>();
  /** Most words in a spaced key; runs of unspaced-script words may take up to MAX_SPAN. */
  private maxSpacedWords = 1;
  /**
   * Every prefix of every key in any table (word by word for spaced keys, character by character for joined-up
   * ones): a run of words is extended only while it can still become a key, so most words cost one lookup.
   */
  private readonly prefixes = new Set<string>();
  /** Recent short texts → their matches (frozen, so sharing them is safe). */
  private readonly matched = new Lru<string, readonly WordMatch[]>(MAX_CACHED_TEXTS);

  constructor(extraWords: readonly ExtraHighRiskWords[] = []) {
    const languageOrder = Object.keys(LANGUAGES);
    const rank = (language: string) => {
      const i = languageOrder.indexOf(language);
      return i === -1 ? languageOrder.length : i;
    };
    const add = (tables: Tables, meaning: string, words: WordsByLanguage) => {
      for (const [language, list] of Object.entries(words) as [string, readonly string[]][]) {
        const info = LANGUAGES[language as LanguageCode] as (typeof LANGUAGES)[LanguageCode] | undefined;
        for (const word of list) {
          const entry: Entry = {
            word,
            meaning,
            language,
            rank: rank(language),
            script: info?.script ?? 'Latin',
          };
          const folded = segmentWords(foldText(word));
          if (folded.length === 0) continue;
          const stripped = folded.map(stripMarks);
          if (info?.keepMarks) {
            this.addKeys(tables.exact, folded, word, entry);
            this.addKeys(tables.bare, stripped, word, entry);
          } else {
            this.addKeys(tables.stripped, stripped, word, entry);
          }
        }
      }
    };
    for (const concept of HIGH_RISK_CONCEPTS) add(this.high, concept.meaning, concept.words);
    for (const extra of extraWords) add(this.high, extra.meaning, { [extra.language]: extra.words });
    add(this.readOnly, 'read-only', READ_ONLY_PHRASES);
    for (const [language, n] of Object.entries(READ_ONLY_NEIGHBOURS)) {
      const keep = LANGUAGES[language as LanguageCode].keepMarks === true;
      const fold = (words: readonly string[] = [], bare = false) =>
        new Set(words.flatMap((w) => segmentWords(foldText(w))).map(keep && !bare ? (w) => w : stripMarks));
      this.neighbours.set(language, {
        before: fold(n.before),
        after: fold(n.after),
        bareBefore: fold(n.before, true),
        bareAfter: fold(n.after, true),
      });
    }
  }

  private addKeys(table: Table, tokens: readonly string[], word: string, entry: Entry): void {
    addKey(table, tokens.join(' '), entry);
    for (let k = 1; k <= tokens.length; k++) this.prefixes.add(tokens.slice(0, k).join(' '));
    if (UNSPACED_SCRIPT.test(word)) {
      addKey(table, tokens.join(''), entry);
      let prefix = '';
      for (const char of tokens.join('')) this.prefixes.add((prefix += char));
    }
    this.maxSpacedWords = Math.max(this.maxSpacedWords, Math.min(tokens.length, MAX_SPAN));
  }

  /**
   * The high-risk words in `text`, in order of first appearance, one per word and meaning. Empty when there is none.
   */
  match(text: string): readonly WordMatch[] {
    if (text.length > MAX_CACHED_TEXT_LENGTH) return this.find(text);
    let matches = this.matched.get(text);
    if (matches === undefined) {
      const found = this.find(text);
      matches =
        found.length === 0
          ? NO_MATCHES
          : Object.freeze(found.map((m) => Object.freeze({ ...m, languages: Object.freeze(m.languages) })));
      this.matched.set(text, matches);
    }
    return matches;
  }

  private find(text: string): WordMatch[] {
    const found = this.findIn(text);
    const visual = visualOrder(text);
    if (visual === null) return found;
    for (const m of this.findIn(visual)) {
      if (!found.some((f) => f.word === m.word && f.meaning === m.meaning)) found.push(m);
    }
    return found;
  }

  private findIn(text: string): WordMatch[] {
    const exact = segmentWords(foldText(text));
    if (exact.length === 0) return [];
    const stripped = exact.map(stripMarks);
    // Hits and read-only spans, indexed by the word they start at: containment checks then look back at most
    // MAX_SPAN words, so long text stays linear.
    const hits = new Map<number, Hit[]>();
    const readOnly = new Map<number, number[]>();
    // Joined-up keys only exist for scripts written without spaces; text with none of them needs neither those
    // lookups nor runs longer than the longest spaced entry.
    const unspaced = UNSPACED_SCRIPT.test(text);
    const span = unspaced ? MAX_SPAN : this.maxSpacedWords;
    // No word changed by stripping marks: the text was typed without them.
    const unaccented = exact.every((w, i) => w === stripped[i]);
    this.scan(stripped, exact, hits, readOnly, null, span, unspaced, unaccented);

    for (const [script, skeleton] of [
      ['Latin', latinSkeleton],
      ['Cyrillic', cyrillicSkeleton],
    ] as const) {
      const skeletons = stripped.map(skeleton);
      if (skeletons.every((s) => s === null)) continue;
      const read = stripped.map((w, i) => skeletons[i] ?? w);
      this.scan(read, null, hits, readOnly, script, span, unspaced, false, skeletons);
    }

    const covering = <T>(index: Map<number, T[]>, start: number, covers: (item: T) => boolean): boolean => {
      for (let s = Math.max(0, start - MAX_SPAN); s <= start; s++) if (index.get(s)?.some(covers)) return true;
      return false;
    };
    const kept = new Map<number, Hit[]>();
    for (const [start, list] of hits) {
      const ok = list.filter(
        (h) => !covering(readOnly, start, (end) => h.end <= end) && !this.nextToReadOnlyWord(h, stripped, exact),
      );
      if (ok.length > 0) kept.set(start, ok);
    }
    // A word inside a longer match of the same meaning (`order` in `place order`) adds nothing to the reasons.
    const outermost = [...kept.values()]
      .flat()
      .filter(
        (h) =>
          !covering(
            kept,
            h.start,
            (k) => k.entry.meaning === h.entry.meaning && h.end <= k.end && k.end - k.start > h.end - h.start,
          ),
      );
    outermost.sort((a, b) => a.start - b.start || b.end - a.end);
    const byWord = new Map<string, { word: string; meaning: string; entries: Entry[]; lookalike: boolean }>();
    for (const h of outermost) {
      const key = `${h.entry.word}\u0000${h.entry.meaning}`;
      const found = byWord.get(key);
      if (!found)
        byWord.set(key, { word: h.entry.word, meaning: h.entry.meaning, entries: [h.entry], lookalike: h.lookalike });
      else if (!found.entries.includes(h.entry)) found.entries.push(h.entry);
    }
    return [...byWord.values()].map((m) => ({
      word: m.word,
      meaning: m.meaning,
      languages: [...new Set(m.entries.sort((a, b) => a.rank - b.rank).map((e) => e.language))],
      lookalike: m.lookalike,
    }));
  }

  private scan(
    words: readonly string[],
    exact: readonly string[] | null,
    hits: Map<number, Hit[]>,
    readOnly: Map<number, number[]>,
    lookalike: string | null,
    span: number,
    unspaced: boolean,
    unaccented: boolean,
    skeletons?: readonly (string | null)[],
  ): void {
    const n = words.length;
    for (let i = 0; i < n; i++) {
      let spaced = '';
      let tight = '';
      let exactSpaced = '';
      let exactTight = '';
      let changed = false;
      for (let j = i; j < n && j < i + span; j++) {
        const w = words[j] as string;
        spaced = j === i ? w : `${spaced} ${w}`;
        if (unspaced) tight += w;
        const multi = unspaced && j > i;
        const p = this.prefixes;
        const alive = p.has(spaced) || (multi && p.has(tight));
        let exactAlive = false;
        if (exact) {
          const e = exact[j] as string;
          exactSpaced = j === i ? e : `${exactSpaced} ${e}`;
          if (unspaced) exactTight += e;
          exactAlive = exactSpaced === spaced ? alive : p.has(exactSpaced) || (multi && p.has(exactTight));
        }
        if (!alive && !exactAlive) break;
        if (skeletons && skeletons[j] !== null) changed = true;
        if (lookalike !== null && !changed) continue;
        if (alive) {
          this.collect(this.high.stripped, spaced, tight, multi, i, j + 1, hits, lookalike, false);
          this.collectReadOnly(this.readOnly.stripped, spaced, tight, multi, i, j + 1, readOnly);
          if (unaccented) {
            this.collect(this.high.bare, spaced, tight, multi, i, j + 1, hits, null, true);
            this.collectReadOnly(this.readOnly.bare, spaced, tight, multi, i, j + 1, readOnly);
          }
        }
        if (exactAlive) {
          this.collect(this.high.exact, exactSpaced, exactTight, multi, i, j + 1, hits, null, false);
          this.collectReadOnly(this.readOnly.exact, exactSpaced, exactTight, multi, i, j + 1, readOnly);
        }
      }
    }
  }

  private collect(
    table: Table,
    spaced: string,
    tight: string,
    multi: boolean,
    start: number,
    end: number,
    hits: Map<number, Hit[]>,
    lookalike: string | null,
    bare: boolean,
  ): void {
    const byKey = table.get(spaced);
    const byTight = multi ? table.get(tight) : undefined;
    if (byKey) this.push(byKey, start, end, hits, lookalike, bare);
    if (byTight) this.push(byTight, start, end, hits, lookalike, bare);
  }

  private push(
    entries: readonly Entry[],
    start: number,
    end: number,
    hits: Map<number, Hit[]>,
    lookalike: string | null,
    bare: boolean,
  ): void {
    for (const entry of entries) {
      if (lookalike !== null && entry.script !== lookalike) continue;
      let list = hits.get(start);
      if (!list) hits.set(start, (list = []));
      if (!list.some((h) => h.end === end && h.entry === entry)) {
        list.push({ start, end, entry, lookalike: lookalike !== null, bare });
      }
    }
  }

  private collectReadOnly(
    table: Table,
    spaced: string,
    tight: string,
    multi: boolean,
    start: number,
    end: number,
    readOnly: Map<number, number[]>,
  ): void {
    if (!table.has(spaced) && !(multi && table.has(tight))) return;
    const ends = readOnly.get(start);
    if (ends) ends.push(end);
    else readOnly.set(start, [end]);
  }

  private nextToReadOnlyWord(hit: Hit, stripped: readonly string[], exact: readonly string[]): boolean {
    const n = this.neighbours.get(hit.entry.language);
    if (!n) return false;
    const exactly = LANGUAGES[hit.entry.language as LanguageCode].keepMarks === true && !hit.bare;
    const words = exactly ? exact : stripped;
    const before = words[hit.start - 1];
    const after = words[hit.end];
    const [b, a] = hit.bare ? [n.bareBefore, n.bareAfter] : [n.before, n.after];
    return (before !== undefined && b.has(before)) || (after !== undefined && a.has(after));
  }
}
