/**
 * The row of one replayed event, as `--format ndjson` prints it and the Parquet export stores it: the fields analysts
 * filter on as columns, read from the event where it names them (null where it does not), and the event data as JSON.
 */
import type { ContextName, OrmuzEvent, ReplayedEventV1 } from '@ormuz/contracts';

export interface ReplayRow {
  readonly seq: number;
  readonly idx: number;
  readonly context: ContextName;
  readonly id: string;
  readonly time: string;
  readonly type: string;
  readonly tenant: string;
  readonly subject: string;
  readonly call_id: string | null;
  readonly agent_id: string | null;
  readonly device_id: string | null;
  readonly tool: string | null;
  readonly risk: string | null;
  readonly outcome: string | null;
  readonly data: unknown;
}

/** The Parquet column types of {@link ReplayRow}, in order (DuckDB type names). */
export const REPLAY_ROW_COLUMNS: Readonly<Record<keyof ReplayRow, string>> = Object.freeze({
  seq: 'BIGINT',
  idx: 'INTEGER',
  context: 'VARCHAR',
  id: 'VARCHAR',
  time: 'TIMESTAMPTZ',
  type: 'VARCHAR',
  tenant: 'VARCHAR',
  subject: 'VARCHAR',
  call_id: 'VARCHAR',
  agent_id: 'VARCHAR',
  device_id: 'VARCHAR',
  tool: 'VARCHAR',
  risk: 'VARCHAR',
  outcome: 'VARCHAR',
  data: 'JSON',
});

/** Call events that end a call, or say its outcome is unknown: their type's name is the outcome. */
const OUTCOMES = new Set(['refused', 'denied', 'expired', 'sealed', 'succeeded', 'failed', 'outcome_unknown']);

type Fields = { readonly [key: string]: unknown };
const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const field = (v: unknown, key: string): unknown => (v && typeof v === 'object' ? (v as Fields)[key] : undefined);

export function replayRow(context: ContextName, { seq, idx, event }: ReplayedEventV1): ReplayRow {
  const e = event as OrmuzEvent;
  const d = e.data as unknown;
  const name = e.type.split('.').at(-2) ?? '';
  return {
    seq,
    idx,
    context,
    id: e.id,
    time: e.time,
    type: e.type,
    tenant: e.tenant,
    subject: e.subject,
    call_id: text(field(d, 'call_id')) ?? (context === 'calls' ? e.subject : null),
    agent_id: text(field(d, 'agent_id')),
    device_id:
      text(field(d, 'device_id')) ??
      text(field(field(d, 'target'), 'device_id')) ??
      text(field(field(d, 'executor'), 'device_id')) ??
      (context === 'devices' ? e.subject : null),
    tool: text(field(d, 'tool')),
    risk: text(field(field(d, 'verdict'), 'level')),
    outcome: context === 'calls' && OUTCOMES.has(name) ? name : null,
    data: d,
  };
}
