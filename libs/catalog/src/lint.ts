/**
 * Catalog lint: the writing failures that make a model pick the wrong tool or fill an argument wrongly, reported
 * like a linter (extension, tool, rule, severity, message).
 */
import type { Catalog, CatalogEntry } from './catalog.js';
import { contentWords } from './text.js';

/** `error` fails the lint (and CI); `warning` is reported only. */
export type LintSeverity = 'error' | 'warning';

/** The lint's rules. */
export type LintRule =
  | 'description-too-short'
  | 'description-no-output'
  | 'description-no-failure'
  | 'near-duplicate-description'
  | 'ambiguous-argument-name'
  | 'parameter-description-too-short'
  | 'missing-output-contract'
  | 'executor-not-declared'
  | 'missing-owner-summary';

/** One finding. `tool` is `<name>@<version>`. */
export interface LintFinding {
  readonly extension: string;
  readonly tool: string;
  readonly rule: LintRule;
  readonly severity: LintSeverity;
  readonly message: string;
}

/** Lint thresholds; the defaults are what `ormuz catalog lint` uses. */
export interface LintOptions {
  /** Fewest words in a tool description. Default 25. */
  readonly minDescriptionWords?: number;
  /** Similarity (0 to 1) from which two tools' descriptions are near-duplicates. Default 0.7. */
  readonly duplicateThreshold?: number;
  /** Argument names that say nothing about what they hold. */
  readonly ambiguousNames?: readonly string[];
}

/** Argument names that say nothing about what they hold. */
export const AMBIGUOUS_ARGUMENT_NAMES: readonly string[] = [
  'id',
  'data',
  'value',
  'input',
  'params',
  'param',
  'args',
  'obj',
  'object',
  'item',
  'info',
  'payload',
  'thing',
  'stuff',
  'val',
];

const SAYS_OUTPUT = /\b(returns?|lists?|gives?|reports?|answers?|responds?|yields?|outputs?|results?|shows?)\b/i;
const SAYS_FAILURE =
  /\b(fails?|failed|failure|errors?|refuses?|refused|rejects?|rejected|cannot|unknown|invalid|not found|unavailable)\b/i;

function wordCount(text: string): number {
  return text.split(/\s+/).filter((w) => w !== '').length;
}

/**
 * Similarity of two descriptions, 0 to 1: cosine of their TF-IDF vectors over content words, with IDF taken from
 * `corpus` (all descriptions being compared, smoothed so a two-description corpus still works). Words every tool
 * uses ("returns", "fails") weigh little; what sets a tool apart weighs most.
 */
export function descriptionSimilarity(a: string, b: string, corpus: readonly string[] = [a, b]): number {
  const documents = corpus.map((d) => new Set(contentWords(d)));
  const idf = (w: string): number =>
    Math.log((1 + documents.length) / (1 + documents.filter((d) => d.has(w)).length)) + 1;
  const vector = (text: string): Map<string, number> => {
    const tf = new Map<string, number>();
    for (const w of contentWords(text)) tf.set(w, (tf.get(w) ?? 0) + 1);
    for (const [w, n] of tf) tf.set(w, n * idf(w));
    return tf;
  };
  const va = vector(a);
  const vb = vector(b);
  let dot = 0;
  for (const [w, x] of va) dot += x * (vb.get(w) ?? 0);
  const norm = (v: Map<string, number>): number => Math.sqrt([...v.values()].reduce((s, x) => s + x * x, 0));
  const denominator = norm(va) * norm(vb);
  return denominator === 0 ? 0 : dot / denominator;
}

/** Lints every tool version of `catalog`. Findings are sorted by extension, tool, then rule. */
export function lintCatalog(catalog: Catalog, options: LintOptions = {}): LintFinding[] {
  const minWords = options.minDescriptionWords ?? 25;
  const threshold = options.duplicateThreshold ?? 0.7;
  const ambiguous = new Set(options.ambiguousNames ?? AMBIGUOUS_ARGUMENT_NAMES);
  const findings: LintFinding[] = [];
  const report = (entry: CatalogEntry, rule: LintRule, severity: LintSeverity, message: string): void => {
    findings.push({ extension: entry.extension, tool: `${entry.name}@${entry.version}`, rule, severity, message });
  };

  for (const entry of catalog.entries()) {
    const { description, parameters, output, executor, risk_level, owner_summary } = entry.definition;
    const count = wordCount(description);
    if (count < minWords) {
      report(
        entry,
        'description-too-short',
        'error',
        `The description has ${count} words; write at least ${minWords}: when to use the tool, what it returns, when it fails.`,
      );
    }
    if (!SAYS_OUTPUT.test(description)) {
      report(
        entry,
        'description-no-output',
        'error',
        'The description does not say what the tool returns; add "Returns ...".',
      );
    }
    if (!SAYS_FAILURE.test(description)) {
      report(
        entry,
        'description-no-failure',
        'error',
        'The description does not say when the tool fails; add "Fails when ...".',
      );
    }
    for (const [name, parameter] of Object.entries(parameters)) {
      if (ambiguous.has(name)) {
        report(
          entry,
          'ambiguous-argument-name',
          'error',
          `Argument "${name}" does not say what it holds, so a model fills it with something plausible and wrong; name it for its content (e.g. order_number, not id).`,
        );
      }
      if (wordCount(parameter.description) < 3) {
        report(
          entry,
          'parameter-description-too-short',
          'warning',
          `Argument "${name}" is described in fewer than 3 words; say what it holds and where the value comes from.`,
        );
      }
    }
    if (!output) {
      report(
        entry,
        'missing-output-contract',
        'error',
        'The tool has no output contract; declare output.description and output.schema so results can be checked.',
      );
    }
    if (executor === undefined) {
      report(
        entry,
        'executor-not-declared',
        'warning',
        `The tool does not say who runs it, so it runs on the device by default; declare executor: "${entry.executor}" so a reviewer sees it in the manifest.`,
      );
    }
    if (risk_level === 'high' && owner_summary === undefined) {
      report(
        entry,
        'missing-owner-summary',
        'warning',
        'The tool is always staged for approval but has no owner_summary, so owners read its raw arguments as JSON; write the sentence they decide on, e.g. "Send a text message to {recipient}: {message_body|quote}".',
      );
    }
  }

  // Versions of one tool may share wording; only distinct tools (latest versions) are compared.
  const latest = catalog.toolNames().map((name) => catalog.resolve(name)!);
  const corpus = latest.map((e) => e.definition.description);
  for (let i = 0; i < latest.length; i++) {
    for (let j = i + 1; j < latest.length; j++) {
      const a = latest[i]!;
      const b = latest[j]!;
      const score = descriptionSimilarity(a.definition.description, b.definition.description, corpus);
      if (score < threshold) continue;
      report(
        b,
        'near-duplicate-description',
        'error',
        `The description is ${Math.round(score * 100)}% similar to ${a.name}@${a.version}'s (threshold ${Math.round(threshold * 100)}%); say what sets the two apart and when to use each.`,
      );
    }
  }
  return findings.sort(
    (x, y) => x.extension.localeCompare(y.extension) || x.tool.localeCompare(y.tool) || x.rule.localeCompare(y.rule),
  );
}

/** True when any finding is an error. */
export function hasLintErrors(findings: readonly LintFinding[]): boolean {
  return findings.some((f) => f.severity === 'error');
}

/** Findings as aligned rows `extension  tool  severity  rule  message`, like a linter prints them. */
export function formatLintFindings(findings: readonly LintFinding[]): string {
  if (findings.length === 0) return '';
  const rows = findings.map((f) => [f.extension, f.tool, f.severity, f.rule, f.message]);
  const widths = [0, 1, 2, 3].map((c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => (c < 4 ? cell.padEnd(widths[c]!) : cell)).join('  ')).join('\n');
}
