/**
 * The tool directory's search (`ormuz.search_tools`): offered tools ranked by how the query's words meet their name,
 * skills and description. Pure and total.
 */
import type { Catalog, CatalogEntry } from './catalog.js';
import { offeredByGrant, type Grant } from './grants.js';
import { contentWords } from './text.js';
import { nameTextOf } from './unknown-names.js';

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
  const hits: ToolSearchHit[] = [];
  for (const entry of offeredByGrant(catalog, grant)) {
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
