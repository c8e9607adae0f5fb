/**
 * One registry of JSON Schemas, compiled once with ajv, used at every transport edge: before an event is appended,
 * when an event is read back, and when a command arrives over NATS or HTTP.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { TSchema } from 'typebox';
import { CloudEventEnvelope } from './envelope.js';
import { SchemaViolationError } from './errors.js';

export { fragments } from './wire.js';

// ajv-formats ships CommonJS with a default export; under ESM interop it may arrive wrapped once more.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv2020,
) => Ajv2020;

const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
addFormats(ajv);

const validators = new Map<string, ValidateFunction>();

/** A JSON Schema object (draft 2020-12). */
export type JsonSchema = Record<string, unknown>;

/**
 * Registers `schema` (a TypeBox declaration or plain JSON Schema) under `name` (an event type or command name).
 * Registering the same name twice is an error.
 */
export function registerSchema(name: string, schema: TSchema | JsonSchema): void {
  if (validators.has(name)) throw new Error(`schema ${name} is already registered`);
  validators.set(name, ajv.compile(schema));
}

/** True when a schema is registered under `name`. */
export function hasSchema(name: string): boolean {
  return validators.has(name);
}

function describe(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).slice(0, 8).map((e) => {
    const where = e.instancePath === '' ? 'the value' : e.instancePath.slice(1).replaceAll('/', '.');
    if (e.keyword === 'additionalProperties') {
      return `${where} has an unexpected property '${String((e.params as { additionalProperty: string }).additionalProperty)}'`;
    }
    if (e.keyword === 'required') {
      return `${where} is missing '${String((e.params as { missingProperty: string }).missingProperty)}'`;
    }
    return `${where} ${e.message ?? 'is invalid'}`;
  });
}

/** Validates `value` against the schema named `name`; throws {@link SchemaViolationError} listing what is wrong. */
export function assertValid<T>(name: string, value: unknown): T {
  const validate = validators.get(name);
  if (!validate) throw new SchemaViolationError(name, [`no schema is registered for ${name}`]);
  if (!validate(value)) throw new SchemaViolationError(name, describe(validate.errors));
  return value as T;
}

/** Envelope schema; `data` is checked separately against the schema registered for the event's `type`. */
export const ENVELOPE_SCHEMA = CloudEventEnvelope;
registerSchema('cloudevent', ENVELOPE_SCHEMA);

/**
 * Validates a whole event: the envelope, then `data` against the schema registered for its `type`.
 * An unknown type is a violation, not a pass.
 */
export function assertValidEvent<E>(event: unknown): E {
  const env = assertValid<{ type: string; data: unknown }>('cloudevent', event);
  assertValid(env.type, env.data);
  return event as E;
}
