/**
 * The row of one replayed event, as `audit.export` writes it (`as: 'rows'`), `ormuz replay --format ndjson` prints
 * it and the Parquet export stores it: the fields analysts filter on as columns, read from the event where it names
 * them (null where it does not), and the event data as JSON.
 *
 * The audit archive writes these rows in SQL; {@link replayRowOf} is the definition its SQL twin is tested against.
 */
import type { OrmuzEvent } from '../envelope.js';
import type { ContextName } from '../subjects.js';
import type { ReplayedEventV1 } from './audit.commands.js';

export interface ReplayRowV1 {
  readonly seq: number;
  readonly idx: number;
  readonly context: ContextName;
  readonly id: string;
  readonly time: string;
  readonly type: string;
  readonly tenant: string;
  readonly subject: string;
  /** `data.call_id`; in `calls`, the subject when the data names none. */
  readonly call_id: string | null;
  readonly agent_id: string | null;
  /** `data.device_id`, else the target's or the executor's; in `devices`, the subject. */
  readonly device_id: string | null;
  readonly tool: string | null;
  /** `data.verdict.level`. */
  readonly risk: string | null;
  /** In `calls`, the name of an event that ends a call or leaves its outcome unknown. */
  readonly outcome: string | null;
  readonly data: unknown;
}

/** Call events that end a call, or say its outcome is unknown: their type's name is the outcome. */
export const REPLAY_ROW_OUTCOMES: readonly string[] = Object.freeze([
  'refused',
  'denied',
  'expired',
  'sealed',
  'succeeded',
  'failed',
  'outcome_unknown',
]);

type Fields = { readonly [key: string]: unknown };
const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const field = (v: unknown, key: string): unknown => (v && typeof v === 'object' ? (v as Fields)[key] : undefined);

/** The row of `event`, replayed from `context`. */
export function replayRowOf(context: ContextName, { seq, idx, event }: ReplayedEventV1): ReplayRowV1 {
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
    outcome: context === 'calls' && REPLAY_ROW_OUTCOMES.includes(name) ? name : null,
    data: d,
  };
}
