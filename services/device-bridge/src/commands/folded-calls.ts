/**
 * The states of device calls folded from the committed batches of the executions projection, so that a call that
 * became ready is dispatched against the state the batches held instead of a load from the log.
 *
 * Exact or absent, never wrong: a call is folded from its `requested` event (always its first) through every later
 * event, and the projection sees every event of the calls stream in order. A batch that does not follow the last one
 * folded (a restart of consumption, a parked message, another leader in between) empties the table, since a state
 * folded across the gap may miss an event. A state the log has moved past anyway costs one refused append and a load.
 * Bounded: the oldest entries go first (a call awaiting approval for long is loaded when it comes back).
 */
import type { Loaded } from '@ormuz/event-log';
import type { CommittedEvent } from '../projections/executions.projection.js';
import { toolCallDecider, type ToolCallState } from '@ormuz/tool-call';

/** Calls held at most. */
const MAX_FOLDED = 20_000;

/** Statuses a call is held in: it may still become ready to dispatch. */
const HELD: ReadonlySet<ToolCallState['status']> = new Set<ToolCallState['status']>([
  'requested',
  'staged',
  'approved',
  'authorized',
]);

/** A dispatch decided on a folded state continues the trace of the call's last message (its `traceparent`). */
export type { CommittedEvent };

export class FoldedCalls {
  private readonly states = new Map<string, Loaded<ToolCallState>>();
  /** Stream sequence of the last event folded; 0 before the first batch. */
  private upTo = 0;

  /** Folds a committed batch, in stream order. */
  fold(items: readonly CommittedEvent[]): void {
    const first = items[0];
    if (!first) return;
    if (first.seq !== this.upTo + 1) this.states.clear();
    for (const { event, seq, traceparent } of items) {
      const key = `${event.tenant}/${event.subject}`;
      const before =
        event.type === 'ormuz.toolcall.requested.v1'
          ? event.data.target
            ? toolCallDecider.initialState
            : undefined
          : this.states.get(key)?.state;
      if (before === undefined) continue;
      let state: ToolCallState;
      try {
        state = toolCallDecider.evolve(before, event);
      } catch {
        // Not a transition the decider knows from here: the table cannot vouch for this call any more.
        this.states.delete(key);
        continue;
      }
      this.states.delete(key);
      if (HELD.has(state.status))
        this.states.set(key, { state, version: seq, ...(traceparent ? { traceparent } : {}) });
    }
    this.upTo = items.at(-1)!.seq;
    for (const key of this.states.keys()) {
      if (this.states.size <= MAX_FOLDED) break;
      this.states.delete(key);
    }
  }

  /** The call's state at `version` (its row's last sequence), once: the dispatch decides against it. */
  take(tenant: string, callId: string, version: number): Loaded<ToolCallState> | undefined {
    const key = `${tenant}/${callId}`;
    const known = this.states.get(key);
    if (!known) return undefined;
    this.states.delete(key);
    return known.version === version && known.state.status === 'authorized' ? known : undefined;
  }

  /** Forgets everything (a new leadership: the next batch may not follow the last one folded here). */
  clear(): void {
    this.states.clear();
    this.upTo = 0;
  }
}
