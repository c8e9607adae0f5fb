/**
 * The one place argument keys are normalised, before validation and on every transport: camelCase and kebab-case
 * keys become the schema's snake_case, anything unmatched is refused (never dropped), designer keys from the model
 * are refused, values are checked to be plain JSON, and designer values are filled in from configuration.
 */
import type { JsonValue } from '@ormuz/contracts';
import { LRUCache } from 'lru-cache';
import { RESERVED_PARAMETER_NAMES, type CatalogEntry } from './catalog.js';
import { compiledOf } from './compiled.js';
import { hasLoneSurrogate, quote, toSnakeCase } from './text.js';
import type { DesignerConfig, ParameterDefinition } from './tool-definition.js';

/** Deepest nesting accepted inside one argument value. */
export const MAX_ARGUMENT_DEPTH = 32;
/** Most JSON values (objects, arrays and scalars together) accepted in one call's arguments. */
export const MAX_ARGUMENT_VALUES = 10_000;
/** Most characters of text (strings and keys together) accepted in one call's arguments. */
export const MAX_ARGUMENT_TEXT = 1_000_000;
/** Most top-level keys looked at before the arguments are refused as too many. */
const MAX_KEYS = 256;
/** Argument keys whose snake_case form is kept (models send the same camelCase keys call after call). */
const MAX_CACHED_SPELLINGS = 1024;
const MAX_CACHED_SPELLING_LENGTH = 64;

const parameterMaps = new WeakMap<CatalogEntry, ReadonlyMap<string, ParameterDefinition>>();

/** The entry's parameters by name (a Map: faster to probe with keys a model sent than the frozen object). */
function parametersOf(entry: CatalogEntry): ReadonlyMap<string, ParameterDefinition> {
  let map = parameterMaps.get(entry);
  if (!map) {
    map = new Map(Object.entries(entry.definition.parameters));
    parameterMaps.set(entry, map);
  }
  return map;
}

const snakeCases = new LRUCache<string, string>({ max: MAX_CACHED_SPELLINGS });

/** {@link toSnakeCase}, memoised for short keys (the most recently used are kept). */
function snakeCaseOf(key: string): string {
  if (key.length > MAX_CACHED_SPELLING_LENGTH) return toSnakeCase(key);
  let snake = snakeCases.get(key);
  if (snake === undefined) {
    snake = toSnakeCase(key);
    snakeCases.set(key, snake);
  }
  return snake;
}

/** Why arguments were refused before validation. */
export type NormalizeRefusalCode = 'invalid_arguments' | 'unknown_argument' | 'designer_argument' | 'configuration';

/** Normalised arguments, or a refusal worded for the model. */
export type NormalizeResult =
  | { readonly ok: true; readonly args: Record<string, JsonValue> }
  | {
      readonly ok: false;
      readonly reason_code: NormalizeRefusalCode;
      /** Every problem as an instruction, joined; names the allowed keys where a key was refused. */
      readonly message: string;
      readonly problems: readonly string[];
    };

interface Problem {
  readonly code: NormalizeRefusalCode;
  readonly text: string;
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `a list of ${value.length} items`;
  if (typeof value === 'string') return `the text ${quote(value)}`;
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

/** Where a value sits, for messages: `contact_names[2]`, `filter.name`. */
function child(path: string, key: string | number): string {
  return typeof key === 'number' ? `${path}[${key}]` : `${path}.${key.length > 40 ? `${key.slice(0, 40)}…` : key}`;
}

interface Budget {
  values: number;
  text: number;
}

/**
 * Copies `value` as plain JSON or explains why it is not: NaN and infinities, lone surrogates, prototype keys,
 * non-plain objects (dates, maps, class instances), empty array slots, functions, bigints, too deep or too large.
 */
function plainJson(
  value: unknown,
  path: string,
  depth: number,
  budget: Budget,
): { value: JsonValue } | { problem: string } {
  if (++budget.values > MAX_ARGUMENT_VALUES) {
    return {
      problem: `the arguments hold more than ${MAX_ARGUMENT_VALUES} values; send a smaller \`${path.split(/[.[]/)[0]}\``,
    };
  }
  switch (typeof value) {
    case 'string':
      budget.text += value.length;
      if (budget.text > MAX_ARGUMENT_TEXT) {
        return {
          problem: `\`${path}\` brings the arguments over ${MAX_ARGUMENT_TEXT} characters of text; send much less`,
        };
      }
      if (hasLoneSurrogate(value)) {
        return {
          problem: `\`${path}\` contains a broken character (an unpaired UTF-16 surrogate); send valid Unicode text`,
        };
      }
      return { value };
    case 'number':
      if (!Number.isFinite(value)) {
        return {
          problem: `\`${path}\` is ${String(value)}, which is not a number JSON can carry; send a finite number`,
        };
      }
      return { value };
    case 'boolean':
      return { value };
    case 'object': {
      if (value === null) return { value: null };
      if (depth >= MAX_ARGUMENT_DEPTH) {
        return { problem: `\`${path}\` is nested deeper than ${MAX_ARGUMENT_DEPTH} levels; send a flatter value` };
      }
      if (Array.isArray(value)) {
        const out: JsonValue[] = [];
        for (let i = 0; i < value.length; i++) {
          if (!(i in value))
            return { problem: `\`${child(path, i)}\` is an empty slot; send a value for every list item` };
          const item = plainJson(value[i], child(path, i), depth + 1, budget);
          if ('problem' in item) return item;
          out.push(item.value);
        }
        return { value: out };
      }
      const proto = Object.getPrototypeOf(value) as unknown;
      if (proto !== Object.prototype && proto !== null) {
        return {
          problem: `\`${path}\` is not a plain JSON object; send only objects, lists, text, numbers, true, false and null`,
        };
      }
      const out: Record<string, JsonValue> = {};
      for (const key of Object.keys(value)) {
        if (RESERVED_PARAMETER_NAMES.has(key)) {
          return { problem: `\`${path}\` contains the key ${quote(key)}, which is never accepted; remove it` };
        }
        budget.text += key.length;
        if (hasLoneSurrogate(key)) {
          return {
            problem: `a key inside \`${path}\` contains a broken character (an unpaired UTF-16 surrogate); send valid Unicode text`,
          };
        }
        const item = plainJson((value as Record<string, unknown>)[key], child(path, key), depth + 1, budget);
        if ('problem' in item) return item;
        out[key] = item.value;
      }
      return { value: out };
    }
    case 'undefined':
      return { problem: `\`${path}\` has no value; send a value or leave the argument out` };
    default:
      return {
        problem: `\`${path}\` is a ${typeof value}, which JSON cannot carry; send text, a number, true, false, null, a list or an object`,
      };
  }
}

function allowedSentence(entry: CatalogEntry): string {
  return entry.modelParameters.length === 0
    ? `${entry.name} takes no arguments; send {}.`
    : `${entry.name} accepts: ${entry.modelParameters.join(', ')}.`;
}

function refuse(entry: CatalogEntry, problems: readonly Problem[]): NormalizeResult {
  const order: NormalizeRefusalCode[] = ['configuration', 'designer_argument', 'unknown_argument', 'invalid_arguments'];
  const code = order.find((c) => problems.some((p) => p.code === c))!;
  const texts = problems.map((p) => p.text);
  const shown = texts.slice(0, 5);
  if (texts.length > shown.length) shown.push(`(${texts.length - shown.length} more problems not shown)`);
  const namesKeys = problems.some((p) => p.code === 'unknown_argument' || p.code === 'designer_argument');
  const message = `${shown.join(' ')}${namesKeys ? ` ${allowedSentence(entry)}` : ''}`;
  return { ok: false, reason_code: code, message, problems: texts };
}

/**
 * Normalises the arguments of one call to `entry`. `args` may be anything (`undefined` counts as no arguments);
 * the result is a fresh plain-JSON object keyed by the schema's snake_case names with designer values filled in
 * (from `designer` when it configures the parameter, otherwise from the catalog's configuration), or a refusal:
 * `unknown_argument` (a key that matches no parameter, or a prototype key), `designer_argument` (the model sent a
 * designer-controlled key), `invalid_arguments` (not an object, not plain JSON, too deep or too large, a key sent
 * twice in two spellings) or `configuration` (a designer value is missing or invalid: the deployment's fault).
 * Never throws.
 */
export function normalizeArguments(entry: CatalogEntry, args: unknown, designer?: DesignerConfig): NormalizeResult {
  const tool = entry.name;
  if (args === undefined) args = {};
  if (args === null || typeof args !== 'object' || Array.isArray(args)) {
    return refuse(entry, [
      {
        code: 'invalid_arguments',
        text: `The arguments to ${tool} must be a JSON object of named arguments; you sent ${kindOf(args)}.`,
      },
    ]);
  }
  const proto = Object.getPrototypeOf(args) as unknown;
  if (proto !== Object.prototype && proto !== null) {
    return refuse(entry, [
      { code: 'invalid_arguments', text: `The arguments to ${tool} must be a plain JSON object of named arguments.` },
    ]);
  }

  const keys = Object.keys(args);
  if (keys.length > MAX_KEYS) {
    return refuse(entry, [
      {
        code: 'unknown_argument',
        text: `You sent ${keys.length} argument keys to ${tool}; it has ${entry.modelParameters.length + entry.designerParameters.length} parameters.`,
      },
    ]);
  }
  const parameters = parametersOf(entry);
  const problems: Problem[] = [];
  const sentAs = new Map<string, string>();
  const out: Record<string, JsonValue> = {};
  const budget: Budget = { values: 0, text: 0 };
  for (const key of keys) {
    if (RESERVED_PARAMETER_NAMES.has(key)) {
      problems.push({ code: 'unknown_argument', text: `${quote(key)} is never an argument name; remove it.` });
      continue;
    }
    let name = key;
    let parameter = parameters.get(key);
    if (parameter === undefined) {
      name = snakeCaseOf(key);
      parameter = parameters.get(name);
    }
    if (!parameter) {
      problems.push({
        code: 'unknown_argument',
        text: `${quote(key)} is not an argument of ${tool}; remove it or use one of its arguments.`,
      });
      continue;
    }
    if (parameter.controller === 'designer') {
      problems.push({
        code: 'designer_argument',
        text: `\`${name}\` is set by this tool's configuration and cannot be chosen in a call; leave it out.`,
      });
      continue;
    }
    const earlier = sentAs.get(name);
    if (earlier !== undefined) {
      problems.push({
        code: 'invalid_arguments',
        text: `\`${name}\` was sent twice (as ${quote(earlier)} and ${quote(key)}); send it once, as \`${name}\`.`,
      });
      continue;
    }
    sentAs.set(name, key);
    const copy = plainJson((args as Record<string, unknown>)[key], name, 0, budget);
    if ('problem' in copy) {
      problems.push({
        code: 'invalid_arguments',
        text: `${copy.problem.charAt(0).toUpperCase()}${copy.problem.slice(1)}.`,
      });
      continue;
    }
    out[name] = copy.value;
  }
  if (problems.length > 0) return refuse(entry, problems);

  const configured = designer && Object.hasOwn(designer, tool) ? designer[tool] : undefined;
  for (const name of entry.designerParameters) {
    if (configured && Object.hasOwn(configured, name)) {
      const value = configured[name] as JsonValue;
      const validate = compiledOf(entry)?.validateDesignerValue.get(name);
      if (!validate || !validate(value)) {
        return refuse(entry, [
          {
            code: 'configuration',
            text: `${tool} is misconfigured here (its \`${name}\` setting is invalid), so it cannot run. Do not retry; tell the user the tool needs its configuration fixed.`,
          },
        ]);
      }
      out[name] = value;
    } else if (Object.hasOwn(entry.designerValues, name)) {
      out[name] = entry.designerValues[name]!;
    } else {
      return refuse(entry, [
        {
          code: 'configuration',
          text: `${tool} is missing its \`${name}\` setting, so it cannot run. Do not retry; tell the user the tool needs its configuration fixed.`,
        },
      ]);
    }
  }
  return { ok: true, args: out };
}
