/**
 * The candidate rules `ormuz whatif` judges past requests with, read from the files the analyst names. Each file is
 * checked whole before anything is judged; a problem is a {@link CandidateFileError} naming the file and what is wrong.
 *
 * - `--catalog FILE`: `{ "extensions": [<Extension manifest>, …], "designer": { … } }` (the platform's own `ormuz`
 *   tools are always loaded; `designer` defaults to the shipped values).
 * - `--grants FILE`: `{ "<agent id>": { "allow": [rules], "deny": [rules], "pins": { tool: version } }, … }`, with
 *   `"*"` for every agent not named; an agent named nowhere keeps the tenant's current grant.
 * - `--risk-lexicon FILE`: `{ "extra_high_risk_packages": ["com.acme.pay"], "extra_words": [{ "meaning": "pay",
 *   "language": "en", "words": ["settle"] }] }`, added to the built-in lexicon.
 */
import { readFileSync } from 'node:fs';
import {
  Catalog,
  CORE_EXTENSION,
  DEFAULT_DESIGNER_CONFIG,
  grantProblems,
  type DesignerConfig,
  type ExtensionManifest,
  type Grant,
} from '@ormuz/catalog';
import { OrmuzError } from '@ormuz/contracts';
import type { RiskClassifierOptions } from '@ormuz/risk';

/** A candidate file that cannot be read or does not say what it must. */
export class CandidateFileError extends OrmuzError {
  readonly code = 'invalid_input';
  constructor(
    readonly file: string,
    problem: string,
  ) {
    super(`${file}: ${problem}`);
  }
}

/** A grant for any agent, as the candidate file gives it (the tenant and agent are filled in when it is used). */
export type CandidateGrant = Pick<Grant, 'allow' | 'deny' | 'pins'>;

/** The candidate grants by agent id (`*`: every agent not named). */
export type CandidateGrants = ReadonlyMap<string, CandidateGrant>;

/** Reads a JSON object from `file`, or throws {@link CandidateFileError}. */
function readObject(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new CandidateFileError(
      file,
      `cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}).`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new CandidateFileError(file, `is not JSON (${(err as Error).message}).`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new CandidateFileError(file, 'must hold a JSON object.');
  }
  return value as Record<string, unknown>;
}

function onlyKeys(file: string, where: string, value: Record<string, unknown>, allowed: readonly string[]): void {
  const extra = Object.keys(value).filter((k) => !allowed.includes(k));
  if (extra.length > 0) {
    throw new CandidateFileError(
      file,
      `${where} has ${extra.map((k) => JSON.stringify(k)).join(', ')}; it may hold only ${allowed.join(', ')}.`,
    );
  }
}

const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');

/** The candidate catalog: the platform's own tools plus the file's extensions, loaded and checked as policy loads its. */
export function loadCandidateCatalog(file: string): Catalog {
  const doc = readObject(file);
  onlyKeys(file, 'the catalog', doc, ['extensions', 'designer']);
  if (!Array.isArray(doc.extensions)) {
    throw new CandidateFileError(file, '"extensions" must be a list of Extension manifests.');
  }
  if (
    doc.designer !== undefined &&
    (doc.designer === null || typeof doc.designer !== 'object' || Array.isArray(doc.designer))
  ) {
    throw new CandidateFileError(file, '"designer" must be an object: tool name → { parameter: value }.');
  }
  try {
    return Catalog.load(doc.extensions as ExtensionManifest[], {
      core: CORE_EXTENSION,
      designer: (doc.designer as DesignerConfig | undefined) ?? DEFAULT_DESIGNER_CONFIG,
    });
  } catch (err) {
    throw new CandidateFileError(file, `is not a loadable catalog: ${(err as Error).message}`);
  }
}

/** The candidate grants, each checked as `policy.grants.set` checks a grant's form. */
export function loadCandidateGrants(file: string, tenant: string): CandidateGrants {
  const doc = readObject(file);
  const grants = new Map<string, CandidateGrant>();
  for (const [agent, value] of Object.entries(doc)) {
    const where = `the grant of ${JSON.stringify(agent)}`;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new CandidateFileError(file, `${where} must be an object with "allow" (and "deny", "pins").`);
    }
    const g = value as Record<string, unknown>;
    onlyKeys(file, where, g, ['allow', 'deny', 'pins']);
    if (!isStringList(g.allow)) throw new CandidateFileError(file, `${where}: "allow" must be a list of rules.`);
    if (g.deny !== undefined && !isStringList(g.deny)) {
      throw new CandidateFileError(file, `${where}: "deny" must be a list of rules.`);
    }
    const grant = {
      allow: g.allow,
      ...(g.deny ? { deny: g.deny } : {}),
      ...(g.pins ? { pins: g.pins } : {}),
    } as CandidateGrant;
    const problems = grantProblems({ tenant, agent_id: agent === '*' ? 'any' : agent, ...grant });
    if (problems.length > 0) throw new CandidateFileError(file, `${where}: ${problems.join('; ')}`);
    grants.set(agent, grant);
  }
  return grants;
}

/** The candidate additions to the risk classifier's lexicon. */
export function loadCandidateLexicon(file: string): RiskClassifierOptions {
  const doc = readObject(file);
  onlyKeys(file, 'the lexicon', doc, ['extra_high_risk_packages', 'extra_words']);
  const packages = doc.extra_high_risk_packages ?? [];
  if (!isStringList(packages)) {
    throw new CandidateFileError(file, '"extra_high_risk_packages" must be a list of Android package names.');
  }
  const words = doc.extra_words ?? [];
  if (!Array.isArray(words)) throw new CandidateFileError(file, '"extra_words" must be a list.');
  words.forEach((w: unknown, i) => {
    const entry = w as Record<string, unknown> | null;
    if (
      entry === null ||
      typeof entry !== 'object' ||
      typeof entry.meaning !== 'string' ||
      entry.meaning.trim() === '' ||
      typeof entry.language !== 'string' ||
      entry.language.trim() === '' ||
      !isStringList(entry.words) ||
      entry.words.length === 0
    ) {
      throw new CandidateFileError(
        file,
        `"extra_words"[${i}] must be { "meaning": text, "language": code, "words": [at least one word] }.`,
      );
    }
  });
  return {
    extraHighRiskPackages: packages,
    extraWords: words as RiskClassifierOptions['extraWords'] & object,
  };
}
