/**
 * An extension manifest: the unit in which tools are published, named, versioned and loaded.
 */
import type { JsonSchema } from '@ormuz/contracts';
import { compileSchema } from './ajv.js';
import type { ToolDefinition } from './tool-definition.js';

/** The manifest format this library reads. */
export const MANIFEST_API_VERSION = 'ormuz.dev/v1';

/** An extension and its tools. `metadata.name` is the extension key every tool name starts with. */
export interface ExtensionManifest {
  readonly apiVersion: typeof MANIFEST_API_VERSION;
  readonly kind: 'Extension';
  readonly metadata: {
    /** snake_case extension key; `ormuz` is reserved for the platform's core manifest. */
    readonly name: string;
    /** The extension's release, e.g. `1.4.0`; independent of each tool's contract version. */
    readonly version: string;
    readonly description: string;
  };
  /** Every tool version the extension ships; several versions of one tool may coexist. */
  readonly tools: readonly ToolDefinition[];
}

const nonEmptyText = { type: 'string', minLength: 1 } as const;

const PARAMETER_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['schema', 'description', 'controller'],
  additionalProperties: false,
  properties: {
    schema: { type: 'object' },
    description: nonEmptyText,
    controller: { enum: ['model', 'designer'] },
    optional: { type: 'boolean' },
  },
};

const TOOL_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['name', 'version', 'description', 'parameters', 'effect', 'risk_level', 'timeout_ms'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    version: { type: 'integer', minimum: 1 },
    description: nonEmptyText,
    parameters: { type: 'object', additionalProperties: PARAMETER_SCHEMA },
    combinations: {
      type: 'array',
      items: {
        type: 'object',
        required: ['oneOf', 'message'],
        additionalProperties: false,
        properties: {
          oneOf: {
            type: 'array',
            minItems: 2,
            items: { type: 'array', minItems: 1, items: { type: 'string' } },
          },
          message: nonEmptyText,
        },
      },
    },
    effect: { enum: ['read', 'write', 'cursor_read'] },
    risk_level: { enum: ['low', 'high', 'classify'] },
    executor: { enum: ['device', 'platform'] },
    timeout_ms: { type: 'integer', minimum: 1, maximum: 3_600_000 },
    output: {
      type: 'object',
      required: ['description', 'schema'],
      additionalProperties: false,
      properties: { description: nonEmptyText, schema: { type: 'object' } },
    },
    skills: { type: 'array', items: nonEmptyText },
    owner_summary: { type: 'string', minLength: 1, maxLength: 1000 },
  },
};

/** JSON Schema of an {@link ExtensionManifest}, for tools that author or ship manifests as JSON. */
export const EXTENSION_MANIFEST_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['apiVersion', 'kind', 'metadata', 'tools'],
  additionalProperties: false,
  properties: {
    apiVersion: { const: MANIFEST_API_VERSION },
    kind: { const: 'Extension' },
    metadata: {
      type: 'object',
      required: ['name', 'version', 'description'],
      additionalProperties: false,
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 64 },
        version: { type: 'string', pattern: '^[0-9]+\\.[0-9]+\\.[0-9]+(?:[-+][0-9A-Za-z.-]+)?$' },
        description: nonEmptyText,
      },
    },
    tools: { type: 'array', items: TOOL_SCHEMA },
  },
};

/** Describes how `value` departs from the manifest shape; empty when it has the shape. Never throws. */
export function manifestShapeProblems(value: unknown): string[] {
  const validate = compileSchema(EXTENSION_MANIFEST_SCHEMA);
  if (validate(value)) return [];
  return (validate.errors ?? []).slice(0, 10).map((e) => {
    const where = e.instancePath === '' ? 'the manifest' : e.instancePath.slice(1).replaceAll('/', '.');
    const extra =
      e.keyword === 'additionalProperties'
        ? ` (${String((e.params as { additionalProperty: string }).additionalProperty)})`
        : e.keyword === 'enum'
          ? ` (${(e.params as { allowedValues: unknown[] }).allowedValues.map(String).join(', ')})`
          : '';
    return `${where} ${e.message ?? 'is invalid'}${extra}`;
  });
}
