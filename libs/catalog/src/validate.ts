/**
 * Validation of normalised arguments against a tool version's compiled schema and combination rules, with every
 * failure rewritten as an instruction: which argument, what was wrong, what to send instead.
 */
import type { JsonSchema, JsonValue } from '@ormuz/contracts';
import { compileSchema, type ErrorObject, type ValidateFunction } from './ajv.js';
import type { CatalogEntry } from './catalog.js';
import { compiledOf } from './compiled.js';
import { quote } from './text.js';
import type { CombinationRule, ParameterDefinition, ToolDefinition } from './tool-definition.js';

/** Most instructions put in one refusal; the rest are counted. */
const MAX_MESSAGES = 5;

/** Valid, or refused with instructions. */
export type ValidationResult =
  | { readonly ok: true }
  | {
      readonly ok: false;
      /** `invalid_arguments` for schema failures, `combination` when only a combination rule failed. */
      readonly reason_code: 'invalid_arguments' | 'combination';
      readonly message: string;
      readonly problems: readonly string[];
    };

function typeName(type: unknown): string {
  switch (type) {
    case 'number':
      return 'a number';
    case 'integer':
      return 'a whole number';
    case 'string':
      return 'text';
    case 'boolean':
      return 'true or false';
    case 'array':
      return 'a list';
    case 'object':
      return 'an object';
    case 'null':
      return 'null';
    default:
      return Array.isArray(type) ? type.map(typeName).join(' or ') : String(type);
  }
}

function describeSent(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return value === '' ? 'empty text' : `the text ${quote(value)}`;
  if (typeof value === 'number') return `the number ${value}`;
  if (typeof value === 'boolean') return `the value ${value}`;
  if (Array.isArray(value)) return `a list of ${value.length} item${value.length === 1 ? '' : 's'}`;
  return 'an object';
}

/** The essence of a parameter description: its first clause, starting lowercase. */
function hint(parameter: ParameterDefinition | undefined): string {
  if (!parameter) return '';
  const clause = parameter.description.split(/;|(?<!\b(?:e\.g|i\.e))\.(?:\s|$)/)[0]!.trim();
  const lower = /^[A-Z][a-z]/.test(clause) ? `${clause.charAt(0).toLowerCase()}${clause.slice(1)}` : clause;
  return lower === '' ? '' : ` (${lower})`;
}

/** An example value from the schema (`examples`, `default`, `enum`, or bounds), as JSON text; '' when none fits. */
function example(schema: JsonSchema | undefined): string {
  if (!schema) return '';
  const examples = schema['examples'];
  if (Array.isArray(examples) && examples.length > 0) return JSON.stringify(examples[0]);
  if (schema['default'] !== undefined) return JSON.stringify(schema['default']);
  const enumValues = schema['enum'];
  if (Array.isArray(enumValues) && enumValues.length > 0) return JSON.stringify(enumValues[0]);
  const type = schema['type'];
  if (type === 'number' || type === 'integer') {
    const min = schema['minimum'];
    return typeof min === 'number' ? String(min) : '1';
  }
  if (type === 'boolean') return 'true';
  return '';
}

function decodePointer(pointer: string): string[] {
  return pointer === ''
    ? []
    : pointer
        .slice(1)
        .split('/')
        .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function displayPath(segments: readonly string[]): string {
  return segments.map((s, i) => (i === 0 ? s : /^(0|[1-9][0-9]*)$/.test(s) ? `[${s}]` : `.${s}`)).join('');
}

function valueAt(args: unknown, segments: readonly string[]): unknown {
  let value = args;
  for (const s of segments) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, s)) return undefined;
    value = (value as Record<string, unknown>)[s];
  }
  return value;
}

function numberRange(schema: JsonSchema): string {
  const min = schema['minimum'] ?? schema['exclusiveMinimum'];
  const max = schema['maximum'] ?? schema['exclusiveMaximum'];
  const what = schema['type'] === 'integer' ? 'a whole number' : 'a number';
  if (typeof min === 'number' && typeof max === 'number') return `${what} from ${min} to ${max}`;
  if (typeof min === 'number') return `${what} of at least ${min}`;
  if (typeof max === 'number') return `${what} of at most ${max}`;
  return what;
}

const COMPARISONS: Record<string, string> = { '>=': 'at least', '<=': 'at most', '>': 'more than', '<': 'less than' };

/** Rewrites one ajv error as an instruction about the argument it concerns. */
function instruction(
  e: ErrorObject,
  definition: ToolDefinition,
  args: Record<string, JsonValue>,
): { root: string; text: string } {
  const segments = decodePointer(e.instancePath);
  const params = e.params as Record<string, unknown>;
  if (segments.length === 0 && e.keyword === 'required') {
    const name = String(params['missingProperty']);
    const parameter = definition.parameters[name];
    const ex = example(parameter?.schema);
    const type = parameter?.schema['type'];
    return {
      root: name,
      text: `\`${name}\` is missing${hint(parameter)}. Send it as ${typeName(type)}${ex ? `, e.g. "${name}": ${ex}` : ''}.`,
    };
  }
  const root = segments[0] ?? '';
  const parameter = Object.hasOwn(definition.parameters, root) ? definition.parameters[root] : undefined;
  const path = `\`${displayPath(segments)}\``;
  const sent = describeSent(valueAt(args, segments));
  const about = segments.length === 1 ? hint(parameter) : '';
  const schema = e.parentSchema as JsonSchema | undefined;
  const ex = example(schema);
  let text: string;
  switch (e.keyword) {
    case 'type': {
      const type = typeName(params['type']);
      text = `${path} must be ${type}${about}; you sent ${sent}. Send ${type}${ex ? ` such as ${ex}` : ''}.`;
      break;
    }
    case 'enum': {
      const allowed = (params['allowedValues'] as unknown[]).map((v) => JSON.stringify(v)).join(', ');
      text = `${path} must be one of ${allowed}${about}; you sent ${sent}. Send one of those.`;
      break;
    }
    case 'const':
      text = `${path} must be ${JSON.stringify(params['allowedValue'])}${about}; you sent ${sent}.`;
      break;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      text = `${path} must be ${COMPARISONS[String(params['comparison'])] ?? String(params['comparison'])} ${String(params['limit'])}${about}; you sent ${sent}. Send ${schema ? numberRange(schema) : 'a number in range'}.`;
      break;
    case 'multipleOf':
      text = `${path} must be a multiple of ${String(params['multipleOf'])}${about}; you sent ${sent}.`;
      break;
    case 'minLength': {
      const limit = Number(params['limit']);
      text =
        limit === 1
          ? `${path} is empty${about}. Send non-empty text.`
          : `${path} must be at least ${limit} characters${about}; you sent ${sent}.`;
      break;
    }
    case 'maxLength': {
      const value = valueAt(args, segments);
      const length = typeof value === 'string' ? [...value].length : 0;
      text = `${path} is ${length} characters long; the limit is ${String(params['limit'])}. Send at most ${String(params['limit'])} characters.`;
      break;
    }
    case 'pattern':
      text = `${path} is not in the expected form${about}; you sent ${sent}. It must match /${String(params['pattern'])}/.`;
      break;
    case 'format':
      text = `${path} must be a valid ${String(params['format'])}${about}; you sent ${sent}.`;
      break;
    case 'minItems':
      text = `${path} must list at least ${String(params['limit'])} item${params['limit'] === 1 ? '' : 's'}${about}; you sent ${sent}.`;
      break;
    case 'maxItems':
      text = `${path} may list at most ${String(params['limit'])} items${about}; you sent ${sent}. Send fewer, over several calls if needed.`;
      break;
    case 'uniqueItems':
      text = `${path} lists the same item twice (items ${String(params['j'])} and ${String(params['i'])}); send each item once.`;
      break;
    case 'required':
      text = `${path} is missing \`${String(params['missingProperty'])}\`; add it.`;
      break;
    case 'additionalProperties':
      text = `${path} has an unexpected key ${quote(String(params['additionalProperty']))}; remove it.`;
      break;
    default:
      text = `${path} ${e.message ?? 'is invalid'}${about}; you sent ${sent}.`;
  }
  return { root, text };
}

function present(args: Record<string, JsonValue>, name: string): boolean {
  return Object.hasOwn(args, name) && args[name] !== undefined;
}

/** Whether exactly one group of `rule` is sent complete and nothing from the other groups is sent. */
function holds(rule: CombinationRule, args: Record<string, JsonValue>): boolean {
  let touched = 0;
  let complete = 0;
  for (const group of rule.oneOf) {
    let sent = 0;
    for (const name of group) if (present(args, name)) sent++;
    if (sent > 0) touched++;
    if (sent === group.length) complete++;
  }
  return complete === 1 && touched === 1;
}

/**
 * The broken combination rules of `definition` for `args`, each as its plain instruction followed by what was sent.
 * A rule holds when exactly one of its groups is sent complete and nothing from the other groups is sent.
 */
export function combinationProblems(definition: ToolDefinition, args: Record<string, JsonValue>): string[] {
  const problems: string[] = [];
  for (const rule of definition.combinations ?? []) {
    if (holds(rule, args)) continue;
    const complete = rule.oneOf.filter((group) => group.every((name) => present(args, name)));
    const touched = rule.oneOf.filter((group) => group.some((name) => present(args, name)));
    if (complete.length === 1 && touched.length === 1) continue;
    const sent = rule.oneOf.flat().filter((name) => present(args, name));
    let detail: string;
    if (sent.length === 0) detail = `You sent none of ${rule.oneOf.flat().join(', ')}.`;
    else if (touched.length > 1) detail = `You sent ${sent.join(' and ')}; choose one of the forms, not several.`;
    else {
      const missing = touched[0]!.filter((name) => !present(args, name));
      detail = `You sent ${sent.join(' and ')} without ${missing.join(' and ')}.`;
    }
    problems.push(`${rule.message} ${detail}`);
  }
  return problems;
}

function validatorOf(entry: CatalogEntry): ValidateFunction {
  const compiled = compiledOf(entry);
  if (compiled) return compiled.validateArguments;
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, p] of Object.entries(entry.definition.parameters)) {
    properties[name] = p.schema;
    if (p.controller === 'designer' || p.optional !== true) required.push(name);
  }
  return compileSchema({ type: 'object', properties, required, additionalProperties: false });
}

/**
 * Validates normalised, designer-filled arguments (see {@link normalizeArguments}) against `entry`'s compiled
 * schema, then its combination rules. Schema failures come first, one instruction per argument. Never throws for
 * any plain-JSON `args`.
 */
export function validateArguments(entry: CatalogEntry, args: Record<string, JsonValue>): ValidationResult {
  const validate = validatorOf(entry);
  if (!validate(args)) {
    const byRoot = new Map<string, string>();
    for (const e of validate.errors ?? []) {
      const { root, text } = instruction(e, entry.definition, args);
      if (!byRoot.has(root)) byRoot.set(root, text);
    }
    const problems = [...byRoot.values()];
    return refusal('invalid_arguments', entry, problems);
  }
  const broken = combinationProblems(entry.definition, args);
  if (broken.length > 0) return refusal('combination', entry, broken);
  return { ok: true };
}

function refusal(
  reason_code: 'invalid_arguments' | 'combination',
  entry: CatalogEntry,
  problems: string[],
): ValidationResult {
  const shown = problems.slice(0, MAX_MESSAGES);
  const more = problems.length - shown.length;
  const message = `${shown.join(' ')}${more > 0 ? ` (${more} more problems not shown.)` : ''}`;
  return { ok: false, reason_code, message: message || `The arguments to ${entry.name} are invalid.`, problems };
}

/**
 * How `result` departs from `entry`'s output contract, as sentences; empty when it conforms or when the tool has no
 * output contract. For executors and tests that check what a tool returned. Never throws.
 */
export function outputProblems(entry: CatalogEntry, result: unknown): string[] {
  const validate = compiledOf(entry)?.validateOutput;
  if (!validate || validate(result)) return [];
  return (validate.errors ?? []).slice(0, MAX_MESSAGES).map((e) => {
    const where = e.instancePath === '' ? 'the result' : `\`${displayPath(decodePointer(e.instancePath))}\``;
    return `${where} ${e.message ?? 'is invalid'}`;
  });
}
