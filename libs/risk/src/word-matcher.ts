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
import {
  cyrillicSkeleton,
  foldText,
  hasCyrillicOrGreek,
  hasUnspacedScript,
  latinSkeleton,
  segmentWords,
  stripMarks,
  visualOrder,
} from './normalize.js';

/** Longest run of words looked up as one key. */
const MAX_SPAN = 8;
/** Texts whose matches are kept (labels repeat from call to call; segmenting is the costly step), and the longest. */
const MAX_CACHED_TEXTS = 2048;
const MAX_CACHED_TEXT_LENGTH = 256;
/** Slots of the table that marks texts seen once (a power of two). */
const SEEN_SLOTS = 8192;
const NO_MATCHES: readonly WordMatch[] = Object.freeze([]);

/** A 32-bit fingerprint of `text` (FNV-1a over its code units), never 0 (the mark of an empty slot). */
function fingerprint(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h === 0 ? 1 : h;
}

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

/** A lexicon word with one meaning: what a match reports, and the readings of it handed out so far. */
interface Group {
  readonly word: string;
  readonly meaning: string;
  /** Frozen matches of this word and meaning (per set of languages and look-alike flag), shared between texts. */
  readonly readings: WordMatch[];
}

interface Entry {
  readonly word: string;
  readonly meaning: string;
  readonly language: string;
  readonly rank: number;
  /** The language's script (`Latin` when the language is not in the lexicon): look-alike readings match only it. */
  readonly script: string;
  /** The language matches with its marks kept (Vietnamese). */
  readonly keepMarks: boolean;
  /** Words of the language that make a match beside them read-only. */
  readonly neighbours: Neighbours | undefined;
  readonly group: Group;
  /** The match of this word read in this language alone (the usual one), shared through the group's readings. */
  readonly alone: WordMatch;
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

/**
 * What the scans of one text found, by the word each span starts at: containment checks then look back at most
 * {@link MAX_SPAN} words, so long text stays linear. Both lists are made only when something is found, so a text
 * with no lexicon word (the common case) costs no more than its lookups.
 */
class Found {
  /** Hits starting at each word, in the order they were found. */
  hits: (Hit[] | undefined)[] | undefined;
  /** The furthest end of a read-only span starting at each word (0: none). */
  readOnlyEnd: number[] | undefined;

  constructor(private readonly words: number) {}

  hit(start: number, end: number, entry: Entry, lookalike: boolean, bare: boolean): void {
    const hits = (this.hits ??= new Array<Hit[] | undefined>(this.words));
    let list = hits[start];
    if (list === undefined) hits[start] = list = [];
    else for (const h of list) if (h.end === end && h.entry === entry) return;
    list.push({ start, end, entry, lookalike, bare });
  }

  readOnly(start: number, end: number): void {
    const ends = (this.readOnlyEnd ??= new Array<number>(this.words).fill(0));
    if (end > (ends[start] as number)) ends[start] = end;
  }
}

/** How a key's words are spelled: marks stripped, marks kept (Vietnamese), or the latter's words without marks. */
type Spelling = 'stripped' | 'exact' | 'bare';

/**
 * One key of the lexicon: a run of words as looked up (joined by a space, or joined up for scripts written without
 * spaces), or the start of a longer one. Every start of every key is present, so a run of words is extended only
 * while it can still become a key, and one lookup per word says both whether to go on and what the run is.
 */
class Key {
  /** High-risk entries spelled this way. */
  stripped: Entry[] | undefined;
  exact: Entry[] | undefined;
  bare: Entry[] | undefined;
  /** A read-only phrase is spelled this way. */
  readOnlyStripped = false;
  readOnlyExact = false;
  readOnlyBare = false;
  /** Some key goes on from this one with a space and another word. */
  longer = false;
  /** Some key goes on from this one with more characters, joined up. */
  longerJoined = false;
}

/** The look-alike readings of a text: words read in Latin, and words read in Cyrillic. */
const SKELETONS = [
  ['Latin', latinSkeleton],
  ['Cyrillic', cyrillicSkeleton],
] as const;
/** Most distinct readings (language sets, look-alike or not) of one word kept for sharing; more are made afresh. */
const MAX_READINGS = 64;

function sameLanguages(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Finds high-risk words in text; build once, use many times. */
export class WordMatcher {
  /** Every key and every start of one (see {@link Key}). */
  private readonly keys = new Map<string, Key>();
  /** The first code unit of every key (1), so most words that start none are passed over without a lookup. */
  private readonly starts = new Uint8Array(0x10000);
  /**
   * The first code unit of the first word of every entry in a script written with spaces (1). Every start of a
   * joined-up key is a key too, so a joined-up run goes on only from a key, except into such a word (`pa` + `y`
   * read joined up is `pay`): a run can reach one only from a word starting like it.
   */
  private readonly looseStarts = new Uint8Array(0x10000);
  /** Most words in a spaced key; runs of unspaced-script words may take up to MAX_SPAN. */
  private maxSpacedWords = 1;
  /** Recent short texts → their matches (frozen, so sharing them is safe). */
  private readonly matched = new Lru<string, readonly WordMatch[]>(MAX_CACHED_TEXTS);
  /** Fingerprints of recent texts (see {@link match}). */
  private readonly seen = new Int32Array(SEEN_SLOTS);

  constructor(extraWords: readonly ExtraHighRiskWords[] = []) {
    const neighbours = new Map<string, Neighbours>();
    for (const [language, n] of Object.entries(READ_ONLY_NEIGHBOURS)) {
      const keep = LANGUAGES[language as LanguageCode].keepMarks === true;
      const fold = (words: readonly string[] = [], bare = false) =>
        new Set(words.flatMap((w) => segmentWords(foldText(w))).map(keep && !bare ? (w) => w : stripMarks));
      neighbours.set(language, {
        before: fold(n.before),
        after: fold(n.after),
        bareBefore: fold(n.before, true),
        bareAfter: fold(n.after, true),
      });
    }
    const groups = new Map<string, Group>();
    const group = (word: string, meaning: string) => {
      const key = `${word}\u0000${meaning}`;
      let g = groups.get(key);
      if (!g) groups.set(key, (g = { word, meaning, readings: [] }));
      return g;
    };
    const languageOrder = Object.keys(LANGUAGES);
    const rank = (language: string) => {
      const i = languageOrder.indexOf(language);
      return i === -1 ? languageOrder.length : i;
    };
    // `readOnly`: the words are read-only phrases, which only cover what they contain.
    const add = (readOnly: boolean, meaning: string, words: WordsByLanguage) => {
      for (const [language, list] of Object.entries(words) as [string, readonly string[]][]) {
        const info = LANGUAGES[language as LanguageCode] as (typeof LANGUAGES)[LanguageCode] | undefined;
        for (const word of list) {
          const g = group(word, meaning);
          const entry: Entry = {
            word,
            meaning,
            language,
            rank: rank(language),
            script: info?.script ?? 'Latin',
            keepMarks: info?.keepMarks === true,
            neighbours: neighbours.get(language),
            group: g,
            alone: reading(g, [language], false),
          };
          const folded = segmentWords(foldText(word));
          if (folded.length === 0) continue;
          const stripped = folded.map(stripMarks);
          const kept = readOnly ? null : entry;
          if (info?.keepMarks) {
            this.addKeys(folded, word, 'exact', kept);
            this.addKeys(stripped, word, 'bare', kept);
          } else {
            this.addKeys(stripped, word, 'stripped', kept);
          }
        }
      }
    };
    for (const concept of HIGH_RISK_CONCEPTS) add(false, concept.meaning, concept.words);
    for (const extra of extraWords) add(false, extra.meaning, { [extra.language]: extra.words });
    add(true, 'read-only', READ_ONLY_PHRASES);
  }

  private key(text: string): Key {
    let key = this.keys.get(text);
    if (!key) {
      this.keys.set(text, (key = new Key()));
      this.starts[text.charCodeAt(0)] = 1;
    }
    return key;
  }

  /** Adds `tokens` as a key spelled `spelling`: of `entry`, or of a read-only phrase when `entry` is null. */
  private addKeys(tokens: readonly string[], word: string, spelling: Spelling, entry: Entry | null): void {
    this.addKey(tokens.join(' '), spelling, entry);
    for (let k = 1; k <= tokens.length; k++) this.key(tokens.slice(0, k).join(' ')).longer ||= k < tokens.length;
    if (hasUnspacedScript(word)) {
      const joined = tokens.join('');
      this.addKey(joined, spelling, entry);
      let prefix = '';
      for (const char of joined) this.key((prefix += char)).longerJoined ||= prefix.length < joined.length;
    } else {
      this.looseStarts[(tokens[0] as string).charCodeAt(0)] = 1;
    }
    this.maxSpacedWords = Math.max(this.maxSpacedWords, Math.min(tokens.length, MAX_SPAN));
  }

  private addKey(text: string, spelling: Spelling, entry: Entry | null): void {
    const key = this.key(text);
    if (entry === null) {
      if (spelling === 'stripped') key.readOnlyStripped = true;
      else if (spelling === 'exact') key.readOnlyExact = true;
      else key.readOnlyBare = true;
      return;
    }
    const list = key[spelling];
    if (!list) key[spelling] = [entry];
    else if (!list.some((e) => e.word === entry.word && e.meaning === entry.meaning && e.language === entry.language)) {
      list.push(entry);
    }
  }

  /**
   * The high-risk words in `text`, in order of first appearance, one per word and meaning. Empty when there is none.
   * Each match is frozen and shared with every other text that has the same reading of the same word.
   */
  match(text: string): readonly WordMatch[] {
    if (text.length > MAX_CACHED_TEXT_LENGTH) return this.find(text);
    // A text is kept only once it comes back: one seen once is only marked (a fingerprint in a small table), so
    // labels that never come back cost the cache nothing, neither a lookup nor room.
    const print = fingerprint(text);
    const slot = print & (SEEN_SLOTS - 1);
    if (this.seen[slot] !== print) {
      this.seen[slot] = print;
      return this.find(text);
    }
    let matches = this.matched.get(text);
    if (matches === undefined) {
      const found = this.find(text);
      matches = found.length === 0 ? NO_MATCHES : Object.freeze(found);
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
    const folded = foldText(text);
    const exact = segmentWords(folded);
    const n = exact.length;
    if (n === 0) return [];
    // The words without marks; the same array when no word has any (the text was typed without them).
    let stripped = exact;
    for (let i = 0; i < n; i++) {
      const word = exact[i] as string;
      const bare = stripMarks(word);
      if (bare !== word) (stripped === exact ? (stripped = exact.slice()) : stripped)[i] = bare;
    }
    const unaccented = stripped === exact;
    const found = new Found(n);
    // Joined-up keys only exist for scripts written without spaces; text with none of them needs neither those
    // lookups nor runs longer than the longest spaced entry.
    const unspaced = hasUnspacedScript(text);
    const span = unspaced ? MAX_SPAN : this.maxSpacedWords;
    this.scan(stripped, exact, found, null, span, unspaced, unaccented);

    // Look-alike readings need a Cyrillic or Greek letter somewhere (both skeletons return null without one).
    if (hasCyrillicOrGreek(folded)) {
      for (const [script, skeleton] of SKELETONS) {
        let read: string[] | undefined;
        let changed: boolean[] | undefined;
        for (let i = 0; i < n; i++) {
          const s = skeleton(stripped[i] as string);
          if (s === null) continue;
          (read ??= stripped.slice())[i] = s;
          (changed ??= new Array<boolean>(n).fill(false))[i] = true;
        }
        if (read) this.scan(read, null, found, script, span, unspaced, false, changed);
      }
    }

    const hits = found.hits;
    if (hits === undefined) return [];
    const readOnlyEnd = found.readOnlyEnd;
    // Hits not inside a read-only phrase nor beside a read-only word, by start and then in the order found.
    const kept: Hit[] = [];
    for (let start = 0; start < n; start++) {
      const list = hits[start];
      if (list === undefined) continue;
      let covered = 0;
      if (readOnlyEnd) {
        for (let s = Math.max(0, start - MAX_SPAN); s <= start; s++)
          covered = Math.max(covered, readOnlyEnd[s] as number);
      }
      for (const h of list) if (h.end > covered && !nextToReadOnlyWord(h, stripped, exact)) kept.push(h);
    }
    if (kept.length === 0) return [];
    // A word inside a longer match of the same meaning (`order` in `place order`) adds nothing to the reasons.
    const outermost = kept.filter((h, i) => !insideLonger(kept, i, h));
    // By start, longest first (already by start, so this only reorders hits that start together).
    if (outermost.length === 1) {
      const [h] = outermost as [Hit];
      return [h.lookalike ? reading(h.entry.group, [h.entry.language], true) : h.entry.alone];
    }
    insertionSort(outermost, (a, b) => a.start - b.start || b.end - a.end);
    // One match per word and meaning, with every language that matched it.
    const byGroup = new Map<Group, { group: Group; entries: Entry[]; lookalike: boolean }>();
    for (const h of outermost) {
      const { group } = h.entry;
      const g = byGroup.get(group);
      if (!g) byGroup.set(group, { group, entries: [h.entry], lookalike: h.lookalike });
      else if (!g.entries.includes(h.entry)) g.entries.push(h.entry);
    }
    const matches: WordMatch[] = [];
    for (const { group, entries, lookalike } of byGroup.values()) {
      if (entries.length === 1 && !lookalike) {
        matches.push((entries[0] as Entry).alone);
        continue;
      }
      insertionSort(entries, (a, b) => a.rank - b.rank);
      const languages: string[] = [];
      for (const e of entries) if (!languages.includes(e.language)) languages.push(e.language);
      matches.push(reading(group, languages, lookalike));
    }
    return matches;
  }

  private scan(
    words: readonly string[],
    exact: readonly string[] | null,
    found: Found,
    lookalike: string | null,
    span: number,
    unspaced: boolean,
    unaccented: boolean,
    changedAt?: readonly boolean[],
  ): void {
    const n = words.length;
    const { keys, starts, looseStarts } = this;
    for (let i = 0; i < n; i++) {
      let spaced = '';
      let tight = '';
      let exactSpaced = '';
      let exactTight = '';
      // The exact run is still the same words as the run (no mark stripped so far): the same keys.
      let same = true;
      let changed = false;
      // Whether the run (and the exact run) read spaced, and read joined up, may still be a key or start one: a
      // run goes on only while one may, and looks up only the readings that may.
      let goSpaced = false;
      let goTight = false;
      let goExactSpaced = false;
      let goExactTight = false;
      const loose = unspaced && looseStarts[(words[i] as string).charCodeAt(0)] === 1;
      const exactLoose = unspaced && exact !== null && looseStarts[(exact[i] as string).charCodeAt(0)] === 1;
      for (let j = i; j < n && j < i + span; j++) {
        const w = words[j] as string;
        const e = exact === null ? w : (exact[j] as string);
        if (same && e !== w) {
          // The exact run parts from the run here; up to here it was the run.
          same = false;
          exactSpaced = spaced;
          exactTight = tight;
          goExactSpaced = goSpaced;
          goExactTight = goTight;
        }
        let bySpaced: Key | undefined;
        let byTight: Key | undefined;
        if (j === i) {
          spaced = w;
          tight = w;
          if (starts[w.charCodeAt(0)] === 1) bySpaced = keys.get(w);
        } else {
          if (goSpaced) bySpaced = keys.get((spaced = `${spaced} ${w}`));
          if (goTight) byTight = keys.get((tight += w));
        }
        let exactBySpaced = bySpaced;
        let exactByTight = byTight;
        if (!same) {
          exactBySpaced = undefined;
          exactByTight = undefined;
          if (j === i) {
            exactSpaced = e;
            exactTight = e;
            if (starts[e.charCodeAt(0)] === 1) exactBySpaced = keys.get(e);
          } else {
            if (goExactSpaced) exactBySpaced = keys.get((exactSpaced = `${exactSpaced} ${e}`));
            if (goExactTight) exactByTight = keys.get((exactTight += e));
          }
        }
        const alive = bySpaced !== undefined || byTight !== undefined;
        const exactAlive = exact !== null && (exactBySpaced !== undefined || exactByTight !== undefined);
        if (!alive && !exactAlive) break;
        if (changedAt?.[j] === true) changed = true;
        if (lookalike === null || changed) {
          const end = j + 1;
          if (alive) {
            hits(bySpaced?.stripped, byTight?.stripped, i, end, found, lookalike, false);
            if (bySpaced?.readOnlyStripped === true || byTight?.readOnlyStripped === true) found.readOnly(i, end);
            if (unaccented) {
              hits(bySpaced?.bare, byTight?.bare, i, end, found, null, true);
              if (bySpaced?.readOnlyBare === true || byTight?.readOnlyBare === true) found.readOnly(i, end);
            }
          }
          if (exactAlive) {
            hits(exactBySpaced?.exact, exactByTight?.exact, i, end, found, null, false);
            if (exactBySpaced?.readOnlyExact === true || exactByTight?.readOnlyExact === true) {
              found.readOnly(i, end);
            }
          }
        }
        goSpaced = bySpaced?.longer === true;
        goTight = unspaced && (loose || (j === i ? bySpaced : byTight)?.longerJoined === true);
        if (same) {
          goExactSpaced = goSpaced;
          goExactTight = goTight;
        } else {
          goExactSpaced = exactBySpaced?.longer === true;
          goExactTight = unspaced && (exactLoose || (j === i ? exactBySpaced : exactByTight)?.longerJoined === true);
        }
        if (!goSpaced && !goTight && !goExactSpaced && !goExactTight) break;
      }
    }
  }
}

/** Records the entries of a run's spaced key, then of its joined-up key (a look-alike reading keeps its script's). */
function hits(
  bySpaced: readonly Entry[] | undefined,
  byTight: readonly Entry[] | undefined,
  start: number,
  end: number,
  found: Found,
  lookalike: string | null,
  bare: boolean,
): void {
  if (bySpaced) push(bySpaced, start, end, found, lookalike, bare);
  if (byTight) push(byTight, start, end, found, lookalike, bare);
}

function push(
  entries: readonly Entry[],
  start: number,
  end: number,
  found: Found,
  lookalike: string | null,
  bare: boolean,
): void {
  for (const entry of entries) {
    if (lookalike !== null && entry.script !== lookalike) continue;
    found.hit(start, end, entry, lookalike !== null, bare);
  }
}

function nextToReadOnlyWord(hit: Hit, stripped: readonly string[], exact: readonly string[]): boolean {
  const n = hit.entry.neighbours;
  if (!n) return false;
  const words = hit.entry.keepMarks && !hit.bare ? exact : stripped;
  const before = words[hit.start - 1];
  const after = words[hit.end];
  const [b, a] = hit.bare ? [n.bareBefore, n.bareAfter] : [n.before, n.after];
  return (before !== undefined && b.has(before)) || (after !== undefined && a.has(after));
}

/**
 * Whether another of `kept` (ordered by start) with the same meaning spans `h` and more: it starts at most
 * {@link MAX_SPAN} words before `h`, so only those neighbours are looked at.
 */
function insideLonger(kept: readonly Hit[], index: number, h: Hit): boolean {
  const covers = (k: Hit) => k.entry.meaning === h.entry.meaning && h.end <= k.end && k.end - k.start > h.end - h.start;
  for (let b = index - 1; b >= 0 && (kept[b] as Hit).start >= h.start - MAX_SPAN; b--)
    if (covers(kept[b] as Hit)) return true;
  for (let b = index + 1; b < kept.length && (kept[b] as Hit).start === h.start; b++)
    if (covers(kept[b] as Hit)) return true;
  return false;
}

/**
 * Sorts `items` in place, stably. The lists sorted here are short or nearly in order, where this is linear and,
 * unlike `Array.prototype.sort`, allocates nothing.
 */
function insertionSort<T>(items: T[], compare: (a: T, b: T) => number): void {
  for (let i = 1; i < items.length; i++) {
    const item = items[i] as T;
    let j = i - 1;
    for (; j >= 0 && compare(items[j] as T, item) > 0; j--) items[j + 1] = items[j] as T;
    items[j + 1] = item;
  }
}

/** The shared, frozen match of `group` read in `languages`; a new one past {@link MAX_READINGS}. */
function reading(group: Group, languages: string[], lookalike: boolean): WordMatch {
  for (const r of group.readings) if (r.lookalike === lookalike && sameLanguages(r.languages, languages)) return r;
  const r: WordMatch = Object.freeze({
    word: group.word,
    meaning: group.meaning,
    languages: Object.freeze(languages),
    lookalike,
  });
  if (group.readings.length < MAX_READINGS) group.readings.push(r);
  return r;
}
