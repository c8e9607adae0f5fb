/**
 * The BPE encodings of OpenAI's models, from `js-tiktoken`'s lite build: an encoding's ranks (1–2 MB of JavaScript)
 * are loaded the first time a model of its family is counted, and kept; a process that only counts gpt-4o never loads
 * cl100k. Loading is synchronous (the package's CommonJS build) so that counting stays a plain function.
 */
import { Tiktoken, type TiktokenBPE } from 'js-tiktoken/lite';
import { createRequire } from 'node:module';

/** The encodings Ormuz counts with. */
export type EncodingName = 'o200k_base' | 'cl100k_base';

const require = createRequire(import.meta.url);
const loaded = new Map<EncodingName, Tiktoken>();

/** Loads each encoding's ranks by its literal specifier, so that bundlers and the dependency lint can see it. */
const RANKS: Readonly<Record<EncodingName, () => TiktokenBPE>> = {
  o200k_base: () => ranksOf(require('js-tiktoken/ranks/o200k_base')),
  cl100k_base: () => ranksOf(require('js-tiktoken/ranks/cl100k_base')),
};

function ranksOf(module: unknown): TiktokenBPE {
  const m = module as { default?: TiktokenBPE } & TiktokenBPE;
  return m.default ?? m;
}

/** The encoder of `name`, built on first use. */
export function encoding(name: EncodingName): Tiktoken {
  let tiktoken = loaded.get(name);
  if (!tiktoken) {
    tiktoken = new Tiktoken(RANKS[name]());
    loaded.set(name, tiktoken);
  }
  return tiktoken;
}

/** Tokens of `text` in encoding `name`. Special-token text (`<|endoftext|>`) counts as the plain text it is. */
export function encodedLength(name: EncodingName, text: string): number {
  return text === '' ? 0 : encoding(name).encode(text, [], []).length;
}
