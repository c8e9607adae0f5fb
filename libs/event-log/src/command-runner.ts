/**
 * Load → decide → append, retried on conflict. The one way a command changes an aggregate.
 */
import { envelope, type EventDraft, type OrmuzEvent } from '@ormuz/contracts';
import type { Decider } from './decider.js';
import { isConcurrencyConflictError, RetriesExhaustedError } from './errors.js';
import type { EventStore, Loaded } from './event-store.js';

/** Who is deciding, and what the new events belong to. */
export interface CommandContext {
  readonly source: string;
  readonly tenant: string;
  /** The aggregate id, used as the CloudEvents `subject`. */
  readonly aggregateId: string;
  readonly correlationid: string;
  readonly causationid: string;
}

export interface CommandResult<S> {
  /** Events this command appended (empty when the decision was a no-op, e.g. a duplicate submit). */
  readonly events: OrmuzEvent[];
  /** State after the command. */
  readonly state: S;
  /** Sequence of the aggregate's last event. */
  readonly version: number;
}

export interface RunCommandOptions<S = unknown> {
  /** Attempts before giving up on a contended aggregate. Default 5. */
  readonly maxAttempts?: number;
  /** The clock; domain code never reads one itself. */
  readonly now?: () => Date;
  /**
   * Decide the first attempt against the initial state, appending with expected sequence 0, without loading. For
   * commands that usually create the aggregate (a submit with a fresh id): it saves a round trip, and when the
   * aggregate exists after all the append is refused and the command is decided again against the loaded state.
   */
  readonly assumeNew?: boolean;
  /**
   * The state and version the caller already holds (folded from the events it read off the log), decided against on
   * the first attempt instead of a load. A stale one costs one refused append and a fresh load, like a stale cache.
   */
  readonly known?: Loaded<S>;
}

/**
 * Runs `command` against the aggregate at `subject` in `stream`. On a concurrency conflict it reloads the state
 * fresh from the log and decides again, up to `maxAttempts` times. Domain errors thrown by `decide` propagate as they
 * are (they are answers, not failures to retry), but only once decided against state read from the log: a state
 * that may be behind it (the warm cache, a `known` state, the assumed-new initial state) is trusted only for an
 * append, which the expected sequence checks. A refusal or a no-op decided on it may be an answer to the past (another
 * replica appended since: "that call was never requested" of a call it recorded), so the command is decided again
 * against a fresh load before either is returned.
 */
export async function runCommand<S, C, E extends EventDraft>(
  store: EventStore,
  stream: string,
  subject: string,
  decider: Decider<S, C, E>,
  command: C,
  ctx: CommandContext,
  opts: RunCommandOptions<S> = {},
): Promise<CommandResult<S>> {
  const maxAttempts = opts.maxAttempts ?? 5;
  const now = opts.now ?? (() => new Date());
  // The first decision may use what the caller holds or the cache; after a conflict, or a refusal or no-op decided
  // on state that may be behind the log, every load reads the log itself.
  let first = true;
  let fresh = false;
  for (let attempt = 1; attempt <= maxAttempts;) {
    const given = first && opts.known ? opts.known : undefined;
    const assumed = first && !given && opts.assumeNew === true && !store.isCached(subject);
    const behind = !fresh && (given !== undefined || assumed || store.isCached(subject));
    first = false;
    const { state, version } =
      given ??
      (assumed ? { state: decider.initialState, version: 0 } : await store.load(stream, subject, decider, { fresh }));
    const time = now();
    let drafts: E[];
    try {
      drafts = decider.decide(command, state, time);
    } catch (err) {
      if (!behind) throw err;
      fresh = true;
      continue;
    }
    if (drafts.length === 0) {
      if (!behind) return { events: [], state, version };
      fresh = true;
      continue;
    }
    const states: S[] = [];
    let next = state;
    for (const draft of drafts) {
      next = decider.evolve(next, draft);
      states.push(next);
    }
    const events = drafts.map((draft) =>
      envelope(draft, {
        source: ctx.source,
        tenant: ctx.tenant,
        subject: ctx.aggregateId,
        correlationid: ctx.correlationid,
        causationid: ctx.causationid,
        time,
      }),
    );
    try {
      const result = await store.append(subject, events, version, { states, stateVersion: decider.stateVersion });
      return { events, state: next, version: result.version };
    } catch (err) {
      if (!isConcurrencyConflictError(err)) throw err;
      fresh = true;
      attempt++;
    }
  }
  throw new RetriesExhaustedError(subject, maxAttempts);
}
