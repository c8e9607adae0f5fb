/**
 * Wire contracts of the audit service's NATS commands (`<namespace>.cmd.audit.<name>`). Versioned by name; old
 * versions stay readable when a new one is added.
 *
 * Every query is scoped to one tenant: a reply never carries another tenant's rows. Every field of a reply is present;
 * a value that was never recorded is `null`, never a plausible default.
 */
import { CloudEventEnvelope } from '../envelope.js';
import { CallErrorV1, CallExecutorV1, CallOriginV1, OutcomeUnknownCauseV1 } from '../events/tool-call.events.js';
import { registerSchema } from '../schema-registry.js';
import { CONTEXTS, type ContextName } from '../subjects.js';
import { fragments, JsonValueSchema, List, Nullable, Struct, Type, type Static } from '../wire.js';

/** `audit.call`: the audit row of one tool call. Answers `call_not_found` when the tenant has no such call. */
export const AuditCallRequestV1 = Struct({ tenant: fragments.identifier, call_id: fragments.identifier });
export type AuditCallRequestV1 = Static<typeof AuditCallRequestV1>;

const str = Type.String();
const maybe = Nullable(Type.String());

/**
 * One tool call as the audit trail holds it, built from the `calls` stream. Times are RFC 3339 (UTC, millisecond
 * precision). Every column the call has not reached is `null`.
 */
export const AuditCallRecordV1 = Struct({
  tenant: str,
  call_id: str,
  tool: str,
  contract_version: str,
  agent_id: str,
  /** Correlation id of the requested event (the conversation or operation). */
  correlation_id: str,
  origin: CallOriginV1,
  /** The device the call was aimed at, or `null` when it had no device target. */
  target_device_id: maybe,
  /**
   * The canonical JSON text that was recorded: exactly the bytes an executor receives and hashes. `null` once erased
   * (`payload_erased_at`); `payload_sha256` stays.
   */
  payload: maybe,
  /** Lowercase hex SHA-256 of the payload's UTF-8 bytes. */
  payload_sha256: str,
  /** Latest lifecycle status (`requested` … `succeeded`, `sealed`, `outcome_unknown`). */
  status: str,
  /** The gate's decision; `null` while the call awaits it. An approved high-risk call stays `staged` here. */
  decision: Nullable(Type.Enum(['refused', 'staged', 'authorized'])),
  /** When the gate decided. */
  decided_at: maybe,
  refusal_code: maybe,
  refusal_message: maybe,
  /** The risk verdict; `null` for a call refused before one was given. */
  risk_level: Nullable(Type.Enum(['low', 'high'])),
  risk_reasons: Nullable(List(str)),
  approval_id: maybe,
  /** The sentence the owner was shown. */
  approval_summary: maybe,
  approval_expires_at: maybe,
  /** How the approval closed: `approved`, `denied` or `expired`; `null` while pending or when none was needed. */
  approval_outcome: Nullable(Type.Enum(['approved', 'denied', 'expired'])),
  /** The principal who approved or denied; `null` otherwise (an expiry has no decider). */
  decided_by: maybe,
  /** When the owner approved or denied. */
  approval_decided_at: maybe,
  denial_reason: maybe,
  authorized_at: maybe,
  /** Id of the delivery to the executor. */
  request_id: maybe,
  executor: Nullable(CallExecutorV1),
  deadline: maybe,
  dispatched_at: maybe,
  /** The executor that won the start claim, and its boot id. */
  executor_id: maybe,
  boot_id: maybe,
  started_at: maybe,
  /**
   * The executor's result (untrusted data) once `succeeded`. It may itself be JSON `null`; `status` tells that case
   * apart from a call that has no result.
   */
  result: JsonValueSchema,
  error: Nullable(CallErrorV1),
  /** Kept after a late real outcome, so the trail shows the outcome was once unknown. */
  unknown_cause: Nullable(OutcomeUnknownCauseV1),
  /** What was observed when the outcome became unknown (may be the empty string it was recorded as). */
  unknown_detail: maybe,
  unknown_at: maybe,
  sealed_by: maybe,
  seal_reason: maybe,
  sealed_at: maybe,
  requested_at: str,
  /** When the call reached a final status (refused, denied, expired, sealed, succeeded, failed); `null` before. */
  finished_at: maybe,
  /** Time of the call's latest event. */
  updated_at: str,
  /** Stream sequence of the call's latest applied event. */
  last_seq: Type.Integer(),
  /** When the payload was erased (retention or `audit.erase`); `null` while it is there. */
  payload_erased_at: maybe,
  /** When the result and error were erased; `null` while they are there. */
  result_erased_at: maybe,
});
export type AuditCallRecordV1 = Static<typeof AuditCallRecordV1>;

/** Most events one `audit.events` reply may hold. */
export const AUDIT_EVENTS_MAX_LIMIT = 1000;
/** Events returned when `limit` is omitted. */
export const AUDIT_EVENTS_DEFAULT_LIMIT = 100;
/**
 * Largest `audit.events` reply, in bytes of JSON: half of NATS's default `max_payload` (1 MiB). A page that would be
 * larger stops early and says so (`partial`); one event is always returned, whatever its size.
 */
export const AUDIT_EVENTS_MAX_REPLY_BYTES = 512 * 1024;

/** `audit.events`: archived events of one tenant, in stream order. */
export const AuditEventsRequestV1 = Struct({
  tenant: fragments.identifier,
  /** The context whose stream to read. Default `calls`. */
  context: Type.Optional(Type.Enum(Object.keys(CONTEXTS) as ContextName[])),
  /** Only this call's events (context `calls` only). */
  call_id: Type.Optional(fragments.identifier),
  /** First stream sequence to return (inclusive). Default 1. */
  from_seq: Type.Optional(Type.Integer({ minimum: 1 })),
  /** 1 to {@link AUDIT_EVENTS_MAX_LIMIT}. Default {@link AUDIT_EVENTS_DEFAULT_LIMIT}. */
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: AUDIT_EVENTS_MAX_LIMIT })),
});
export type AuditEventsRequestV1 = Static<typeof AuditEventsRequestV1>;

/** One archived event: the CloudEvent exactly as it was on the log, with where it was. */
export const ArchivedEventV1 = Struct({ stream: str, seq: Type.Integer(), event: CloudEventEnvelope });
export type ArchivedEventV1 = Static<typeof ArchivedEventV1>;

export const AuditEventsReplyV1 = Struct({
  events: List(ArchivedEventV1),
  /** True when more matching events exist than this page holds (limit or reply size reached). */
  partial: Type.Boolean(),
  /** Pass as `from_seq` to read the next page; `null` when this page is the last. */
  next_from_seq: Nullable(Type.Integer()),
});
export type AuditEventsReplyV1 = Static<typeof AuditEventsReplyV1>;

/** Most events one `audit.replay` page may hold. */
export const AUDIT_REPLAY_MAX_LIMIT = 5000;
/** Events per `audit.replay` page when `limit` is omitted: what fits a reply of {@link AUDIT_EVENTS_MAX_REPLY_BYTES}. */
export const AUDIT_REPLAY_DEFAULT_LIMIT = 2000;

/** A place in a stream: a message's sequence and an event's index in that message. */
export const StreamPositionV1 = Struct({ seq: Type.Integer({ minimum: 0 }), idx: Type.Integer({ minimum: 0 }) });
export type StreamPositionV1 = Static<typeof StreamPositionV1>;

/**
 * `audit.replay`: one page of a tenant's archived events of one context, filtered in the archive's SQL, in stream
 * order, after a keyset cursor (`after`). Every filter narrows; an absent filter does not. `agent_id` and `device_id`
 * select whole aggregates: every event of a call, conversation or device whose events name that agent or device.
 */
const replayFilters = {
  tenant: fragments.identifier,
  context: Type.Enum(Object.keys(CONTEXTS) as ContextName[]),
  /** Return events after this place (exclusive). Default: from the start of the stream. */
  after: Type.Optional(StreamPositionV1),
  /** Last message sequence to return (inclusive). */
  to_seq: Type.Optional(Type.Integer({ minimum: 1 })),
  /** Only events recorded at or after this instant. */
  from_time: Type.Optional(fragments.time),
  /** Only events recorded at or before this instant. */
  to_time: Type.Optional(fragments.time),
  /** Only this aggregate's events (a call id in `calls`, a conversation id, a device id). */
  subject: Type.Optional(fragments.identifier),
  agent_id: Type.Optional(fragments.identifier),
  device_id: Type.Optional(fragments.identifier),
  /** Only events of these CloudEvent types (exact names; the CLI expands its globs against the known types). */
  types: Type.Optional(List(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 100 })),
};

export const AuditReplayRequestV1 = Struct({
  ...replayFilters,
  /** 1 to {@link AUDIT_REPLAY_MAX_LIMIT}. Default {@link AUDIT_REPLAY_DEFAULT_LIMIT}. */
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: AUDIT_REPLAY_MAX_LIMIT })),
});
export type AuditReplayRequestV1 = Static<typeof AuditReplayRequestV1>;

/** One replayed event: where it was on the log and the CloudEvent as it was appended. */
export const ReplayedEventV1 = Struct({ seq: Type.Integer(), idx: Type.Integer(), event: CloudEventEnvelope });
export type ReplayedEventV1 = Static<typeof ReplayedEventV1>;

export const AuditReplayReplyV1 = Struct({
  events: List(ReplayedEventV1),
  /** Pass as `after` for the next page; `null` when no matching event follows this page. */
  next: Nullable(StreamPositionV1),
  /**
   * The highest message sequence of the tenant in the stream within `to_seq`, whatever the other filters: where the
   * replay of this context ends at the latest (for progress). 0 when the tenant has none.
   */
  high_seq: Type.Integer(),
});
export type AuditReplayReplyV1 = Static<typeof AuditReplayReplyV1>;

/** Most events one `audit.export` request may cover. */
export const AUDIT_EXPORT_MAX_LIMIT = 50_000;
/** Events one `audit.export` request covers when `limit` is omitted. */
export const AUDIT_EXPORT_DEFAULT_LIMIT = 20_000;
/** Largest part of an `audit.export` reply, in bytes, unless one event alone is larger. */
export const AUDIT_EXPORT_PART_BYTES = 512 * 1024;
/**
 * Most bytes of lines one `audit.export` request answers (one event at least): what a caller holding a request's
 * parts may hold, whatever the size of the events.
 */
export const AUDIT_EXPORT_MAX_BYTES = 8 * 1024 * 1024;

/**
 * `audit.export`: the events `audit.replay` would page through, with the same filters, streamed as NDJSON text in a
 * reply of parts (service-kit's streamed reply): each part holds whole lines, one event a line, as its
 * {@link ReplayRowV1} (`as: 'rows'`, the default) or as its CloudEvent (`cloudevents`), written by the archive, so a
 * caller appends the bytes without parsing an event. Each part's headers say how many events it holds
 * (`Ormuz-Count`) and the place of its last one (`Ormuz-Last`, `seq:idx`): a caller cut off mid-stream asks again
 * after the last part it kept. Up to `limit` events and {@link AUDIT_EXPORT_MAX_BYTES} per request; the final reply
 * says where to go on from.
 */
export const AuditExportRequestV1 = Struct({
  ...replayFilters,
  as: Type.Optional(Type.Union([Type.Literal('rows'), Type.Literal('cloudevents')])),
  /** 1 to {@link AUDIT_EXPORT_MAX_LIMIT}. Default {@link AUDIT_EXPORT_DEFAULT_LIMIT}. */
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: AUDIT_EXPORT_MAX_LIMIT })),
});
export type AuditExportRequestV1 = Static<typeof AuditExportRequestV1>;

/** Header of an `audit.export` part: the events (lines) it holds. */
export const EXPORT_COUNT_HEADER = 'Ormuz-Count';
/** Header of an `audit.export` part: the place of its last event, `seq:idx`. */
export const EXPORT_LAST_HEADER = 'Ormuz-Last';
/** Header of an `audit.export` part: the reply's `high_seq`, known before the first part, for progress. */
export const EXPORT_HIGH_SEQ_HEADER = 'Ormuz-High-Seq';

/** The final reply of `audit.export`, after its parts. */
export const AuditExportReplyV1 = Struct({
  /** Events in all the parts. */
  count: Type.Integer({ minimum: 0 }),
  /** Pass as `after` to go on; `null` when no matching event follows the last part. */
  next: Nullable(StreamPositionV1),
  /** As in `audit.replay`: the tenant's highest message sequence in the stream within `to_seq`. */
  high_seq: Type.Integer(),
});
export type AuditExportReplyV1 = Static<typeof AuditExportReplyV1>;

/** The audit service's projections, by name. */
export const AUDIT_PROJECTIONS = [
  'call_records',
  ...(Object.keys(CONTEXTS) as ContextName[]).map((c) => `archive_${c}`),
];

/** `audit.rebuild`: empty one projection and rebuild it from sequence 1 of its stream. */
export const AuditRebuildRequestV1 = Struct({
  /** `call_records` or `archive_<context>`. */
  projection: Type.Unsafe<string>({ enum: AUDIT_PROJECTIONS }),
});
export type AuditRebuildRequestV1 = Static<typeof AuditRebuildRequestV1>;

export const AuditRebuildReplyV1 = Struct({
  projection: str,
  stream: str,
  /**
   * The stream's last sequence when the rebuild began. The rebuild has caught up once `audit.projections` reports a
   * checkpoint at or above it; until then queries see a partly rebuilt table.
   */
  target_seq: Type.Integer(),
});
export type AuditRebuildReplyV1 = Static<typeof AuditRebuildReplyV1>;

/** `audit.projections`: where each projection stands, and what it had to park. Takes `{}`. */
export const AuditProjectionsRequestV1 = Struct({});
export type AuditProjectionsRequestV1 = Static<typeof AuditProjectionsRequestV1>;

/** Where one projection stands. */
export const AuditProjectionStatusV1 = Struct({
  projection: str,
  stream: str,
  /** Highest stream sequence applied (committed). */
  checkpoint: Type.Integer(),
  /** The stream's last sequence now. */
  stream_last_seq: Type.Integer(),
  /** Messages that could not be applied and were stored in `audit.parked_messages` instead. */
  parked: Type.Integer(),
  rebuilding: Type.Boolean(),
});
export type AuditProjectionStatusV1 = Static<typeof AuditProjectionStatusV1>;

export const AuditProjectionsReplyV1 = Struct({ projections: List(AuditProjectionStatusV1) });
export type AuditProjectionsReplyV1 = Static<typeof AuditProjectionsReplyV1>;

export const AUDIT_CALL_V1 = 'audit.call.v1';
export const AUDIT_EVENTS_V1 = 'audit.events.v1';
export const AUDIT_REPLAY_V1 = 'audit.replay.v1';
export const AUDIT_EXPORT_V1 = 'audit.export.v1';
export const AUDIT_REBUILD_V1 = 'audit.rebuild.v1';
export const AUDIT_PROJECTIONS_V1 = 'audit.projections.v1';

registerSchema(AUDIT_CALL_V1, AuditCallRequestV1);
registerSchema(AUDIT_EVENTS_V1, AuditEventsRequestV1);
registerSchema(AUDIT_REPLAY_V1, AuditReplayRequestV1);
registerSchema(AUDIT_EXPORT_V1, AuditExportRequestV1);
registerSchema(AUDIT_REBUILD_V1, AuditRebuildRequestV1);
registerSchema(AUDIT_PROJECTIONS_V1, AuditProjectionsRequestV1);
