/**
 * Tokens as a model counts them, per tokenizer family. Budgets for a model's context are in that model's tokens:
 * OpenAI's models are counted exactly with their BPE encoding (`o200k_base` for gpt-4o, gpt-4.1, gpt-4.5, gpt-5 and
 * the o-series; `cl100k_base` for gpt-4 and gpt-3.5). For the other families no maintained tokenizer package fits
 * (Anthropic publishes none for Claude 3 and later; see docs/model-tokens.md), so their count is the o200k count
 * times a documented factor, rounded up: an estimate on the safe side, never an exact figure.
 *
 * Pure once an encoding is loaded (see `encodings.ts`): the same text always counts the same.
 */
import { encodedLength, type EncodingName } from './encodings.js';

/** How a model's text is split into tokens. */
export type TokenFamily = 'o200k' | 'cl100k' | 'anthropic' | 'llama' | 'qwen' | 'mistral' | 'other';

export const TOKEN_FAMILIES: readonly TokenFamily[] = [
  'o200k',
  'cl100k',
  'anthropic',
  'llama',
  'qwen',
  'mistral',
  'other',
];

/**
 * Tokens of the families without an exact counter, per o200k token: the measured or published ratio plus a margin,
 * so that a budget is rarely overrun. How each was found, and its error, is in docs/model-tokens.md.
 */
export const O200K_FACTOR: Readonly<Record<Exclude<TokenFamily, 'o200k' | 'cl100k'>, number>> = {
  anthropic: 1.3,
  llama: 1.1,
  qwen: 1.1,
  mistral: 1.2,
  other: 1.3,
};

const ENCODING: Readonly<Record<'o200k' | 'cl100k', EncodingName>> = { o200k: 'o200k_base', cl100k: 'cl100k_base' };

/** The family of a model, from the model part of `<provider>:<model>` (a server may serve any family). */
export function tokenFamilyOf(model: string): TokenFamily {
  const name = (model.includes(':') ? model.slice(model.indexOf(':') + 1) : model).toLowerCase();
  const base = name.slice(name.lastIndexOf('/') + 1);
  if (/^(gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|o[1-9](-|$))/.test(base)) return 'o200k';
  if (/^(gpt-4|gpt-3\.5|gpt-35)/.test(base)) return 'cl100k';
  if (base.includes('claude')) return 'anthropic';
  if (base.includes('llama')) return 'llama';
  if (base.includes('qwen')) return 'qwen';
  if (/mistral|mixtral|ministral|codestral|devstral|magistral/.test(base)) return 'mistral';
  return 'other';
}

/** Counts text in one family's tokens. */
export interface TokenCounter {
  readonly family: TokenFamily;
  /** True when the count is the model's own tokenizer's, false when it is the o200k count times a factor. */
  readonly exact: boolean;
  /** Tokens of `text`. */
  count(text: string): number;
}

const counters = new Map<TokenFamily, TokenCounter>();

/** The counter of `family`; one per family per process. */
export function tokenCounter(family: TokenFamily): TokenCounter {
  let counter = counters.get(family);
  if (!counter) {
    if (family === 'o200k' || family === 'cl100k') {
      const name = ENCODING[family];
      counter = { family, exact: true, count: (text) => encodedLength(name, text) };
    } else {
      const factor = O200K_FACTOR[family];
      counter = { family, exact: false, count: (text) => Math.ceil(encodedLength('o200k_base', text) * factor) };
    }
    counters.set(family, counter);
  }
  return counter;
}

/** The counter for model `<provider>:<model>`. */
export function tokenCounterFor(model: string): TokenCounter {
  return tokenCounter(tokenFamilyOf(model));
}
