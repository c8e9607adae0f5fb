/**
 * Wire contracts of the commands every service answers (`<namespace>.cmd.<service>.<name>`), whatever else it serves:
 * `health` once it is serving, and `consumers.status` / `consumers.retry` from the process that runs its log consumers
 * (projections and reactors; `ormuz projections status | retry`).
 */
import { registerSchema } from '../schema-registry.js';
import { List, Nullable, Struct, Type, type Static } from '../wire.js';

/** `health` and `consumers.status` take an empty object. */
export const EmptyRequestV1 = Struct({});
export type EmptyRequestV1 = Static<typeof EmptyRequestV1>;

/** What every service answers to `health` once it is serving (see `startService`). */
export const ServiceHealthV1 = Struct({
  service: Type.String(),
  pid: Type.Integer(),
  /** What the process serves besides NATS commands, by name (`http`: its URL). */
  endpoints: Type.Record(Type.String(), Type.String()),
});
export type ServiceHealthV1 = Static<typeof ServiceHealthV1>;

/** Where one consumer stands, for operators (`ormuz projections status`). */
export const ConsumerStatusV1 = Struct({
  name: Type.String(),
  kind: Type.Enum(['projection', 'reaction']),
  schema: Type.String(),
  stream: Type.String(),
  running: Type.Boolean(),
  /** Highest stream sequence handled (saved). */
  checkpoint: Type.Integer(),
  /** Messages in its filter after the checkpoint (undelivered plus delivered but not yet handled); null if unknown. */
  lag: Nullable(Type.Integer()),
  parked: Type.Integer(),
  /** The oldest parked message, with its error. */
  oldest_parked: Nullable(
    Struct({ seq: Type.Integer(), subject: Type.String(), error: Type.String(), parked_at: Type.String() }),
  ),
});
export type ConsumerStatusV1 = Static<typeof ConsumerStatusV1>;

/** The answer to `consumers.status`. */
export const ConsumersStatusV1 = Struct({ service: Type.String(), consumers: List(ConsumerStatusV1) });
export type ConsumersStatusV1 = Static<typeof ConsumersStatusV1>;

/** `consumers.retry`: retry what one consumer parked. */
export const RetryParkedRequestV1 = Struct({ name: Type.String() });
export type RetryParkedRequestV1 = Static<typeof RetryParkedRequestV1>;

/** The answer to `consumers.retry`. */
export const RetryParkedReplyV1 = Struct({
  name: Type.String(),
  retried: Type.Integer(),
  /** True when the read model was rebuilt from sequence 1 to apply them in order. */
  rebuilt: Type.Boolean(),
  still_parked: List(Struct({ seq: Type.Integer(), error: Type.String() })),
});
export type RetryParkedReplyV1 = Static<typeof RetryParkedReplyV1>;

/**
 * `consumers.rebuild`: replay one projection's stream into a fresh schema with the live projection's code, then
 * compare it row by row with the live read model (`diff`) and/or swap it in (`swap`). `force` replaces an earlier
 * rebuild's schema; a schema that holds anything else is never dropped.
 */
export const RebuildProjectionRequestV1 = Struct({
  name: Type.String(),
  into: Type.String(),
  diff: Type.Optional(Type.Boolean()),
  swap: Type.Optional(Type.Boolean()),
  force: Type.Optional(Type.Boolean()),
});
export type RebuildProjectionRequestV1 = Static<typeof RebuildProjectionRequestV1>;

/** One row that differs: its key (primary key columns), the column, and the value on each side (null: no row there). */
export const ProjectionRowDifferenceV1 = Struct({
  table: Type.String(),
  key: Type.Record(Type.String(), Type.Unknown()),
  column: Type.String(),
  live: Type.Unknown(),
  rebuilt: Type.Unknown(),
});
export type ProjectionRowDifferenceV1 = Static<typeof ProjectionRowDifferenceV1>;

/** The answer to `consumers.rebuild`. */
export const RebuildProjectionReplyV1 = Struct({
  name: Type.String(),
  /** The live read model's schema and the rebuild's. */
  schema: Type.String(),
  into: Type.String(),
  /** True when an unfinished rebuild in `into` (a process stopped mid-way) was continued from its checkpoint. */
  resumed: Type.Boolean(),
  /** The stream sequence both sides were compared at (or the rebuild reached). */
  checkpoint: Type.Integer(),
  /** Messages the rebuild parked (they could not be applied). */
  parked: Type.Integer(),
  /** Per table: rows on each side and rows that differ; absent without `diff`. */
  tables: Type.Optional(
    List(
      Struct({
        table: Type.String(),
        live_rows: Type.Integer(),
        rebuilt_rows: Type.Integer(),
        differing: Type.Integer(),
      }),
    ),
  ),
  /** The differing rows, column by column, at most the first 100 rows. */
  differences: Type.Optional(List(ProjectionRowDifferenceV1)),
  /** True once the rebuilt tables serve readers; the previous live tables are then in `into`. */
  swapped: Type.Boolean(),
});
export type RebuildProjectionReplyV1 = Static<typeof RebuildProjectionReplyV1>;

/**
 * One check of a readiness probe (`GET /readyz` on the probes' port, `HEALTH_PORT`): `nats` (connected, answering a
 * ping), `streams` (the streams the service writes or reads exist), `postgres` (answers a query), `consumers` (every
 * projection and reactor the process runs is running, with its lag within `HEALTH_MAX_LAG`).
 */
export const ProbeCheckV1 = Struct({
  name: Type.Enum(['nats', 'streams', 'postgres', 'consumers']),
  ok: Type.Boolean(),
  /** Why it failed, in words (the dependency and its error, or each consumer that is stopped or lags). */
  error: Type.Optional(Type.String()),
  /** `consumers`: each one's name, whether it runs and its lag (null: its NATS consumer did not say). */
  consumers: Type.Optional(
    List(Struct({ name: Type.String(), running: Type.Boolean(), lag: Nullable(Type.Integer()) })),
  ),
});
export type ProbeCheckV1 = Static<typeof ProbeCheckV1>;

/** The body of `GET /readyz`: HTTP 200 when `ready`, 503 otherwise, naming the checks that failed. */
export const ReadinessV1 = Struct({
  service: Type.String(),
  ready: Type.Boolean(),
  /** Names of the failed checks, in the order of `checks`. */
  failed: List(Type.String()),
  checks: List(ProbeCheckV1),
});
export type ReadinessV1 = Static<typeof ReadinessV1>;

/** The body of `GET /livez`: HTTP 200 whenever the process's event loop answers; it checks no dependency. */
export const LivenessV1 = Struct({ service: Type.String(), alive: Type.Boolean(), pid: Type.Integer() });
export type LivenessV1 = Static<typeof LivenessV1>;

export const SERVICE_HEALTH_V1 = 'service.health.v1';
export const SERVICE_CONSUMERS_STATUS_V1 = 'service.consumers.status.v1';
export const SERVICE_CONSUMERS_RETRY_V1 = 'service.consumers.retry.v1';
export const SERVICE_CONSUMERS_REBUILD_V1 = 'service.consumers.rebuild.v1';

registerSchema(SERVICE_HEALTH_V1, EmptyRequestV1);
registerSchema(SERVICE_CONSUMERS_STATUS_V1, EmptyRequestV1);
registerSchema(SERVICE_CONSUMERS_RETRY_V1, RetryParkedRequestV1);
registerSchema(SERVICE_CONSUMERS_REBUILD_V1, RebuildProjectionRequestV1);
