/**
 * Row types of the `audit` schema, as kysely sees them. JSON columns are written as JSON text (so a JSON `null` result
 * stays distinguishable from SQL NULL) and read back parsed.
 */
import type { ColumnType } from 'kysely';

/** A jsonb column: read parsed, written as JSON text. */
type Json<Read = unknown> = ColumnType<Read, string, string>;
/** A nullable jsonb column. */
type NullableJson<Read = unknown> = ColumnType<Read | null, string | null, string | null>;

export interface EventsTable {
  stream: string;
  /** The stream sequence of the event's message. */
  seq: number;
  /** The event's place in its message: 0 for a message of one event. */
  idx: ColumnType<number, number | undefined, number>;
  id: string;
  type: string;
  tenant: string;
  subject: string;
  time: Date;
  source: string;
  correlation_id: string;
  causation_id: string;
  schema_version: number;
  /** The event's data; an erased row has lost its erasable field (`erasable_field`). */
  data: Json;
  /** The event's place in its tenant's hash chain, from 1 (docs/archive-chain.md). */
  chain_pos: number;
  /** SHA-256 of the data's canonical form without its erasable field. */
  data_sha256: string;
  /** The data's erasable top-level field (`payload`, `result`, `error`), when it has one. */
  erasable_field: string | null;
  /** SHA-256 of the erasable field's canonical form; kept when the field is erased. */
  erasable_sha256: string | null;
  /** The tenant's previous link (64 zeros for the first). */
  prev_hash: string;
  /** This event's link. */
  row_hash: string;
  /** When the erasable field was removed; null while it is there. */
  erased_at: ColumnType<Date | null, never, never>;
  /** The agent its aggregate names (domain/event-parties.ts); not part of the chain's link. */
  agent_id: ColumnType<string | null, string | null | undefined, never>;
  /** The device its aggregate names; not part of the chain's link. */
  device_id: ColumnType<string | null, string | null | undefined, never>;
}

/** Each tenant's chain head: the last position and its link. */
export interface ChainHeadsTable {
  tenant: string;
  position: number;
  hash: string;
}

/** Per-tenant retention: erasable fields older than this many days are erased; null keeps them. */
export interface RetentionRulesTable {
  tenant: string;
  payloads_days: number | null;
  results_days: number | null;
  updated_at: Date;
}

export interface CallRecordsTable {
  tenant: string;
  call_id: string;
  tool: string;
  contract_version: string;
  agent_id: string;
  correlation_id: string;
  origin: Json;
  target_device_id: string | null;
  /** Null once erased (`payload_erased_at`). */
  payload: string | null;
  payload_sha256: string;
  status: string;
  decision: string | null;
  decided_at: Date | null;
  refusal_code: string | null;
  refusal_message: string | null;
  risk_level: string | null;
  risk_reasons: NullableJson<string[]>;
  approval_id: string | null;
  approval_summary: string | null;
  approval_expires_at: Date | null;
  approval_outcome: string | null;
  decided_by: string | null;
  approval_decided_at: Date | null;
  denial_reason: string | null;
  authorized_at: Date | null;
  request_id: string | null;
  executor: NullableJson;
  deadline: Date | null;
  dispatched_at: Date | null;
  executor_id: string | null;
  boot_id: string | null;
  started_at: Date | null;
  result: NullableJson;
  error: NullableJson;
  unknown_cause: string | null;
  unknown_detail: string | null;
  unknown_at: Date | null;
  sealed_by: string | null;
  seal_reason: string | null;
  sealed_at: Date | null;
  requested_at: Date;
  finished_at: Date | null;
  updated_at: Date;
  last_seq: number;
  /** When the payload was erased; null while it is there. */
  payload_erased_at: ColumnType<Date | null, never, Date>;
  /** When the result and error were erased; null while they are there. */
  result_erased_at: ColumnType<Date | null, never, Date>;
}

export interface ProjectionCheckpointsTable {
  projection: string;
  stream: string;
  seq: number;
  updated_at: Date;
}

export interface ParkedMessagesTable {
  projection: string;
  stream: string;
  seq: number;
  subject: string;
  payload: string;
  error: string;
  parked_at: Date;
}

export interface AuditDB {
  events: EventsTable;
  call_records: CallRecordsTable;
  projection_checkpoints: ProjectionCheckpointsTable;
  parked_messages: ParkedMessagesTable;
  chain_heads: ChainHeadsTable;
  retention_rules: RetentionRulesTable;
}
