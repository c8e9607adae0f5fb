/**
 * Wire contracts of the audit service's NATS commands (`<namespace>.cmd.audit.<name>`). Versioned by name; old
 * versions stay readable when a new one is added.
 *
 * Every query is scoped to one tenant: a reply never carries another tenant's rows. Every field of a reply is present;
 * a value that was never recorded is `null`, never a plausible default.
 */
import type { JsonValue } from '../canonical.js';
import type { OrmuzEvent } from '../envelope.js';
import type { CallErrorV1, CallExecutorV1, CallOriginV1, OutcomeUnknownCauseV1 } from '../events/tool-call.events.js';
import { fragments, registerSchema } from '../schema-registry.js';
import { CONTEXTS, type ContextName } from '../subjects.js';

/** `audit.call`: the audit row of one tool call. Answers `call_not_found` when the tenant has no such call. */
export interface AuditCallRequestV1 {
  readonly tenant: string;
  readonly call_id: string;
}

/**
 * One tool call as the audit trail holds it, built from the `calls` stream. Times are RFC 3339 (UTC, millisecond
 * precision). Every column the call has not reached is `null`.
 */
export interface AuditCallRecordV1 {
  readonly tenant: string;
  readonly call_id: string;
  readonly tool: string;
  readonly contract_version: string;
  readonly agent_id: string;
  /** Correlation id of the requested event (the conversation or operation). */
  readonly correlation_id: string;
  readonly origin: CallOriginV1;
  /** The device the call was aimed at, or `null` when it had no device target. */
  readonly target_device_id: string | null;
  /** The canonical JSON text that was recorded: exactly the bytes an executor receives and hashes. */
  readonly payload: string;
  /** Lowercase hex SHA-256 of the payload's UTF-8 bytes. */
  readonly payload_sha256: string;
  /** Latest lifecycle status (`requested` … `succeeded`, `sealed`, `outcome_unknown`). */
  readonly status: string;
  /** The gate's decision; `null` while the call awaits it. An approved high-risk call stays `staged` here. */
  readonly decision: 'refused' | 'staged' | 'authorized' | null;
  /** When the gate decided. */
  readonly decided_at: string | null;
  readonly refusal_code: string | null;
  readonly refusal_message: string | null;
  /** The risk verdict; `null` for a call refused before one was given. */
  readonly risk_level: 'low' | 'high' | null;
  readonly risk_reasons: readonly string[] | null;
  readonly approval_id: string | null;
  /** The sentence the owner was shown. */
  readonly approval_summary: string | null;
  readonly approval_expires_at: string | null;
  /** How the approval closed: `approved`, `denied` or `expired`; `null` while pending or when none was needed. */
  readonly approval_outcome: 'approved' | 'denied' | 'expired' | null;
  /** The principal who approved or denied; `null` otherwise (an expiry has no decider). */
  readonly decided_by: string | null;
  /** When the owner approved or denied. */
  readonly approval_decided_at: string | null;
  readonly denial_reason: string | null;
  readonly authorized_at: string | null;
  /** Id of the delivery to the executor. */
  readonly request_id: string | null;
  readonly executor: CallExecutorV1 | null;
  readonly deadline: string | null;
  readonly dispatched_at: string | null;
  /** The executor that won the start claim, and its boot id. */
  readonly executor_id: string | null;
  readonly boot_id: string | null;
  readonly started_at: string | null;
  /**
   * The executor's result (untrusted data) once `succeeded`. It may itself be JSON `null`; `status` tells that case
   * apart from a call that has no result.
   */
  readonly result: JsonValue | null;
  readonly error: CallErrorV1 | null;
  /** Kept after a late real outcome, so the trail shows the outcome was once unknown. */
  readonly unknown_cause: OutcomeUnknownCauseV1 | null;
  /** What was observed when the outcome became unknown (may be the empty string it was recorded as). */
  readonly unknown_detail: string | null;
  readonly unknown_at: string | null;
  readonly sealed_by: string | null;
  readonly seal_reason: string | null;
  readonly sealed_at: string | null;
  readonly requested_at: string;
  /** When the call reached a final status (refused, denied, expired, sealed, succeeded, failed); `null` before. */
  readonly finished_at: string | null;
  /** Time of the call's latest event. */
  readonly updated_at: string;
  /** Stream sequence of the call's latest applied event. */
  readonly last_seq: number;
}

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
export interface AuditEventsRequestV1 {
  readonly tenant: string;
  /** The context whose stream to read. Default `calls`. */
  readonly context?: ContextName;
  /** Only this call's events (context `calls` only). */
  readonly call_id?: string;
  /** First stream sequence to return (inclusive). Default 1. */
  readonly from_seq?: number;
  /** 1 to {@link AUDIT_EVENTS_MAX_LIMIT}. Default {@link AUDIT_EVENTS_DEFAULT_LIMIT}. */
  readonly limit?: number;
}

/** One archived event: the CloudEvent exactly as it was on the log, with where it was. */
export interface ArchivedEventV1 {
  readonly stream: string;
  readonly seq: number;
  readonly event: OrmuzEvent;
}

export interface AuditEventsReplyV1 {
  readonly events: readonly ArchivedEventV1[];
  /** True when more matching events exist than this page holds (limit or reply size reached). */
  readonly partial: boolean;
  /** Pass as `from_seq` to read the next page; `null` when this page is the last. */
  readonly next_from_seq: number | null;
}

/** The audit service's projections, by name. */
export const AUDIT_PROJECTIONS = [
  'call_records',
  ...(Object.keys(CONTEXTS) as ContextName[]).map((c) => `archive_${c}`),
];

/** `audit.rebuild`: empty one projection and rebuild it from sequence 1 of its stream. */
export interface AuditRebuildRequestV1 {
  /** `call_records` or `archive_<context>`. */
  readonly projection: string;
}

export interface AuditRebuildReplyV1 {
  readonly projection: string;
  readonly stream: string;
  /**
   * The stream's last sequence when the rebuild began. The rebuild has caught up once `audit.projections` reports a
   * checkpoint at or above it; until then queries see a partly rebuilt table.
   */
  readonly target_seq: number;
}

/** `audit.projections`: where each projection stands, and what it had to park. Takes `{}`. */
export interface AuditProjectionStatusV1 {
  readonly projection: string;
  readonly stream: string;
  /** Highest stream sequence applied (committed). */
  readonly checkpoint: number;
  /** The stream's last sequence now. */
  readonly stream_last_seq: number;
  /** Messages that could not be applied and were stored in `audit.parked_messages` instead. */
  readonly parked: number;
  readonly rebuilding: boolean;
}

export interface AuditProjectionsReplyV1 {
  readonly projections: readonly AuditProjectionStatusV1[];
}

export const AUDIT_CALL_V1 = 'audit.call.v1';
export const AUDIT_EVENTS_V1 = 'audit.events.v1';
export const AUDIT_REBUILD_V1 = 'audit.rebuild.v1';
export const AUDIT_PROJECTIONS_V1 = 'audit.projections.v1';

registerSchema(AUDIT_CALL_V1, {
  type: 'object',
  additionalProperties: false,
  required: ['tenant', 'call_id'],
  properties: { tenant: fragments.identifier, call_id: fragments.identifier },
});
registerSchema(AUDIT_EVENTS_V1, {
  type: 'object',
  additionalProperties: false,
  required: ['tenant'],
  properties: {
    tenant: fragments.identifier,
    context: { enum: Object.keys(CONTEXTS) },
    call_id: fragments.identifier,
    from_seq: { type: 'integer', minimum: 1 },
    limit: { type: 'integer', minimum: 1, maximum: AUDIT_EVENTS_MAX_LIMIT },
  },
});
registerSchema(AUDIT_REBUILD_V1, {
  type: 'object',
  additionalProperties: false,
  required: ['projection'],
  properties: { projection: { enum: AUDIT_PROJECTIONS } },
});
registerSchema(AUDIT_PROJECTIONS_V1, { type: 'object', additionalProperties: false, properties: {} });
