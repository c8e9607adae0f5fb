/**
 * The per-model price table: US dollars per million input and output tokens, what the cost bound of a conversation
 * counts with. The defaults below are the providers' published list prices when they were written down; prices move,
 * so operators set their own with `MODEL_LOOP_MODEL_PRICES` (merged over the defaults, entry by entry). A model with no
 * entry has no known cost: a conversation on it cannot start while a cost bound is configured.
 */
import type { ModelPriceV1 } from '@ormuz/contracts';

/** Price entries by model name (`<provider>:<model>`), or `<provider>:*` for every model of a provider. */
export type PriceTable = Readonly<Record<string, ModelPriceV1>>;

const price = (input: number, output: number): ModelPriceV1 =>
  Object.freeze({ input_usd_per_mtok: input, output_usd_per_mtok: output });

/** List prices, US dollars per million tokens (input, output). The scripted models cost nothing. */
export const DEFAULT_PRICES: PriceTable = Object.freeze({
  'scripted:*': price(0, 0),
  'openai:gpt-4o': price(2.5, 10),
  'openai:gpt-4o-mini': price(0.15, 0.6),
  'openai:gpt-4.1': price(2, 8),
  'openai:gpt-4.1-mini': price(0.4, 1.6),
  'openai-responses:gpt-4o': price(2.5, 10),
  'openai-responses:gpt-4o-mini': price(0.15, 0.6),
  'openai-responses:gpt-4.1': price(2, 8),
  'openai-responses:gpt-4.1-mini': price(0.4, 1.6),
  'anthropic:claude-sonnet-4-5': price(3, 15),
  'anthropic:claude-opus-4-1': price(15, 75),
  'anthropic:claude-3-5-haiku-latest': price(0.8, 4),
});

/** The price of `model`: its own entry, else its provider's `*` entry, else `null` (unknown). */
export function priceOf(table: PriceTable, model: string): ModelPriceV1 | null {
  if (Object.hasOwn(table, model)) return table[model]!;
  const provider = model.slice(0, model.indexOf(':'));
  const wildcard = `${provider}:*`;
  return Object.hasOwn(table, wildcard) ? table[wildcard]! : null;
}

/**
 * Parses an override, JSON such as `{"openai:gpt-4o": {"input": 2.5, "output": 10}, "openai-compatible:*":
 * {"input": 0, "output": 0}}` (US dollars per million tokens), and merges it over `base`. Returns the problem as a
 * sentence (`Error`) rather than a half-read table.
 */
export function parsePrices(raw: string, base: PriceTable = DEFAULT_PRICES): PriceTable | Error {
  const fix =
    'Write a JSON object from model name (or "<provider>:*") to {"input": <USD per 1M input tokens>, ' +
    '"output": <USD per 1M output tokens>}, e.g. {"openai:gpt-4o": {"input": 2.5, "output": 10}}.';
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return new Error(`it is not JSON. ${fix}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return new Error(`it is not a JSON object. ${fix}`);
  }
  const out: Record<string, ModelPriceV1> = { ...base };
  for (const [model, entry] of Object.entries(parsed as Record<string, unknown>)) {
    if (!/^[a-z][a-z0-9-]*:(\*|[A-Za-z0-9][A-Za-z0-9._/:-]*)$/.test(model)) {
      return new Error(`"${model}" is not a model name (<provider>:<model>) nor "<provider>:*". ${fix}`);
    }
    const e = entry as { input?: unknown; output?: unknown } | null;
    const ok = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 1_000_000;
    if (e === null || typeof e !== 'object' || !ok(e.input) || !ok(e.output) || Object.keys(e).length !== 2) {
      return new Error(`the entry of "${model}" is not {"input": <number ≥ 0>, "output": <number ≥ 0>}. ${fix}`);
    }
    out[model] = price(e.input, e.output);
  }
  return Object.freeze(out);
}
