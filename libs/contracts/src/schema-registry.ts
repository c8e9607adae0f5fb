/**
 * One registry of JSON Schemas, compiled with ajv, used at every transport edge: before an event is appended, when an
 * event is read back, and when a command arrives over NATS or HTTP. Each schema is compiled the first time a value is
 * checked against it, not when it is registered: a process (a CLI command above all) pays only for the schemas it
 * uses, instead of compiling a few hundred at import. `compileAllSchemas` compiles every one, for the test that
 * proves they all compile.
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

const schemas = new Map<string, TSchema | JsonSchema>();
const validators = new Map<string, ValidateFunction>();

/** A JSON Schema object (draft 2020-12). */
export type JsonSchema = Record<string, unknown>;

/**
 * Registers `schema` (a TypeBox declaration or plain JSON Schema) under `name` (an event type or command name).
 * Registering the same name twice is an error.
 */
export function registerSchema(name: string, schema: TSchema | JsonSchema): void {
  if (schemas.has(name)) throw new Error(`schema ${name} is already registered`);
  schemas.set(name, schema);
}

/** True when a schema is registered under `name`. */
export function hasSchema(name: string): boolean {
  return schemas.has(name);
}

/** The compiled validator of `name`, compiling it on first use; undefined when nothing is registered under it. */
function validatorOf(name: string): ValidateFunction | undefined {
  let validate = validators.get(name);
  if (validate) return validate;
  const schema = schemas.get(name);
  if (!schema) return undefined;
  validate = ajv.compile(schema);
  validators.set(name, validate);
  return validate;
}

/** Compiles every registered schema now; throws on the first that ajv refuses. Returns how many there are. */
export function compileAllSchemas(): number {
  for (const name of schemas.keys()) validatorOf(name);
  return schemas.size;
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
  const validate = validatorOf(name);
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
