/**
 * What a model sees of a tool: the JSON Schema of its model-controlled arguments, and a function name that providers
 * which forbid dots accept.
 */
import type { JsonSchema } from '@ormuz/contracts';
import { CatalogError } from './errors.js';
import { SNAKE_CASE_PATTERN, splitToolName, type ToolDefinition } from './tool-definition.js';

/**
 * The JSON Schema a model is shown for one tool version: an object of the model-controlled parameters (each with its
 * description), `required` listing the non-optional ones, `additionalProperties: false`. Designer parameters are
 * absent. Combination rules are not expressed here (providers handle top-level `oneOf` poorly); the description and
 * the gate's refusal carry them.
 */
export function modelSchema(definition: ToolDefinition): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, parameter] of Object.entries(definition.parameters)) {
    if (parameter.controller !== 'model') continue;
    properties[name] = { ...parameter.schema, description: parameter.description };
    if (parameter.optional !== true) required.push(name);
  }
  return { type: 'object', properties, required, additionalProperties: false };
}

/** What a provider's function-calling API is given for one tool. */
export interface ModelToolSpec {
  /** The canonical name, or its provider encoding when requested. */
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchema;
}

/** The tool as a model is offered it; `encodeName` applies {@link providerFunctionName}. */
export function modelToolSpec(definition: ToolDefinition, options: { encodeName?: boolean } = {}): ModelToolSpec {
  return {
    name: options.encodeName ? providerFunctionName(definition.name) : definition.name,
    description: definition.description,
    parameters: modelSchema(definition),
  };
}

const SEPARATOR = '__';

/**
 * The function name for providers that forbid dots: `device.tap` → `device__tap`. Reversible because both parts
 * are snake_case, which never contains `__`. Throws {@link CatalogError} for a name that is not
 * `<extension>.<snake_case>` (the catalog refuses such names at load, so catalog names always encode).
 */
export function providerFunctionName(name: string): string {
  const parts = splitToolName(name);
  if (!parts || !SNAKE_CASE_PATTERN.test(parts.extension) || !SNAKE_CASE_PATTERN.test(parts.tool)) {
    throw new CatalogError([
      {
        rule: 'invalid_name',
        tool: name,
        message: `${JSON.stringify(name)} cannot be encoded for a provider: only <extension>.<snake_case> names can, because their encoding must be reversible.`,
      },
    ]);
  }
  return `${parts.extension}${SEPARATOR}${parts.tool}`;
}

/**
 * The canonical name behind a provider function name (`device__tap` → `device.tap`), or `undefined` when `encoded`
 * is not exactly one encoding (no `__`, more than one, or parts that are not snake_case). Never throws.
 */
export function canonicalFromProviderName(encoded: string): string | undefined {
  if (typeof encoded !== 'string') return undefined;
  const at = encoded.indexOf(SEPARATOR);
  if (at <= 0 || encoded.indexOf(SEPARATOR, at + SEPARATOR.length) !== -1) return undefined;
  const extension = encoded.slice(0, at);
  const tool = encoded.slice(at + SEPARATOR.length);
  if (!SNAKE_CASE_PATTERN.test(extension) || !SNAKE_CASE_PATTERN.test(tool)) return undefined;
  return `${extension}.${tool}`;
}
