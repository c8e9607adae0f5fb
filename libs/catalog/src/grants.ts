/**
 * Grants: which tools an agent of a tenant may be offered and may call. Allow and deny rules by extension, tool and
 * version; deny wins; pinned versions are honoured exactly and never moved to another version. The platform's own
 * tools (`ormuz.*`: search and activate among the agent's offered tools, read more of its own results, check its own
 * calls) are allowed to every grant without a rule, since they reach nothing the grant does not offer; a deny rule
 * still removes them (docs/decisions/0019-platform-tools-in-every-grant.md).
 */
import { identifierProblem, type OfferedToolV1 } from '@ormuz/contracts';
import { LRUCache } from 'lru-cache';
import type { Catalog, CatalogEntry } from './catalog.js';
import { GrantError } from './errors.js';
import { quote } from './text.js';
import { CORE_EXTENSION_NAME } from './tool-definition.js';
import { NOTHING_OFFERED, offeredFrom, unknownAnswer, type Offered } from './unknown-names.js';

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

/** True for the platform's own tools, which every grant allows without a rule. */
function platformTool(entry: CatalogEntry): boolean {
  return entry.extension === CORE_EXTENSION_NAME;
}

function permitted(grant: CompiledGrant, entry: CatalogEntry): boolean {
  const allowed = platformTool(entry) || grant.allow.some((r) => matches(r, entry));
  return allowed && !grant.deny.some((r) => matches(r, entry));
}

/** True when `rule` (well-formed) names at least one tool version of `catalog`. Throws {@link GrantError} otherwise. */
export function ruleMatchesCatalog(catalog: Catalog, rule: string): boolean {
  const parsed = parseGrantRule(rule);
  return catalog
    .toolNames()
    .some((name) => catalog.versions(name).some((v) => matches(parsed, catalog.resolve(name, v)!)));
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

/** The tools `grant` offers, as an agent's callers are told them (policy's `policy.tools`): model-facing schemas. */
export function offeredToolsOf(catalog: Catalog, grant: Grant): OfferedToolV1[] {
  return offeredTools(catalog, grant).map((e) => ({
    name: e.name,
    version: e.version,
    description: e.definition.description,
    parameters: e.modelSchema,
    effect: e.definition.effect,
    risk_level: e.definition.risk_level,
    executor: e.executor,
  }));
}

/**
 * A copy of `grant` with every tool its rules offer pinned to the version it offers now. Store grants (and approvals)
 * this way: a later version then needs an explicit change to the grant. The platform's own tools are pinned only when
 * a rule names them: otherwise they follow the platform. Throws {@link GrantError} for a malformed grant.
 */
export function pinGrant(catalog: Catalog, grant: Grant): Grant {
  const compiled = compile(grant);
  if (compiled instanceof GrantError) throw compiled;
  const pins: Record<string, number> = { ...grant.pins };
  for (const entry of offeredTools(catalog, grant)) {
    if (platformTool(entry) && !compiled.allow.some((r) => matches(r, entry))) continue;
    pins[entry.name] ??= entry.version;
  }
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

/** Unknown names answered per grant and catalog, most recently asked kept (models repeat a wrong name). */
const MAX_CACHED_UNKNOWN = 256;
/** Longest name whose answer is kept. */
const MAX_CACHED_UNKNOWN_LENGTH = 256;

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

/** The entries `grant` offers from `catalog`, one version per tool (none for a malformed grant). Never throws. */
export function offeredByGrant(catalog: Catalog, grant: Grant): readonly CatalogEntry[] {
  const compiled = compile(grant);
  return compiled instanceof GrantError ? [] : viewOf(catalog, compiled).offered().entries;
}
