/**
 * Building blocks of wire contracts. Every contract is one TypeBox declaration: the value is the JSON Schema (draft
 * 2020-12) that the schema registry compiles with ajv, and `Static<typeof X>` is its TypeScript type, so the two can
 * never drift apart. TypeBox's own markers are not enumerable, so ajv sees plain JSON Schema.
 *
 * The helpers keep the conventions every contract shares: objects are closed (`additionalProperties: false`) and
 * read-only in their static type, lists are read-only arrays, and a union whose branches exclude one another by a
 * discriminator is a `oneOf`, as it always was on the wire.
 */
import Type, { type Static, type TProperties, type TSchema, type TSchemaOptions } from 'typebox';
import type { JsonValue } from './canonical.js';

export { Type, type Static, type TProperties, type TSchema };

/** A closed object: only the listed properties are accepted; each is read-only in the static type. */
export function Struct<P extends TProperties>(properties: P, options: TSchemaOptions = {}) {
  return Type.ReadonlyObject(Type.Object(properties), { ...options, additionalProperties: false });
}

/** An array, read-only in the static type. */
export function List<T extends TSchema>(items: T, options: TSchemaOptions = {}) {
  return Type.Immutable(Type.Array(items, options));
}

/** Exactly one of `schemas` (`oneOf`): for unions whose branches exclude one another, e.g. by a `kind` constant. */
export function OneOf<S extends TSchema[]>(schemas: [...S], options: TSchemaOptions = {}) {
  return Type.Unsafe<Static<S[number]>>({ ...options, oneOf: schemas });
}

/** `schema` or `null` (`anyOf`). */
export function Nullable<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

/** Any JSON value: tool arguments and results as they travel, never interpreted here. */
export const JsonValueSchema = Type.Unsafe<JsonValue>({});

/** Any JSON object (tool arguments): the keys are the tool's to check, not the transport's. */
export const JsonObjectSchema = Type.Unsafe<{ readonly [key: string]: JsonValue }>({ type: 'object' });

/** Schema fragments reused across contracts. */
export const fragments = {
  /** Letters, digits, `_` and `-`; 1 to 128 characters, starting with a letter or digit (see ids.ts). */
  identifier: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$' }),
  /** Lowercase hex SHA-256. */
  sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  /** RFC 3339. */
  time: Type.String({ format: 'date-time' }),
  nonEmptyText: Type.String({ minLength: 1, maxLength: 4096 }),
};

type KeysOfUnion<U> = U extends unknown ? keyof U : never;
type ValueIn<U, K extends PropertyKey> = U extends unknown ? (K extends keyof U ? U[K] : never) : never;

/**
 * A union of object types as one object type: the keys every member has keep their (united) types; the keys only
 * some members have become optional. For code that reads any member, e.g. a message of any role.
 */
export type Merged<U> = {
  readonly [K in Extract<keyof U, PropertyKey>]: ValueIn<U, K>;
} & {
  readonly [K in Exclude<KeysOfUnion<U>, keyof U>]?: ValueIn<U, K>;
} extends infer M
  ? { [K in keyof M]: M[K] }
  : never;
