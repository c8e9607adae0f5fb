/**
 * The CloudEvents 1.0 JSON envelope every Ormuz event travels in, with Ormuz's extension attributes.
 *
 * Extension names follow the CloudEvents rule (lowercase letters and digits, at most 20 characters):
 * `tenant`, `correlationid`, `causationid` and `schemaversion` (the version of `data`'s schema).
 */
import { randomUUID } from 'node:crypto';
import { assertIdentifier } from './ids.js';

/** A CloudEvents 1.0 event carrying Ormuz data of type `D` under event type `T`. */
export interface OrmuzEvent<T extends string = string, D = unknown> {
  readonly specversion: '1.0';
  /** Unique per event; also the JetStream `msgID`, so a republished event is deduplicated. */
  readonly id: string;
  /** The service that decided the event, as a URI reference (`/ormuz/policy`). */
  readonly source: string;
  /** Past-tense and versioned: `ormuz.toolcall.staged.v1`. */
  readonly type: T;
  /** The aggregate's id (for tool calls, the call id). */
  readonly subject: string;
  /** RFC 3339 time the event was decided, taken from the clock passed to the decider. */
  readonly time: string;
  readonly datacontenttype: 'application/json';
  readonly tenant: string;
  /** The conversation or operation the event belongs to; every event of one call shares it. */
  readonly correlationid: string;
  /** The id of the event or command that caused this one. */
  readonly causationid: string;
  /** Version of `data`'s JSON Schema; the type's `.vN` suffix names the same number. */
  readonly schemaversion: number;
  readonly data: D;
}

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
