/**
 * One aggregate type as services reach it: one subject per instance, `<ns>.<context>.<tenant>.<aggregate>.<id>`, in
 * the context's stream, changed only through its pure decider. A command loads the state (the warm cache, else the
 * snapshot header on the subject's last message, else a fold of its events; see docs/decisions/0003), is decided,
 * and is appended with the loaded sequence as the expected one; when another writer got there first it is decided
 * again against fresh state, a bounded number of times ({@link runCommand}). Domain errors propagate as they are.
 *
 * `ToolCalls` (service-kit) and `Conversations` (model-loop) are this class with their context and decider.
 */
import { aggregateSubject, type AsOfV1, type ContextName, type EventDraft } from '@ormuz/contracts';
import { runCommand, type CommandResult } from './command-runner.js';
import type { Decider } from './decider.js';
import { AsOfInFutureError } from './errors.js';
import { expectEvent, type Enveloped, type EventGuard } from './event-types.js';
import type { EventStore, Loaded, StoredEvent } from './event-store.js';
import { streamName } from './topology.js';

/** Who caused a change: the conversation or operation it belongs to, and the request or event that led to it. */
export interface Causation {
  /** Conversation or operation the change belongs to. */
  readonly correlationid: string;
  /** The command, request or event that caused this change. */
  readonly causationid: string;
}

/** What the repository needs to know about one aggregate type. */
export interface AggregateType<S, C, E extends EventDraft> {
  /** The context whose stream holds the aggregate (`calls`, `conversations`). */
  readonly context: ContextName;
  /** The decider, with the guard that tells its events from others (folds check every event with it). */
  readonly decider: Decider<S, C, E> & { readonly isEvent: EventGuard<E> };
  /**
   * Commands that usually create the aggregate (a submit with a fresh id): their first attempt is decided against the
   * initial state without a load, saving a round trip; when the aggregate exists after all, the append is refused and
   * the command decided again against the loaded state.
   */
  readonly assumeNew?: (command: C) => boolean;
  /** Attempts of one command on a contended aggregate before {@link RetriesExhaustedError}. Default 5. */
  readonly maxAttempts?: number;
  /** The clock the decider is given; domain code never reads one itself. Default: the system clock. */
  readonly now?: () => Date;
}

/** A point in the log: a time (events recorded at or before it) or a stream sequence (events up to and at it). */
export type AsOf = { readonly time: Date } | { readonly seq: number };

/**
 * The point `asOf` (a query's `as_of`) names, checked against `now`. Throws {@link AsOfInFutureError} for a time
 * after now.
 */
export function asOfPoint(asOf: AsOfV1, now: Date): AsOf {
  if ('seq' in asOf) return { seq: asOf.seq };
  const time = new Date(asOf.time);
  if (time.getTime() > now.getTime()) throw new AsOfInFutureError(asOf.time, now.toISOString());
  return { time };
}

/** Whether the event at `seq` recorded at `time` (RFC 3339) is part of the log as of `asOf`. */
export function recordedBy(asOf: AsOf, seq: number, time: string): boolean {
  return 'seq' in asOf ? seq <= asOf.seq : Date.parse(time) <= asOf.time.getTime();
}

/** An aggregate read whole from the log: its state, the sequence of its last event, and every event in order. */
export interface AggregateRecord<S, E extends EventDraft> {
  readonly state: S;
  /** Sequence of the aggregate's last event (0 when it has none). */
  readonly version: number;
  readonly events: readonly Enveloped<E>[];
}

export class AggregateRepository<S, C, E extends EventDraft> {
  readonly stream: string;

  constructor(
    protected readonly store: EventStore,
    protected readonly namespace: string,
    /** The service that decides, as the events' CloudEvents `source` (`/ormuz/policy`). */
    protected readonly source: string,
    protected readonly aggregate: AggregateType<S, C, E>,
  ) {
    this.stream = streamName(namespace, aggregate.context);
  }

  /** The aggregate's subject. Throws InvalidIdentifierError for an unsafe tenant or id. */
  subject(tenant: string, id: string): string {
    return aggregateSubject(this.namespace, this.aggregate.context, tenant, id);
  }

  /**
   * Runs a command on one aggregate: load, decide, append with the expected sequence, and on a conflict reload fresh
   * and decide again, up to `maxAttempts` times (then {@link RetriesExhaustedError}). Domain errors propagate.
   * `known`: the state and version the caller folded from events it read, decided against first instead of a load
   * (a consumer that holds the aggregate's events saves the round trip; a stale one costs a refused append).
   */
  execute(
    tenant: string,
    id: string,
    command: C,
    cause: Causation,
    opts: { readonly known?: Loaded<S> } = {},
  ): Promise<CommandResult<S>> {
    const { decider, assumeNew, maxAttempts, now } = this.aggregate;
    return runCommand(
      this.store,
      this.stream,
      this.subject(tenant, id),
      decider,
      command,
      { source: this.source, tenant, aggregateId: id, ...cause },
      { assumeNew: assumeNew?.(command) ?? false, maxAttempts, now, ...(opts.known ? { known: opts.known } : {}) },
    );
  }

  /**
   * Reads the state from the log (fresh: one direct get of the snapshot on the last message, never the cache). For
   * status queries and for deciding what to do next; never sends anything anywhere.
   */
  load(tenant: string, id: string): Promise<Loaded<S>> {
    return this.store.load(this.stream, this.subject(tenant, id), this.aggregate.decider, { fresh: true });
  }

  /**
   * Every event stored on the aggregate's subject, in order, as it is on the log (direct gets, no consumer); the
   * events of one decision share their message's sequence and are told apart by their index in it.
   */
  timeline(tenant: string, id: string): Promise<StoredEvent[]> {
    return this.store.history(this.stream, this.subject(tenant, id));
  }

  /**
   * Reads every event (direct gets, no consumer) and folds the state from them, for callers that need the events
   * the state is built from (a transcript). With `asOf`, only the events recorded by then are folded: the state as it
   * stood at that time or stream sequence (time travel), with the same `evolve` the live aggregate uses. Throws
   * {@link ForeignEventError} for an event that is not the aggregate's.
   */
  async read(tenant: string, id: string, asOf?: AsOf): Promise<AggregateRecord<S, E>> {
    const subject = this.subject(tenant, id);
    const { decider } = this.aggregate;
    let state = decider.initialState;
    let version = 0;
    const events: Enveloped<E>[] = [];
    for await (const { seq, event } of this.store.readSubject(this.stream, subject)) {
      const own = expectEvent(decider.isEvent, event, {
        subject,
        seq,
        reader: `the ${this.aggregate.context} aggregate`,
      });
      // The log is in order: the first event past the bound ends the fold.
      if (asOf && !recordedBy(asOf, seq, own.time)) break;
      state = decider.evolve(state, own);
      events.push(own);
      version = seq;
    }
    return { state, version, events };
  }

  /**
   * When the aggregate's last event of one of `types` was recorded (its envelope time, RFC 3339), or `null` when it
   * has none. Used to say when someone else already did what a refused command asked.
   */
  async recordedAt(tenant: string, id: string, types: readonly string[]): Promise<string | null> {
    const events = await this.timeline(tenant, id);
    return events.findLast(({ event }) => types.includes(event.type))?.event.time ?? null;
  }
}
