/**
 * How a called tool name is read: the one place where a name as a model or an API caller wrote it becomes a catalog
 * name. Spelling that cannot mean another tool is normalised (`device.SEND_MESSAGE`, `device.sendMessage`,
 * `device__send_message`, surrounding spaces); a version may be named with `@<n>`. Anything else is left as it was
 * sent, for the grant check to answer with the closest real names.
 */
import type { Catalog } from './catalog.js';
import { canonicalFromProviderName } from './model-schema.js';
import { toSnakeCase } from './text.js';
import { splitToolName, toolNameProblem } from './tool-definition.js';

/** A called name, read. */
export interface CalledToolName {
  /** The catalog's name the text stands for; when `known` is false, the text as sent without a version suffix. */
  readonly name: string;
  /** True when `name` is a tool the catalog has. */
  readonly known: boolean;
  /** The version asked for with `@<n>`, if any (the grant decides whether it is offered). */
  readonly version?: number;
}

const VERSION_SUFFIX = /^(.+)@([1-9][0-9]{0,8})$/;
/** Longer names are not normalised (bounded work on hostile input); they are unknown. */
const MAX_CALLED_NAME = 256;

/**
 * Reads `raw` against `catalog`: the exact name first, then without an `@<n>` version suffix, decoded from a
 * provider's encoding, and with each part in snake_case. Never throws; a name no spelling of which the catalog has
 * comes back with `known: false`.
 */
export function readToolName(catalog: Catalog, raw: string): CalledToolName {
  const text = raw.trim();
  if (catalog.has(text)) return { name: text, known: true };
  if (text.length > MAX_CALLED_NAME) return { name: text, known: false };
  const versioned = VERSION_SUFFIX.exec(text);
  const base = versioned ? versioned[1]!.trim() : text;
  const version = versioned ? { version: Number(versioned[2]) } : {};
  for (const candidate of spellings(base)) {
    if (catalog.has(candidate)) return { name: candidate, known: true, ...version };
  }
  return { name: base, known: false, ...version };
}

/** The spellings of `base` that are tried, in order. */
function spellings(base: string): string[] {
  const out = [base];
  const decoded = canonicalFromProviderName(base);
  if (decoded) out.push(decoded);
  const parts = splitToolName(base) ?? splitToolName(base.replace('__', '.'));
  if (parts) out.push(`${toSnakeCase(parts.extension)}.${toSnakeCase(parts.tool)}`);
  return out;
}

/**
 * `raw` as it may be written into a call's record when the catalog does not know it: the trimmed text when it has
 * the shape of a tool name, else `undefined` (such a request cannot become a call and is refused before anything is
 * recorded).
 */
export function recordableToolName(raw: unknown): string | undefined {
  if (typeof raw !== 'string') return undefined;
  const text = raw.trim();
  return toolNameProblem(text) === undefined ? text : undefined;
}
