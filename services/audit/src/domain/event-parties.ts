/**
 * Who an archived event concerns, for `ormuz replay --agent/--device`. An aggregate's agent and device are named in
 * its first event (a call's request names its agent and target device, a conversation's start its agent and device, a
 * device's events the device), and its later events (an outcome, a message) do not repeat them: each archived row
 * carries its aggregate's parties, so that a replay for an agent or a device is one index range in stream order
 * (docs/decisions/0028).
 */

/** The agent and device of one aggregate, as far as its events have named them. */
export interface EventParties {
  readonly agent_id: string | null;
  readonly device_id: string | null;
}

export const NO_PARTIES: EventParties = { agent_id: null, device_id: null };

/**
 * What an event's own data names: `agent_id`; the device of a device event or a conversation (`device_id`), or of a
 * call (its `target`, or the `executor` it was dispatched to). The SQL form of the same rule backfilled the rows
 * archived before the columns existed (migration `0009_event_parties`).
 */
export function partiesNamedBy(data: unknown): EventParties {
  if (typeof data !== 'object' || data === null) return NO_PARTIES;
  const d = data as Record<string, unknown>;
  return {
    agent_id: text(d.agent_id),
    device_id: text(d.device_id) ?? text(field(d.target, 'device_id')) ?? text(field(d.executor, 'device_id')),
  };
}

/** The aggregate's parties once `named` is seen: what it already had wins, what was missing is filled in. */
export function withParties(known: EventParties, named: EventParties): EventParties {
  return { agent_id: known.agent_id ?? named.agent_id, device_id: known.device_id ?? named.device_id };
}

const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const field = (v: unknown, key: string): unknown =>
  typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[key] : undefined;
