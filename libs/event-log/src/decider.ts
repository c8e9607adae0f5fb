/**
 * The shape every aggregate's pure domain logic takes. No I/O, no clock: time is passed in.
 */
import type { EventDraft } from '@ormuz/contracts';
import type { EventGuard } from './event-types.js';

export interface Decider<State, Command, Event extends EventDraft> {
  readonly initialState: State;
  evolve(state: State, event: Event): State;
  /** Returns the events the command produces; throws a typed domain error when it is refused. */
  decide(command: Command, state: State, now: Date): Event[];
  /**
   * Version of the state's shape. Snapshots written under another version are ignored and the state is rebuilt by
   * folding the aggregate's events, so changing the state shape only needs this number bumped.
   */
  readonly stateVersion: number;
  /**
   * Tells the aggregate's events from any other (the guard from @ormuz/contracts). When present, every event folded
   * from the log is checked with it, so a foreign event on the aggregate's subject is a {@link ForeignEventError}
   * rather than something `evolve` was never written for. {@link AggregateRepository} requires it.
   */
  readonly isEvent?: EventGuard<Event>;
}
