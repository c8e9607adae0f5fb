/**
 * The shape every aggregate's pure domain logic takes. No I/O, no clock: time is passed in.
 */
import type { EventDraft } from '@ormuz/contracts';

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
}
