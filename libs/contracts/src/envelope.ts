/**
 * The CloudEvents 1.0 JSON envelope every Ormuz event travels in, with Ormuz's extension attributes.
 *
 * Extension names follow the CloudEvents rule (lowercase letters and digits, at most 20 characters):
 * `tenant`, `correlationid`, `causationid` and `schemaversion` (the version of `data`'s schema).
 */
import { randomUUID } from 'node:crypto';
import { assertIdentifier } from './ids.js';
import { fragments, Struct, Type, type Static } from './wire.js';

/** The CloudEvents 1.0 envelope; `data` is checked separately against the schema registered for the event's `type`. */
export const CloudEventEnvelope = Struct({
  specversion: Type.Literal('1.0'),
  /** Unique per event; also the JetStream `msgID`, so a republished event is deduplicated. */
  id: Type.String({ minLength: 1, maxLength: 128 }),
  /** The service that decided the event, as a URI reference (`/ormuz/policy`). */
  source: Type.String({ minLength: 1, maxLength: 256 }),
  /** Past-tense and versioned: `ormuz.toolcall.staged.v1`. */
  type: Type.String({ pattern: '^ormuz\\.[a-z_]+\\.[a-z_]+\\.v[0-9]+$' }),
  /** The aggregate's id (for tool calls, the call id). */
  subject: fragments.identifier,
  /** RFC 3339 time the event was decided, taken from the clock passed to the decider. */
  time: fragments.time,
  datacontenttype: Type.Literal('application/json'),
  tenant: fragments.identifier,
  /** The conversation or operation the event belongs to; every event of one call shares it. */
  correlationid: Type.String({ minLength: 1, maxLength: 256 }),
  /** The id of the event or command that caused this one. */
  causationid: Type.String({ minLength: 1, maxLength: 256 }),
  /** Version of `data`'s JSON Schema; the type's `.vN` suffix names the same number. */
  schemaversion: Type.Integer({ minimum: 1 }),
  data: Type.Unknown(),
});

/** A CloudEvents 1.0 event carrying Ormuz data of type `D` under event type `T`. */
export type OrmuzEvent<T extends string = string, D = unknown> = Omit<
  Static<typeof CloudEventEnvelope>,
  'type' | 'data'
> & {
  readonly type: T;
  readonly data: D;
};

/** What a decider produces: an event type and its data. The envelope is added when the event is appended. */
export interface EventDraft<T extends string = string, D = unknown> {
  readonly type: T;
  readonly data: D;
}

/** Metadata the appender adds to each draft. */
export interface EnvelopeContext {
  readonly source: string;
  readonly tenant: string;
  readonly subject: string;
  readonly correlationid: string;
  readonly causationid: string;
  readonly time: Date;
}

/** Extracts the version number from a versioned type name (`ormuz.toolcall.staged.v1` gives 1). */
export function schemaVersionOf(type: string): number {
  const m = /\.v(\d+)$/.exec(type);
  if (!m) throw new Error(`event type ${type} does not end in .v<number>`);
  return Number(m[1]);
}

/** Wraps a draft in a full envelope with a fresh id. */
export function envelope<T extends string, D>(draft: EventDraft<T, D>, ctx: EnvelopeContext): OrmuzEvent<T, D> {
  assertIdentifier('tenant', ctx.tenant);
  return {
    specversion: '1.0',
    id: randomUUID(),
    source: ctx.source,
    type: draft.type,
    subject: ctx.subject,
    time: ctx.time.toISOString(),
    datacontenttype: 'application/json',
    tenant: ctx.tenant,
    correlationid: ctx.correlationid,
    causationid: ctx.causationid,
    schemaversion: schemaVersionOf(draft.type),
    data: draft.data,
  };
}
