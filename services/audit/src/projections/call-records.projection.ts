import { sql, type Transaction, type UpdateObject } from 'kysely';
import { contextFilter, isToolCallEvent, ToolCallEventType as T, type ToolCallEventDraft } from '@ormuz/contracts';
import { streamName, type Enveloped, type Projection } from '@ormuz/event-log';
import { MissingCallRecordError, UnknownCallEventError } from '../domain/errors.js';
import type { AuditDB } from '../persistence/audit.tables.js';
import { AUDIT_SCHEMA } from '../persistence/migrations.js';

/** The status column is the event type's third segment: `ormuz.toolcall.outcome_unknown.v1` gives `outcome_unknown`. */
function statusOf(type: string): string {
  return type.split('.')[2] ?? type;
}

/** Columns one event sets, besides status, last_seq and updated_at. Only what the event itself says. */
function changes(e: ToolCallEventDraft, time: Date, seq: number): UpdateObject<AuditDB, 'call_records'> {
  switch (e.type) {
    case T.Requested:
      // Inserted, never updated: handled by the caller.
      return {};
    case T.Refused:
      return {
        decision: 'refused',
        decided_at: time,
        refusal_code: e.data.reason_code,
        refusal_message: e.data.message,
        finished_at: time,
      };
    case T.Staged:
      return {
        decision: 'staged',
        decided_at: time,
        risk_level: e.data.verdict.level,
        risk_reasons: JSON.stringify(e.data.verdict.reasons),
        approval_id: e.data.approval_id,
        approval_summary: e.data.summary,
        approval_expires_at: new Date(e.data.expires_at),
      };
    case T.Approved:
      return { approval_outcome: 'approved', decided_by: e.data.decided_by, approval_decided_at: time };
    case T.Denied:
      return {
        approval_outcome: 'denied',
        decided_by: e.data.decided_by,
        approval_decided_at: time,
        denial_reason: e.data.reason,
        finished_at: time,
      };
    case T.Expired:
      return { approval_outcome: 'expired', finished_at: time };
    case T.Authorized:
      return {
        // After an approval the gate's decision stays `staged`; only a direct authorisation is the decision itself.
        decision: sql<string>`coalesce(decision, 'authorized')`,
        decided_at: sql<Date>`coalesce(decided_at, ${time})`,
        risk_level: e.data.verdict.level,
        risk_reasons: JSON.stringify(e.data.verdict.reasons),
        approval_id: sql<string | null>`coalesce(${e.data.approval_id}::text, approval_id)`,
        authorized_at: time,
      };
    case T.Dispatched:
      return {
        request_id: e.data.request_id,
        executor: JSON.stringify(e.data.executor),
        deadline: new Date(e.data.deadline),
        dispatched_at: time,
      };
    case T.Started:
      return { executor_id: e.data.executor_id, boot_id: e.data.boot_id, started_at: time };
    case T.Succeeded:
      // JSON text, so a result of JSON null is stored as jsonb 'null', not as SQL NULL.
      return { result: JSON.stringify(e.data.result), finished_at: time };
    case T.Failed:
      return { error: JSON.stringify(e.data.error), finished_at: time };
    case T.OutcomeUnknown:
      return { unknown_cause: e.data.cause, unknown_detail: e.data.detail, unknown_at: time };
    case T.Sealed:
      return { sealed_by: e.data.sealed_by, seal_reason: e.data.reason, sealed_at: time, finished_at: time };
    default:
      return unknownEvent(e, seq);
  }
}

function unknownEvent(e: never, seq: number): never {
  throw new UnknownCallEventError((e as { type: string }).type, seq);
}

/**
 * Builds `audit.call_records`: one row per tool call, from the calls stream. Every column comes from an event; a
 * column no event has set stays NULL. Deterministic (event times, never the clock), so a rebuild from sequence 1
 * gives the same table. An update guarded by `last_seq <= seq` lets the events of one message (a request and its
 * decision share a sequence) through in order and refuses an older message's; the checkpoint, moved in the same
 * transaction, applies each message once. An event for a call without a row is an error (parked and reported), never
 * silently skipped.
 */
export function callRecordsProjection(namespace: string): Projection<AuditDB, ToolCallEventDraft> {
  return {
    name: 'audit_call_records',
    schema: AUDIT_SCHEMA,
    tables: [{ name: 'call_records' }],
    stream: streamName(namespace, 'calls'),
    filterSubject: contextFilter(namespace, 'calls'),
    accepts: isToolCallEvent,
    async apply(trx: Transaction<AuditDB>, event: Enveloped<ToolCallEventDraft>, seq: number) {
      const t = trx.withSchema(AUDIT_SCHEMA);
      const time = new Date(event.time);
      if (event.type === T.Requested) {
        const d = event.data;
        await t
          .insertInto('call_records')
          .values({
            tenant: event.tenant,
            call_id: d.call_id,
            tool: d.tool,
            contract_version: d.contract_version,
            agent_id: d.agent_id,
            correlation_id: event.correlationid,
            origin: JSON.stringify(d.origin),
            target_device_id: d.target?.device_id ?? null,
            payload: d.payload,
            payload_sha256: d.payload_sha256,
            status: statusOf(event.type),
            requested_at: time,
            updated_at: time,
            last_seq: seq,
          })
          .onConflict((oc) => oc.columns(['tenant', 'call_id']).doNothing())
          .execute();
        return;
      }
      const updated = await t
        .updateTable('call_records')
        .set({ ...changes(event, time, seq), status: statusOf(event.type), last_seq: seq, updated_at: time })
        .where('tenant', '=', event.tenant)
        .where('call_id', '=', event.data.call_id)
        .where('last_seq', '<=', seq)
        .executeTakeFirst();
      if (updated.numUpdatedRows > 0n) return;
      const exists = await t
        .selectFrom('call_records')
        .select('last_seq')
        .where('tenant', '=', event.tenant)
        .where('call_id', '=', event.data.call_id)
        .executeTakeFirst();
      if (!exists) throw new MissingCallRecordError(event.tenant, event.data.call_id, event.type, seq);
    },
    async reset(trx: Transaction<AuditDB>) {
      await trx.withSchema(AUDIT_SCHEMA).deleteFrom('call_records').execute();
    },
  };
}
