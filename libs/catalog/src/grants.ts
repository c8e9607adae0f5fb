/**
 * Grants: which tools an agent of a tenant may be offered and may call. Allow and deny rules by extension, tool and
 * version; deny wins; pinned versions are honoured exactly and never moved to another version.
 */
import { identifierProblem } from '@ormuz/contracts';
import type { Catalog, CatalogEntry } from './catalog.js';
import { GrantError } from './errors.js';
import { editDistance, quote, wordOverlap, words } from './text.js';
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
}

const compiledGrants = new WeakMap<Grant, CompiledGrant | GrantError>();

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
      for (const [tool, version] of Object.entries(grant.pins ?? {})) {
        if (!splitToolName(tool) || !Number.isInteger(version) || version < 1) {
          throw new GrantError(
            `Grant pin ${quote(tool)} → ${String(version)} is not a tool name and a positive version.`,
          );
        }
        pins.set(tool, version);
      }
      compiled = { allow: grant.allow.map(parseGrantRule), deny: (grant.deny ?? []).map(parseGrantRule), pins };
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
  return catalog.toolNames().flatMap((name) => offeredEntry(catalog, compiled, name) ?? []);
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

function closestNames(name: string, offered: readonly CatalogEntry[]): string[] {
  if (name.length > MAX_SUGGESTION_NAME) return [];
  const lower = name.toLowerCase();
  const called = words(name);
  const scored: { name: string; score: number }[] = [];
  for (const entry of offered) {
    const toolPart = splitToolName(entry.name)?.tool ?? entry.name;
    const cap = Math.max(2, Math.floor(Math.min(lower.length, entry.name.length) / 4));
    const distance = Math.min(editDistance(lower, entry.name, cap), editDistance(lower, toolPart, cap));
    const overlap = wordOverlap(called, words(entry.name));
    if (distance > cap && overlap < 0.5) continue;
    scored.push({ name: entry.name, score: (distance <= cap ? 1 - distance / (cap + 1) : 0) + overlap });
  }
  return scored
    .sort((a, b) => b.score - a.score || (a.name < b.name ? -1 : 1))
    .slice(0, 3)
    .map((s) => s.name);
}

function matchingSkill(
  name: string,
  offered: readonly CatalogEntry[],
): { keyword: string; tools: string[] } | undefined {
  if (name.length > MAX_SUGGESTION_NAME) return undefined;
  const called = new Set(words(name));
  for (const entry of offered) {
    for (const keyword of entry.definition.skills ?? []) {
      const needed = words(keyword);
      if (needed.length === 0 || !needed.every((w) => called.has(w))) continue;
      const tools = offered
        .filter((e) => (e.definition.skills ?? []).some((k) => k.toLowerCase() === keyword.toLowerCase()))
        .map((e) => e.name);
      return { keyword, tools };
    }
  }
  return undefined;
}

/**
 * Whether `grant` lets a model call `name` (a canonical tool name), and if so which version. A tool in the catalog
 * that the grant does not offer is `not_offered` ("not permitted in this conversation"); any other name is
 * `unknown`, answered with the closest offered names (edit distance and word overlap), a skill keyword the name
 * mentions, or how to search the directory. A malformed grant offers nothing. Never throws.
 */
export function checkGrant(catalog: Catalog, grant: Grant, name: string): GrantCheck {
  const compiled = compile(grant);
  const shown = quote(String(name), 80);
  if (typeof name === 'string' && catalog.has(name)) {
    const entry = compiled instanceof GrantError ? undefined : offeredEntry(catalog, compiled, name);
    if (entry) return { kind: 'allowed', entry, version: entry.version };
    return {
      kind: 'not_offered',
      message:
        `${name} is not permitted in this conversation. Do not call it again; do the task with the tools you were ` +
        'offered, or tell the user that this action is not allowed here.',
    };
  }
  const offered = compiled instanceof GrantError ? [] : offeredTools(catalog, grant);
  const text = typeof name === 'string' ? name : '';
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
    const canSearch = offered.some((e) => e.name === SEARCH_TOOL);
    const query = words(text.slice(0, MAX_SUGGESTION_NAME)).join(' ') || 'what you want to do';
    message += canSearch
      ? ` Search the tool directory with ${SEARCH_TOOL} (e.g. {"query": ${JSON.stringify(query)}}) and activate what you find with ${ACTIVATE_TOOL}.`
      : ' Use only the tools you were offered.';
  }
  return { kind: 'unknown', message, suggestions, ...(skill ? { skill } : {}) };
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

/**
 * Offered tools ranked by word overlap of `query` with their name (weight 3), skills (2) and description (1);
 * at most `limit` (1 to 50) hits with a positive score, best first. Used by `ormuz.search_tools`. Never throws.
 */
export function searchTools(catalog: Catalog, grant: Grant, query: string, limit = 5): ToolSearchHit[] {
  const wanted = [...new Set(words(String(query).slice(0, MAX_QUERY)))];
  if (wanted.length === 0) return [];
  const max = Math.min(50, Math.max(1, Math.floor(Number.isFinite(limit) ? limit : 5)));
  const hits: ToolSearchHit[] = [];
  for (const entry of offeredTools(catalog, grant)) {
    const name = new Set(words(entry.name));
    const skills = new Set(words((entry.definition.skills ?? []).join(' ')));
    const description = new Set(words(entry.definition.description));
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
