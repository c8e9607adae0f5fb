/**
 * Wire contracts of the public HTTP API that are not a command's: the error body every route answers with, and the
 * tenant's event stream (server-sent events), which reads the log directly since no command serves it. The command
 * routes take their requests and replies from the command map (`rpcs.ts`).
 */
import { CloudEventEnvelope } from './envelope.js';
import { registerSchema } from './schema-registry.js';
import { CONTEXTS, type ContextName } from './subjects.js';
import { fragments, List, Struct, Type, type Static } from './wire.js';

/** What every route answers when it fails: a code to branch on and a sentence to show, as NATS commands do. */
export const ApiErrorV1 = Struct({
  error: Struct({
    /** Stable: `unauthenticated`, `forbidden`, `schema_violation`, `call_not_found`, … */
    code: Type.String(),
    message: Type.String(),
  }),
});
export type ApiErrorV1 = Static<typeof ApiErrorV1>;

/**
 * `GET /v1/tenants/{tenant}/events`: one context's events of a tenant, from a point, then live. `from` is a stream
 * sequence (inclusive) or an RFC 3339 time; without it, only events appended after the stream opened. A client that
 * reconnects sends `Last-Event-ID` instead, and resumes after that sequence.
 */
export const TenantEventsRequestV1 = Struct({
  tenant: fragments.identifier,
  /** The context whose stream to read. Default `calls`. */
  context: Type.Optional(Type.Enum(Object.keys(CONTEXTS) as ContextName[])),
  from: Type.Optional(Type.Union([Type.String({ pattern: '^[1-9][0-9]{0,15}$' }), fragments.time])),
});
export type TenantEventsRequestV1 = Static<typeof TenantEventsRequestV1>;

/**
 * The `data` of one server-sent event: one message of the stream, whose sequence is also the event's `id`. A message
 * holds every event of one decision (a submit records the request and the gate's decision together), so resuming
 * after an id never splits a decision. A message that cannot be read is sent once with `error` and no events.
 */
export const TenantEventsMessageV1 = Struct({
  context: Type.Enum(Object.keys(CONTEXTS) as ContextName[]),
  /** Stream sequence of the message: the SSE `id`, the `Last-Event-ID` to resume after. */
  seq: Type.Integer({ minimum: 1 }),
  events: List(CloudEventEnvelope),
  error: Type.Optional(Type.String()),
});
export type TenantEventsMessageV1 = Static<typeof TenantEventsMessageV1>;

export const TENANT_EVENTS_V1 = 'api.events.v1';

registerSchema(TENANT_EVENTS_V1, TenantEventsRequestV1);
