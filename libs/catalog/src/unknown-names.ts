/**
 * What a model is told when it calls a tool name that does not exist: the closest offered names (edit distance and
 * word overlap), an offered tool's skill keyword the name mentions, or how to search the directory. Pure; the words
 * and letter counts of each offered tool are worked out once per catalog entry.
 */
import type { CatalogEntry } from './catalog.js';
import type { GrantCheck } from './grants.js';
import { contentWords, editDistance, quote } from './text.js';
import { CORE_EXTENSION_NAME, splitToolName } from './tool-definition.js';

const SEARCH_TOOL = `${CORE_EXTENSION_NAME}.search_tools`;
const ACTIVATE_TOOL = `${CORE_EXTENSION_NAME}.activate_tool`;
/** Names longer than this get no edit-distance suggestions (bounded work on hostile input). */
const MAX_SUGGESTION_NAME = 128;

/** What an offered tool's name is matched on, worked out once per catalog entry. */
interface NameText {
  readonly name: string;
  /** The part after the extension (`send_message`), which a model often calls alone. */
  readonly toolPart: string;
  /** The distinct {@link words} of the name. */
  readonly words: ReadonlySet<string>;
  /** Character counts of the name and of its tool part: {@link BUCKETS} bucket, count, bucket, count, ... */
  readonly nameCounts: Int32Array;
  readonly toolPartCounts: Int32Array;
}

/** One skill keyword of an offered tool, with its words. */
interface SkillText {
  readonly keyword: string;
  /** {@link words} of the keyword: a called name mentions the skill when it has all of them. */
  readonly needed: readonly string[];
}

const nameTexts = new WeakMap<CatalogEntry, NameText>();
const skillTexts = new WeakMap<CatalogEntry, readonly SkillText[]>();

/** Code units are counted in this many buckets (code unit modulo it); zero between calls in {@link calledCounts}. */
const BUCKETS = 128;
const calledCounts = new Int32Array(BUCKETS);

/** Code units of `text` counted per bucket (code unit modulo {@link BUCKETS}), as bucket, count pairs. */
function countsOf(text: string): Int32Array {
  const counts = new Map<number, number>();
  for (let i = 0; i < text.length; i++) {
    const bucket = text.charCodeAt(i) % BUCKETS;
    counts.set(bucket, (counts.get(bucket) ?? 0) + 1);
  }
  return Int32Array.from([...counts].flat());
}

export function nameTextOf(entry: CatalogEntry): NameText {
  let text = nameTexts.get(entry);
  if (!text) {
    const toolPart = splitToolName(entry.name)?.tool ?? entry.name;
    text = {
      name: entry.name,
      toolPart,
      words: new Set(contentWords(entry.name)),
      nameCounts: countsOf(entry.name),
      toolPartCounts: countsOf(toolPart),
    };
    nameTexts.set(entry, text);
  }
  return text;
}

function skillTextsOf(entry: CatalogEntry): readonly SkillText[] {
  let texts = skillTexts.get(entry);
  if (!texts) {
    texts = (entry.definition.skills ?? []).map((keyword) => ({ keyword, needed: contentWords(keyword) }));
    skillTexts.set(entry, texts);
  }
  return texts;
}

/** The tools a grant offers from one catalog, with what unknown names are matched against. */
export interface Offered {
  /** One version per tool, sorted by name. */
  readonly entries: readonly CatalogEntry[];
  /** Parallel to `entries`. */
  readonly names: readonly NameText[];
  /** Every skill keyword of every offered tool, in tool order then keyword order (the order they are tried in). */
  readonly skills: readonly SkillText[];
  /** First word of a keyword → indexes into `skills`, ascending. */
  readonly skillsByFirstWord: ReadonlyMap<string, readonly number[]>;
  /** Lowercased keyword → the offered tools that list it (any case), in tool order. */
  readonly skillTools: ReadonlyMap<string, readonly string[]>;
  readonly canSearch: boolean;
}

export function offeredFrom(entries: readonly CatalogEntry[]): Offered {
  const skills: SkillText[] = [];
  const skillsByFirstWord = new Map<string, number[]>();
  const skillTools = new Map<string, string[]>();
  for (const entry of entries) {
    const listed = new Set<string>();
    for (const skill of skillTextsOf(entry)) {
      if (skill.needed.length > 0) {
        const first = skill.needed[0]!;
        const list = skillsByFirstWord.get(first);
        if (list) list.push(skills.length);
        else skillsByFirstWord.set(first, [skills.length]);
        skills.push(skill);
      }
      const lower = skill.keyword.toLowerCase();
      if (listed.has(lower)) continue;
      listed.add(lower);
      const tools = skillTools.get(lower);
      if (tools) tools.push(entry.name);
      else skillTools.set(lower, [entry.name]);
    }
  }
  return {
    entries,
    names: entries.map(nameTextOf),
    skills,
    skillsByFirstWord,
    skillTools,
    canSearch: entries.some((e) => e.name === SEARCH_TOOL),
  };
}

export const NOTHING_OFFERED = offeredFrom([]);

/** Jaccard overlap of two word sets, 0 to 1 (as `wordOverlap` in text.ts). */
function overlapOf(left: ReadonlySet<string>, right: ReadonlySet<string>): number {
  if (left.size === 0 || right.size === 0) return 0;
  let shared = 0;
  for (const w of left) if (right.has(w)) shared++;
  return shared / (left.size + right.size - shared);
}

/**
 * A lower bound of the edit distance between the text counted in {@link calledCounts} (`length` code units) and a
 * text of `otherLength` code units counted in `other`: every edit adds, removes or changes one character and a swap
 * changes none, so the distance is at least the larger number of characters either text has in excess of the other
 * (per bucket, which can only lower it).
 */
function countBound(length: number, other: Int32Array, otherLength: number): number {
  let excess = 0;
  for (let i = 0; i < other.length; i += 2) {
    const more = other[i + 1]! - calledCounts[other[i]!]!;
    if (more > 0) excess += more;
  }
  // The called text's own excess is what the lengths differ by, plus the other's excess.
  return Math.max(excess, excess + length - otherLength);
}

/**
 * The (at most three) offered names closest to `name`, best first: each scores its word overlap with the name plus,
 * when the edit distance to the whole name or its tool part is within a cap of about a quarter of the shorter
 * length, how close that is; a name with neither a distance within the cap nor half its words shared is not
 * suggested. Ties go to the name that sorts first.
 *
 * Edit distance is only computed where it can matter: a name whose lower bound (length difference, then
 * {@link countBound}) exceeds the cap scores on word overlap alone, and one whose best possible score cannot beat the
 * third best found so far is skipped.
 */
function closestNames(name: string, offered: Offered): string[] {
  if (name.length > MAX_SUGGESTION_NAME) return [];
  const lower = name.toLowerCase();
  const length = lower.length;
  const called = new Set(contentWords(name));
  for (let i = 0; i < length; i++) calledCounts[lower.charCodeAt(i) % BUCKETS]!++;
  // The best three so far, best first. Names come in sorted order, so a later name never wins a tie.
  const best: { name: string; score: number }[] = [];
  try {
    for (const candidate of offered.names) {
      const full = candidate.name;
      const part = candidate.toolPart;
      const cap = Math.max(2, Math.floor(Math.min(length, full.length) / 4));
      const overlap = overlapOf(called, candidate.words);
      const far = overlap < 0.5;
      let fullBound = Math.abs(length - full.length);
      let partBound = Math.abs(length - part.length);
      if (far && fullBound > cap && partBound > cap) continue;
      if (fullBound <= cap) fullBound = countBound(length, candidate.nameCounts, full.length);
      if (partBound <= cap) partBound = countBound(length, candidate.toolPartCounts, part.length);
      const bound = Math.min(fullBound, partBound);
      if (far && bound > cap) continue;
      if (best.length === 3 && (bound <= cap ? 1 - bound / (cap + 1) : 0) + overlap <= best[2]!.score) continue;
      const distance = Math.min(
        fullBound <= cap ? editDistance(lower, full, cap) : cap + 1,
        partBound <= cap ? editDistance(lower, part, cap) : cap + 1,
      );
      if (distance > cap && far) continue;
      const score = (distance <= cap ? 1 - distance / (cap + 1) : 0) + overlap;
      let at = best.length;
      while (at > 0 && best[at - 1]!.score < score) at--;
      if (at < 3) {
        best.splice(at, 0, { name: full, score });
        if (best.length > 3) best.pop();
      }
    }
  } finally {
    for (let i = 0; i < length; i++) calledCounts[lower.charCodeAt(i) % BUCKETS]!--;
  }
  return best.map((s) => s.name);
}

/** The first skill keyword (in tool order, then keyword order) all of whose words `name` has, with its tools. */
function matchingSkill(name: string, offered: Offered): { keyword: string; tools: string[] } | undefined {
  if (name.length > MAX_SUGGESTION_NAME) return undefined;
  const called = new Set(contentWords(name));
  let first = -1;
  for (const w of called) {
    for (const i of offered.skillsByFirstWord.get(w) ?? []) {
      if (first !== -1 && i >= first) break;
      if (offered.skills[i]!.needed.every((n) => called.has(n))) first = i;
    }
  }
  if (first === -1) return undefined;
  const { keyword } = offered.skills[first]!;
  return { keyword, tools: [...(offered.skillTools.get(keyword.toLowerCase()) ?? [])] };
}

/** The `unknown` answer for `text` (the called name, or '' when it was not text), naming `shownName`. Frozen. */
export function unknownAnswer(text: string, shownName: string, offered: Offered): GrantCheck {
  const shown = quote(shownName, 80);
  const suggestions = closestNames(text, offered);
  const skill = matchingSkill(text, offered);
  let message = `There is no tool named ${shown}.`;
  if (suggestions.length > 0) {
    message += ` Did you mean ${suggestions.join(' or ')}? Call it by that exact name.`;
  }
  if (skill) {
    message += ` For ${quote(skill.keyword)}, use ${skill.tools.join(' or ')}.`;
  }
  if (suggestions.length === 0 && !skill) {
    const query = contentWords(text.slice(0, MAX_SUGGESTION_NAME)).join(' ') || 'what you want to do';
    message += offered.canSearch
      ? ` Search the tool directory with ${SEARCH_TOOL} (e.g. {"query": ${JSON.stringify(query)}}) and activate what you find with ${ACTIVATE_TOOL}.`
      : ' Use only the tools you were offered.';
  }
  return Object.freeze({
    kind: 'unknown',
    message,
    suggestions: Object.freeze(suggestions),
    ...(skill ? { skill: Object.freeze({ keyword: skill.keyword, tools: Object.freeze(skill.tools) }) } : {}),
  });
}
