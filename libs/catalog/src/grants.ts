/**
 * Grants: which tools an agent of a tenant may be offered and may call. Allow and deny rules by extension, tool and
 * version; deny wins; pinned versions are honoured exactly and never moved to another version.
 */
import { identifierProblem } from '@ormuz/contracts';
import { LRUCache } from 'lru-cache';
import type { Catalog, CatalogEntry } from './catalog.js';
import { GrantError } from './errors.js';
import { contentWords, editDistance, quote } from './text.js';
import { CORE_EXTENSION_NAME, splitToolName } from './tool-definition.js';

/** What one agent of one tenant may use. */
export interface Grant {
  readonly tenant: string;
  readonly agent_id: string;
  /** Rules: `device` (every tool of the extension), `device.tap` (every version), `device.tap@1` (one version). */
  readonly allow: readonly string[];
  /** Same rule forms; a tool version matched by any deny rule is never offered or allowed. */
  readonly deny?: readonly string[];
  /**
   * Tool name → the one version this grant offers. Without a pin, the highest allowed version is offered; store
   * grants pinned (see {@link pinGrant}) so that publishing a new version never changes what they allow.
   */
  readonly pins?: Readonly<Record<string, number>>;
}

/** A parsed grant rule. */
export interface GrantRule {
  readonly extension: string;
  readonly tool?: string;
  readonly version?: number;
}

const RULE = /^([a-z][a-z0-9]*(?:_[a-z0-9]+)*)(?:\.([a-z][a-z0-9]*(?:_[a-z0-9]+)*)(?:@([1-9][0-9]{0,8}))?)?$/;

/** Parses `device`, `device.tap` or `device.tap@1`. Throws {@link GrantError} for anything else. */
export function parseGrantRule(rule: string): GrantRule {
  const m = typeof rule === 'string' ? RULE.exec(rule) : null;
  if (!m) {
    throw new GrantError(
      `Grant rule ${typeof rule === 'string' ? quote(rule) : String(rule)} is not valid; write an extension ("device"), a tool ("device.tap") or one version ("device.tap@1").`,
    );
  }
  const [, extension, tool, version] = m;
  return {
    extension: extension!,
    ...(tool === undefined ? {} : { tool: `${extension}.${tool}` }),
    ...(version === undefined ? {} : { version: Number(version) }),
  };
}

interface CompiledGrant {
  readonly allow: readonly GrantRule[];
  readonly deny: readonly GrantRule[];
  readonly pins: ReadonlyMap<string, number>;
  /** What this grant offers from each catalog it was checked against, worked out once (see {@link GrantView}). */
  readonly views: WeakMap<Catalog, GrantView>;
}

const compiledGrants = new WeakMap<Grant, CompiledGrant | GrantError>();

/** Whether {@link splitToolName} would split `name` (exactly one dot, with text on both sides), without splitting. */
function isToolNameShape(name: string): boolean {
  const dot = name.indexOf('.');
  return dot > 0 && dot === name.lastIndexOf('.') && dot < name.length - 1;
}

function compile(grant: Grant): CompiledGrant | GrantError {
  let compiled = compiledGrants.get(grant);
  if (!compiled) {
    try {
      for (const [field, value] of [
        ['tenant', grant.tenant],
        ['agent_id', grant.agent_id],
      ] as const) {
        const problem = identifierProblem(value);
        if (problem) throw new GrantError(`The grant's ${field} is not valid: ${problem}.`);
      }
      if (!Array.isArray(grant.allow) || (grant.deny !== undefined && !Array.isArray(grant.deny))) {
        throw new GrantError('A grant needs `allow` (and optionally `deny`) as lists of rules.');
      }
      const pins = new Map<string, number>();
      const pinned = grant.pins ?? {};
      for (const tool of Object.keys(pinned)) {
        const version = pinned[tool]!;
        if (!isToolNameShape(tool) || !Number.isInteger(version) || version < 1) {
          throw new GrantError(
            `Grant pin ${quote(tool)} → ${String(version)} is not a tool name and a positive version.`,
          );
        }
        pins.set(tool, version);
      }
      compiled = {
        allow: grant.allow.map(parseGrantRule),
        deny: (grant.deny ?? []).map(parseGrantRule),
        pins,
        views: new WeakMap(),
      };
    } catch (err) {
      compiled = err instanceof GrantError ? err : new GrantError(`The grant is malformed: ${String(err)}.`);
    }
    compiledGrants.set(grant, compiled);
  }
  return compiled;
}

/** Problems that make `grant` unusable (it then offers nothing); empty when it is well-formed. Never throws. */
export function grantProblems(grant: Grant): string[] {
  const compiled = compile(grant);
  return compiled instanceof GrantError ? [compiled.message] : [];
}

function matches(rule: GrantRule, entry: CatalogEntry): boolean {
  return (
    rule.extension === entry.extension &&
    (rule.tool === undefined || rule.tool === entry.name) &&
    (rule.version === undefined || rule.version === entry.version)
  );
}

function permitted(grant: CompiledGrant, entry: CatalogEntry): boolean {
  return grant.allow.some((r) => matches(r, entry)) && !grant.deny.some((r) => matches(r, entry));
}

/** The version of `name` this grant offers, if any: the pinned one exactly, else the highest permitted one. */
function offeredEntry(catalog: Catalog, grant: CompiledGrant, name: string): CatalogEntry | undefined {
  const pin = grant.pins.get(name);
  if (pin !== undefined) {
    const entry = catalog.resolve(name, pin);
    return entry && permitted(grant, entry) ? entry : undefined;
  }
  const versions = catalog.versions(name);
  for (let i = versions.length - 1; i >= 0; i--) {
    const entry = catalog.resolve(name, versions[i])!;
    if (permitted(grant, entry)) return entry;
  }
  return undefined;
}

/**
 * The tools `grant` offers from `catalog`, one version per tool (see {@link Grant.pins}), sorted by name. A grant
 * with a malformed rule offers nothing; ask {@link grantProblems} why.
 */
export function offeredTools(catalog: Catalog, grant: Grant): CatalogEntry[] {
  const compiled = compile(grant);
  if (compiled instanceof GrantError) return [];
  return [...viewOf(catalog, compiled).offered().entries];
}

/**
 * A copy of `grant` with every offered tool pinned to the version it offers now. Store grants (and approvals) this
 * way: a later version then needs an explicit change to the grant. Throws {@link GrantError} for a malformed grant.
 */
export function pinGrant(catalog: Catalog, grant: Grant): Grant {
  const compiled = compile(grant);
  if (compiled instanceof GrantError) throw compiled;
  const pins: Record<string, number> = { ...grant.pins };
  for (const entry of offeredTools(catalog, grant)) pins[entry.name] ??= entry.version;
  return { ...grant, pins };
}

/** Outcome of a grant check for one called name. */
export type GrantCheck =
  | { readonly kind: 'allowed'; readonly entry: CatalogEntry; readonly version: number }
  | { readonly kind: 'not_offered'; readonly message: string }
  | {
      readonly kind: 'unknown';
      /** An instruction naming the closest tools, a matching skill, or how to search the directory. */
      readonly message: string;
      /** Closest offered tool names, best first. */
      readonly suggestions: readonly string[];
      /** An offered tool's skill keyword that the called name mentions, with the tools that serve it. */
      readonly skill?: { readonly keyword: string; readonly tools: readonly string[] };
    };

const SEARCH_TOOL = `${CORE_EXTENSION_NAME}.search_tools`;
const ACTIVATE_TOOL = `${CORE_EXTENSION_NAME}.activate_tool`;
/** Names longer than this get no edit-distance suggestions (bounded work on hostile input). */
const MAX_SUGGESTION_NAME = 128;

/** Unknown names answered per grant and catalog, most recently asked kept (models repeat a wrong name). */
const MAX_CACHED_UNKNOWN = 256;
/** Longest name whose answer is kept. */
const MAX_CACHED_UNKNOWN_LENGTH = 256;

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

function nameTextOf(entry: CatalogEntry): NameText {
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
interface Offered {
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

function offeredFrom(entries: readonly CatalogEntry[]): Offered {
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

const NOTHING_OFFERED = offeredFrom([]);

/**
 * What one (well-formed) grant offers from one catalog, worked out as it is needed and kept with the grant object:
 * the version offered per tool name, the whole offered list with the words unknown names are matched against, and
 * the answers to the unknown names asked most recently. Grants and catalogs are immutable, so nothing here goes
 * stale; pass the same grant object per tenant and agent to reuse it.
 */
class GrantView {
  /** Tool name → the entry offered, or null; only names the catalog has. */
  private readonly byName = new Map<string, CatalogEntry | null>();
  private all: Offered | undefined;
  private readonly unknown = new LRUCache<string, GrantCheck>({ max: MAX_CACHED_UNKNOWN });

  constructor(
    private readonly catalog: Catalog,
    private readonly grant: CompiledGrant,
  ) {}

  /** {@link offeredEntry}, memoised. `name` must be a name the catalog has. */
  entry(name: string): CatalogEntry | undefined {
    let entry = this.byName.get(name);
    if (entry === undefined) {
      entry = offeredEntry(this.catalog, this.grant, name) ?? null;
      this.byName.set(name, entry);
    }
    return entry ?? undefined;
  }

  offered(): Offered {
    this.all ??= offeredFrom(this.catalog.toolNames().flatMap((name) => this.entry(name) ?? []));
    return this.all;
  }

  /** The answer for a name the catalog does not have; the most recent ones are kept. */
  unknownName(name: string): GrantCheck {
    const cacheable = name.length <= MAX_CACHED_UNKNOWN_LENGTH;
    const known = cacheable ? this.unknown.get(name) : undefined;
    if (known) return known;
    const answer = unknownAnswer(name, name, this.offered());
    if (cacheable) this.unknown.set(name, answer);
    return answer;
  }
}

function viewOf(catalog: Catalog, grant: CompiledGrant): GrantView {
  let view = grant.views.get(catalog);
  if (!view) {
    view = new GrantView(catalog, grant);
    grant.views.set(catalog, view);
  }
  return view;
}

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
function unknownAnswer(text: string, shownName: string, offered: Offered): GrantCheck {
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

/**
 * Whether `grant` lets a model call `name` (a canonical tool name), and if so which version. A tool in the catalog
 * that the grant does not offer is `not_offered` ("not permitted in this conversation"); any other name is
 * `unknown`, answered with the closest offered names (edit distance and word overlap), a skill keyword the name
 * mentions, or how to search the directory. A malformed grant offers nothing. Never throws.
 *
 * What the grant offers is worked out once per grant object and catalog, and the answers to recent unknown names
 * are kept with it: pass the same (immutable) grant object for a tenant and agent rather than a fresh copy per call.
 */
export function checkGrant(catalog: Catalog, grant: Grant, name: string): GrantCheck {
  const compiled = compile(grant);
  const view = compiled instanceof GrantError ? undefined : viewOf(catalog, compiled);
  if (typeof name === 'string' && catalog.has(name)) {
    const entry = view?.entry(name);
    if (entry) return { kind: 'allowed', entry, version: entry.version };
    return {
      kind: 'not_offered',
      message:
        `${name} is not permitted in this conversation. Do not call it again; do the task with the tools you were ` +
        'offered, or tell the user that this action is not allowed here.',
    };
  }
  if (typeof name !== 'string') return unknownAnswer('', String(name), view?.offered() ?? NOTHING_OFFERED);
  return view ? view.unknownName(name) : unknownAnswer(name, name, NOTHING_OFFERED);
}

/** One search result. */
export interface ToolSearchHit {
  readonly name: string;
  readonly version: number;
  readonly description: string;
  /** 0 to 1: how well the query's words meet the tool's name (weighted most), skills, then description. */
  readonly score: number;
}

/** Longest query looked at, in characters. */
const MAX_QUERY = 1_000;

/** The words of a tool's name, skills and description, as search reads them; worked out once per catalog entry. */
interface SearchText {
  readonly name: ReadonlySet<string>;
  readonly skills: ReadonlySet<string>;
  readonly description: ReadonlySet<string>;
}

const searchTexts = new WeakMap<CatalogEntry, SearchText>();

function searchTextOf(entry: CatalogEntry): SearchText {
  let text = searchTexts.get(entry);
  if (!text) {
    text = {
      name: nameTextOf(entry).words,
      skills: new Set(contentWords((entry.definition.skills ?? []).join(' '))),
      description: new Set(contentWords(entry.definition.description)),
    };
    searchTexts.set(entry, text);
  }
  return text;
}

/**
 * Offered tools ranked by word overlap of `query` with their name (weight 3), skills (2) and description (1);
 * at most `limit` (1 to 50) hits with a positive score, best first. Used by `ormuz.search_tools`. Never throws.
 */
export function searchTools(catalog: Catalog, grant: Grant, query: string, limit = 5): ToolSearchHit[] {
  const wanted = [...new Set(contentWords(String(query).slice(0, MAX_QUERY)))];
  if (wanted.length === 0) return [];
  const max = Math.min(50, Math.max(1, Math.floor(Number.isFinite(limit) ? limit : 5)));
  const compiled = compile(grant);
  if (compiled instanceof GrantError) return [];
  const hits: ToolSearchHit[] = [];
  for (const entry of viewOf(catalog, compiled).offered().entries) {
    const { name, skills, description } = searchTextOf(entry);
    let points = 0;
    for (const w of wanted) points += name.has(w) ? 3 : skills.has(w) ? 2 : description.has(w) ? 1 : 0;
    if (points === 0) continue;
    hits.push({
      name: entry.name,
      version: entry.version,
      description: entry.definition.description,
      score: Math.round((points / (3 * wanted.length)) * 1000) / 1000,
    });
  }
  return hits.sort((a, b) => b.score - a.score || (a.name < b.name ? -1 : 1)).slice(0, max);
}
