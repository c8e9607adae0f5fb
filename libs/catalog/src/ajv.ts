// One ajv (draft 2020-12) for every tool schema, with compiled validators memoised by the schema's canonical text:
// a catalog loaded twice, or two versions sharing a parameter schema, compile once.
import { canonicalJson, type JsonSchema } from '@ormuz/contracts';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats ships CommonJS with a default export; under ESM interop it may arrive wrapped once more.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv2020,
) => Ajv2020;

// verbose: errors carry their parent schema, which the instructions quote (bounds, examples).
const ajv = new Ajv2020({ allErrors: true, verbose: true, strict: true, allowUnionTypes: true });
addFormats(ajv);

const compiled = new Map<string, ValidateFunction>();

export type { ErrorObject, ValidateFunction };

/** Compiles `schema` (or returns the memoised validator). Throws ajv's error when the schema is invalid. */
export function compileSchema(schema: JsonSchema): ValidateFunction {
  const key = canonicalJson(schema);
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(key, validate);
  }
  return validate;
}
