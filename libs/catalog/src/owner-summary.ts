/**
 * Owner summaries: the one sentence an owner reads before approving a staged call, rendered from the tool's
 * `owner_summary` template, so that what a tool says to owners ships with the tool and no service names tools.
 *
 * Template syntax:
 * - `{name}`: the call's value `name`: text as it is, numbers and booleans as written, lists joined with `, `,
 *   objects as JSON. A missing value (absent, null, empty text, empty list) reads `(none)`.
 * - `{name|quote}`, `{name|quote:80}`: the value in double quotes, clipped to 200 (or 80) characters with `…`; a
 *   value that is not text is quoted as its JSON.
 * - `{name|or:an element}`: these words, unquoted, when the value is missing.
 * - `[...]`: an optional part, left out whole when a value it names is missing, e.g.
 *   `Press {key} in {foreground_package}[, which taps {target_text|quote:80}]`. Optional parts do not nest.
 * - `{{`, `}}`, `[[`, `]]`: a literal brace or bracket.
 *
 * A name is one of the tool's parameters or a value policy resolves for the call ({@link OWNER_SUMMARY_RESOLVED_VALUES}).
 */
import type { ToolDefinition } from './tool-definition.js';

/**
 * Values a template may name besides the tool's parameters: what policy resolved about the call before staging it.
 * `target_text` is the visible text of the element a screen action acts on (a tap's button, or the button `enter`
 * activates), which the call's own arguments may not carry.
 */
export const OWNER_SUMMARY_RESOLVED_VALUES: Readonly<Record<string, string>> = Object.freeze({
  target_text: 'the visible text of the element a screen action acts on, as policy resolved it',
});

/** Longest summary, in characters: what a staged call's event carries. A longer sentence is clipped with `…`. */
export const MAX_OWNER_SUMMARY_CHARS = 4096;

/** Characters of a quoted value kept when the filter names no length. */
const DEFAULT_QUOTE_CHARS = 200;
/** Characters of the arguments' JSON kept in the default sentence. */
const DEFAULT_SENTENCE_ARGS_CHARS = 300;
/** What a missing value reads when the placeholder gives no `or:` words. */
const MISSING = '(none)';

interface ValuePart {
  readonly kind: 'value';
  readonly name: string;
  /** Quote the value, clipped to this many characters. */
  readonly quote?: number;
  /** Words for a missing value. */
  readonly fallback?: string;
}
type InlinePart = { readonly kind: 'text'; readonly text: string } | ValuePart;
type Part = InlinePart | { readonly kind: 'optional'; readonly parts: readonly InlinePart[] };

/** A template, parsed; or why it cannot be. */
type Parsed = { readonly ok: true; readonly parts: readonly Part[] } | { readonly ok: false; readonly problem: string };

const NAME = /^[a-z][a-z0-9_]*$/;

function parseTemplate(template: string): Parsed {
  const top: Part[] = [];
  let optional: InlinePart[] | null = null;
  let text = '';
  const flush = (): void => {
    if (text === '') return;
    (optional ?? top).push({ kind: 'text', text });
    text = '';
  };
  let i = 0;
  while (i < template.length) {
    const c = template[i]!;
    const next = template[i + 1];
    if ((c === '{' || c === '}' || c === '[' || c === ']') && next === c) {
      text += c;
      i += 2;
      continue;
    }
    if (c === '{') {
      const end = template.indexOf('}', i + 1);
      if (end === -1) return { ok: false, problem: `the "{" at character ${i + 1} is never closed` };
      const value = parsePlaceholder(template.slice(i + 1, end));
      if (typeof value === 'string') return { ok: false, problem: value };
      flush();
      (optional ?? top).push(value);
      i = end + 1;
      continue;
    }
    if (c === '[') {
      if (optional)
        return { ok: false, problem: `the "[" at character ${i + 1} opens an optional part inside another` };
      flush();
      optional = [];
      i += 1;
      continue;
    }
    if (c === ']') {
      if (!optional)
        return { ok: false, problem: `the "]" at character ${i + 1} closes no optional part (write "]]")` };
      flush();
      if (!optional.some((p) => p.kind === 'value')) {
        return { ok: false, problem: `the optional part ending at character ${i + 1} names no value` };
      }
      top.push({ kind: 'optional', parts: optional });
      optional = null;
      i += 1;
      continue;
    }
    if (c === '}') return { ok: false, problem: `the "}" at character ${i + 1} closes nothing (write "}}")` };
    text += c;
    i += 1;
  }
  if (optional) return { ok: false, problem: 'an optional part "[" is never closed' };
  flush();
  return { ok: true, parts: top };
}

/** `name|filter|filter:argument` → the value part, or what is wrong with it. */
function parsePlaceholder(body: string): ValuePart | string {
  const [rawName = '', ...filters] = body.split('|');
  const name = rawName.trim();
  if (!NAME.test(name)) return `{${body}} does not start with a value name`;
  let quote: number | undefined;
  let fallback: string | undefined;
  for (const filter of filters) {
    const colon = filter.indexOf(':');
    const kind = (colon === -1 ? filter : filter.slice(0, colon)).trim();
    const argument = colon === -1 ? undefined : filter.slice(colon + 1);
    if (kind === 'quote' && quote === undefined) {
      const max = argument === undefined ? DEFAULT_QUOTE_CHARS : Number(argument.trim());
      if (!Number.isSafeInteger(max) || max < 1) return `{${body}}: quote takes a length of at least 1 character`;
      quote = max;
    } else if (kind === 'or' && fallback === undefined) {
      if (argument === undefined || argument === '') return `{${body}}: or takes the words to write, as "or:words"`;
      fallback = argument;
    } else {
      return `{${body}}: "${kind}" is not a filter, or is given twice (filters: quote, quote:<length>, or:<words>)`;
    }
  }
  return {
    kind: 'value',
    name,
    ...(quote === undefined ? {} : { quote }),
    ...(fallback === undefined ? {} : { fallback }),
  };
}

function valueNames(parts: readonly Part[]): string[] {
  return parts.flatMap((p) =>
    p.kind === 'value'
      ? [p.name]
      : p.kind === 'optional'
        ? p.parts.flatMap((q) => (q.kind === 'value' ? [q.name] : []))
        : [],
  );
}

/**
 * What is wrong with `definition`'s `owner_summary`: a syntax error, or a name that is neither a parameter of the
 * tool nor a resolved value. `undefined` when it has none or a usable one. The catalog refuses a tool with a problem.
 */
export function ownerSummaryProblem(
  definition: Pick<ToolDefinition, 'owner_summary' | 'parameters'>,
): string | undefined {
  const template = definition.owner_summary;
  if (template === undefined) return undefined;
  const parsed = parseTemplate(template);
  if (!parsed.ok) return parsed.problem;
  const unknown = valueNames(parsed.parts).filter(
    (name) => !Object.hasOwn(definition.parameters, name) && !Object.hasOwn(OWNER_SUMMARY_RESOLVED_VALUES, name),
  );
  if (unknown.length > 0) {
    return (
      `it names ${unknown.map((n) => `"${n}"`).join(', ')}, which is neither a parameter of the tool nor a value ` +
      `policy resolves (${Object.keys(OWNER_SUMMARY_RESOLVED_VALUES).join(', ')})`
    );
  }
  return undefined;
}

function isMissing(value: unknown): boolean {
  return value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0);
}

function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map((item) => (typeof item === 'string' ? item : asJson(item))).join(', ');
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return asJson(value);
}

function asJson(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}

/** `value` in double quotes, clipped to `max` characters with `…`; a value that is not text is quoted as JSON. */
function quoted(value: unknown, max: number): string {
  const text = typeof value === 'string' ? value : asJson(value);
  return `"${text.length > max ? `${text.slice(0, max)}…` : text}"`;
}

function lookUp(values: Readonly<Record<string, unknown>>, name: string): unknown {
  return Object.hasOwn(values, name) ? values[name] : undefined;
}

function renderValue(part: ValuePart, values: Readonly<Record<string, unknown>>): string {
  const value = lookUp(values, part.name);
  if (isMissing(value)) return part.fallback ?? MISSING;
  return part.quote === undefined ? asText(value) : quoted(value, part.quote);
}

function renderInline(parts: readonly InlinePart[], values: Readonly<Record<string, unknown>>): string {
  return parts.map((p) => (p.kind === 'text' ? p.text : renderValue(p, values))).join('');
}

/**
 * The sentence an owner decides on for a call of `definition` with `values` (its arguments, plus what policy
 * resolved: see {@link OWNER_SUMMARY_RESOLVED_VALUES}). Without a template, or with one the catalog would refuse,
 * it is `Run <tool> with "<arguments as JSON, clipped to 300 characters>"`. Never throws; never empty; at most
 * {@link MAX_OWNER_SUMMARY_CHARS} characters.
 */
export function renderOwnerSummary(
  definition: Pick<ToolDefinition, 'name' | 'owner_summary'>,
  values: Readonly<Record<string, unknown>>,
): string {
  const parsed = definition.owner_summary === undefined ? undefined : parseTemplate(definition.owner_summary);
  let sentence = '';
  if (parsed?.ok) {
    sentence = parsed.parts
      .map((p) => {
        if (p.kind !== 'optional') return renderInline([p], values);
        const complete = p.parts.every((q) => q.kind === 'text' || !isMissing(lookUp(values, q.name)) || q.fallback);
        return complete ? renderInline(p.parts, values) : '';
      })
      .join('');
  }
  if (sentence.trim() === '') sentence = `Run ${definition.name} with ${quoted(values, DEFAULT_SENTENCE_ARGS_CHARS)}`;
  return sentence.length > MAX_OWNER_SUMMARY_CHARS ? `${sentence.slice(0, MAX_OWNER_SUMMARY_CHARS - 1)}…` : sentence;
}
