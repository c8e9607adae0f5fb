/**
 * Given/When/Then for deciders, the one way every decider's spec states its cases:
 *
 *     const { given, after } = deciderSpec(toolCallDecider, { now: NOW });
 *     given(ev.requested()).when(cmd.stage()).then([ev.staged()]);
 *     given(ev.requested(), ev.sealed()).when(cmd.authorize()).thenThrows(SealedCallError, /sealed by/);
 *     after(cmd.start()).when(cmd.start()).then([]);
 *
 * `then` also checks what a test would otherwise forget: every decided event is valid against its JSON Schema (the
 * append would refuse it) and applies to the state it was decided on (a later load would fail on it).
 */
import { assertValid, type EventDraft } from '@ormuz/contracts';

/** The pure part of a decider the spec runs (the event log's `Decider` fits). */
export interface SpecDecider<S, C, E extends EventDraft> {
  readonly initialState: S;
  evolve(state: S, event: E): S;
  decide(command: C, state: S, now: Date): E[];
}

/** An error class, to assert a refusal by (`SealedCallError`). */
export type ErrorClass = abstract new (...args: never[]) => Error;

/** A command decided against the given state. */
export interface When<S, E extends EventDraft> {
  /** Then: exactly these events, each valid against its schema and applicable in turn. */
  then(expected: readonly E[]): void;
  /**
   * Then: refused with an instance of `error`, whose message matches `message` when given. Returns the error, for
   * assertions on its fields.
   */
  thenThrows<T extends ErrorClass>(error: T, message?: RegExp | string): InstanceType<T>;
  /** The decided events, for assertions `then` does not make (a partial match). Throws what `decide` throws. */
  readonly events: E[];
  /** The state after the decided events are applied. */
  readonly state: S;
}

/** A state to decide against. */
export interface Given<S, C, E extends EventDraft> {
  readonly state: S;
  /** When: `command` is decided against the state at `now` (the spec's `now` unless given). */
  when(command: C, now?: Date): When<S, E>;
}

export interface DeciderSpec<S, C, E extends EventDraft> {
  /** Given: the state these events fold to (evolve throws here for a history the decider refuses). */
  given(...history: E[]): Given<S, C, E>;
  /** Given: the state after each command was decided at the spec's `now` and its events applied, in turn. */
  after(...commands: C[]): Given<S, C, E>;
  /** Given: this state. */
  givenState(state: S): Given<S, C, E>;
}

export function deciderSpec<S, C, E extends EventDraft>(
  decider: SpecDecider<S, C, E>,
  opts: { readonly now: Date },
): DeciderSpec<S, C, E> {
  const fold = (state: S, events: readonly E[]) => events.reduce((s, e) => decider.evolve(s, e), state);

  const givenState = (state: S): Given<S, C, E> => ({
    state,
    when(command, now = opts.now) {
      const decided = () => decider.decide(command, state, now);
      return {
        then(expected) {
          const events = decided();
          expect(events).toEqual(expected);
          for (const e of events) assertValid(e.type, e.data);
          fold(state, events);
        },
        thenThrows(error, message) {
          let events: E[];
          try {
            events = decided();
          } catch (err) {
            expect(err).toBeInstanceOf(error);
            if (message !== undefined) expect((err as Error).message).toMatch(message);
            return err as InstanceType<typeof error>;
          }
          throw new Error(`Expected ${error.name}, but the command was decided as ${JSON.stringify(events)}.`);
        },
        get events() {
          return decided();
        },
        get state() {
          return fold(state, decided());
        },
      };
    },
  });

  return {
    given: (...history) => givenState(fold(decider.initialState, history)),
    after: (...commands) =>
      givenState(commands.reduce((s, c) => fold(s, decider.decide(c, s, opts.now)), decider.initialState)),
    givenState,
  };
}
