/**
 * Time travel: a point in a tenant's log, for queries that answer as things stood then (`policy.status`,
 * `model-loop.get`). `time`: the events recorded at or before that instant (RFC 3339); `seq`: the events up to and at
 * that stream sequence. A point in the future is refused (`as_of_in_future`): the log cannot say what will happen.
 */
import { fragments, OneOf, Struct, Type, type Static } from '../wire.js';

export const AsOfV1 = OneOf([Struct({ time: fragments.time }), Struct({ seq: Type.Integer({ minimum: 1 }) })]);
export type AsOfV1 = Static<typeof AsOfV1>;

/**
 * `as_of` in a query string (`?as_of=1234`, `?as_of=2026-05-01T10:00:00Z`): digits are a stream sequence, anything
 * else a time, which the request's schema then checks like any other field.
 */
export const AS_OF_QUERY_SCHEMA = Object.freeze({
  type: 'string',
  description: 'As things stood then: a stream sequence (digits) or an RFC 3339 time, not in the future.',
  examples: ['1234', '2026-05-01T10:00:00Z'],
});

/** The {@link AsOfV1} a query-string value stands for (see {@link AS_OF_QUERY_SCHEMA}). */
export function asOfFromQuery(value: string): AsOfV1 {
  return /^[0-9]{1,15}$/.test(value) ? { seq: Number(value) } : { time: value };
}

/** True for the schema of an {@link AsOfV1} field (a choice of `{time}` and `{seq}`), wherever it is declared. */
export function isAsOfSchema(schema: unknown): boolean {
  const options = (schema as { oneOf?: readonly { properties?: Record<string, unknown> }[] } | undefined)?.oneOf;
  if (!Array.isArray(options) || options.length !== 2) return false;
  const keys = options.map((o) => Object.keys(o.properties ?? {}).join(',')).sort();
  return keys[0] === 'seq' && keys[1] === 'time';
}
