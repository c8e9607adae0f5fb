/**
 * Appends events to aggregate subjects with optimistic concurrency and loads aggregate state without creating a
 * consumer per command.
 *
 * Append: the events of one decision are ONE JetStream message (docs/decisions/0015), published with `msgID` = the
 * first event's id (so a retried publish is deduplicated by the server) and `expect.lastSubjectSequence` (so a writer
 * that decided on stale state loses). A single event is stored as its CloudEvent JSON object; several are stored in
 * the CloudEvents JSON batch format (a JSON array of the events, `Content-Type: application/cloudevents-batch+json`),
 * so a decision is on the log whole or not at all, and every event of it shares the message's stream sequence.
 *
 * Load: each appended message carries, in a header, a snapshot of the aggregate state after its last event. A cold
 * load is therefore one direct get of the subject's last message (`last_by_subj`). Snapshots of another state version
 * are ignored and the state is rebuilt by walking the subject with `next_by_subj`. A bounded in-process cache makes a
 * warm load free. A stale cache entry (another process appended since) cannot do harm: an append decided on it fails
 * its expected sequence and the caller reloads, and `runCommand` trusts a refusal or a no-op only once decided against
 * a fresh load.
 */
import { headers as natsHeaders } from '@nats-io/transport-node';
import type { JetStreamClient, JetStreamManager, MsgRequest, StoredMsg } from '@nats-io/jetstream';
import { assertValidEvent, type EventDraft, type OrmuzEvent } from '@ormuz/contracts';
import { injectTraceHeaders, traceparentOf } from '@ormuz/tracing';
import type { Decider } from './decider.js';
import { AppendTimeoutError, ConcurrencyConflictError, CorruptEventError, StreamMissingError } from './errors.js';
import { expectEvent } from './event-types.js';
import { MSG_ID_HEADER } from './sequence-check.js';
import { streamOfSubject } from './topology.js';

/** Header carrying the JSON state of the aggregate after the event. Derived data: never read by projections. */
export const SNAPSHOT_HEADER = 'Ormuz-Snapshot';
/** Header carrying the snapshot's state version. */
export const SNAPSHOT_VERSION_HEADER = 'Ormuz-Snapshot-Version';
/** Header naming the body's format; present only on a message of several events. */
export const CONTENT_TYPE_HEADER = 'Content-Type';
/** The CloudEvents JSON batch format: the body is a JSON array of events, in order. */
export const CLOUDEVENTS_BATCH = 'application/cloudevents-batch+json';

/** State of an aggregate as loaded, with the sequence of its last event (0 when it has none). */
export interface Loaded<S> {
  readonly state: S;
  readonly version: number;
  /**
   * The W3C `traceparent` its last message was appended under, when it was appended inside a trace: the trace a later
   * step on the aggregate (an owner's decision, a dispatch) continues.
   */
  readonly traceparent?: string;
}

export interface AppendResult {
  /** Stream sequence of each appended event, in order: the one message's sequence, once per event. */
  readonly sequences: number[];
  /** Sequence of the last message now on the subject. */
  readonly version: number;
  /** True when the server reported the message as a duplicate of one already stored (a replayed append). */
  readonly duplicate: boolean;
}

/** One event as stored: the sequence of its message, and its place in that message (0 for a message of one event). */
export interface StoredEvent<E extends OrmuzEvent = OrmuzEvent> {
  readonly seq: number;
  readonly index: number;
  readonly event: E;
}

const WRONG_LAST_SEQUENCE = 10071;
const STREAM_NOT_FOUND = 10059;
/** How often an append asks again for a stream electing its leader, in milliseconds. */
const LEADER_POLL_MS = 250;

function errCode(err: unknown): number | undefined {
  const e = err as { code?: unknown; api_error?: { err_code?: number } };
  if (typeof e?.code === 'number') return e.code;
  return e?.api_error?.err_code;
}

/**
 * Reads the Ormuz events of a stored message, in order, validating each: one for a CloudEvent JSON object, every
 * element for a CloudEvents JSON batch (an array). The body alone decides, so a parked message, stored without its
 * headers, reads the same. Throws {@link CorruptEventError}.
 */
export function decodeEvents<E extends OrmuzEvent>(subject: string, seq: number, data: Uint8Array): E[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(data));
  } catch (err) {
    throw new CorruptEventError(subject, seq, `not JSON (${(err as Error).message})`);
  }
  const items = Array.isArray(parsed) ? parsed : [parsed];
  if (items.length === 0) throw new CorruptEventError(subject, seq, 'an empty batch of events');
  return items.map((item, index) => {
    try {
      return assertValidEvent<E>(item);
    } catch (err) {
      const where = Array.isArray(parsed) ? `event ${index} of the batch: ` : '';
      throw new CorruptEventError(subject, seq, `${where}${(err as Error).message}`);
    }
  });
}

/**
 * Reads the one Ormuz event of a stored message (a recorded fact). Throws {@link CorruptEventError}, also when the
 * message holds a batch: read those with {@link decodeEvents}.
 */
export function decodeEvent<E extends OrmuzEvent>(subject: string, seq: number, data: Uint8Array): E {
  const events = decodeEvents<E>(subject, seq, data);
  if (events.length !== 1) {
    throw new CorruptEventError(subject, seq, `a batch of ${events.length} events where one was expected`);
  }
  return events[0]!;
}

function loaded<S>(state: S, version: number, traceparent: string | undefined): Loaded<S> {
  return traceparent === undefined ? { state, version } : { state, version, traceparent };
}

/**
 * A folded event as the decider's own. A decider with a guard has each one checked ({@link ForeignEventError}); one
 * without (a bench's counter) is taken at its word, since its subjects are appended to only through it.
 */
function eventOf<S, C, E extends EventDraft>(
  decider: Decider<S, C, E>,
  subject: string,
  seq: number,
  event: OrmuzEvent,
): E {
  const draft: EventDraft = event;
  if (!decider.isEvent) return draft as E;
  return expectEvent(decider.isEvent, event, { subject, seq, reader: "the aggregate's decider" });
}

/** No stream holds the subject (the server answers a publish to it with no responders). */
function isStreamMissing(err: unknown): boolean {
  return (
    errCode(err) === STREAM_NOT_FOUND ||
    (err as Error).name === 'JetStreamNotEnabled' ||
    /no stream|no responders/i.test(String(err))
  );
}

interface CacheEntry {
  state: unknown;
  version: number;
  traceparent: string | undefined;
}

export interface EventStoreOptions {
  /** Aggregates kept in the warm cache. Default 10,000. */
  readonly cacheSize?: number;
  /** Publish-ack timeout in milliseconds. Default 5000. */
  readonly timeoutMs?: number;
  /**
   * How long an append waits for a stream that exists but answers nobody (a cluster electing the stream's leader), in
   * milliseconds. Default 30 000: NATS elects within a few seconds, up to about ten on a busy cluster.
   */
  readonly leaderWaitMs?: number;
}

export class EventStore {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly cacheSize: number;
  private readonly timeoutMs: number;
  private readonly leaderWaitMs: number;
  private readonly encoder = new TextEncoder();

  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    opts: EventStoreOptions = {},
  ) {
    this.cacheSize = opts.cacheSize ?? 10_000;
    this.timeoutMs = opts.timeoutMs ?? 5000;
    this.leaderWaitMs = opts.leaderWaitMs ?? 30_000;
  }

  /**
   * Appends `events` (one decision) to `subject` as one message, expecting the subject's last sequence to be
   * `expectedVersion` (0: no events yet). `snapshot.states[i]` is the aggregate state after `events[i]`; the last one
   * is stored in a header for one-round-trip loads. Throws {@link ConcurrencyConflictError} when another writer got
   * there first, {@link StreamMissingError} when no stream holds the subject, and SchemaViolationError when an event
   * is invalid (nothing is published).
   */
  async append(
    subject: string,
    events: readonly OrmuzEvent[],
    expectedVersion: number,
    snapshot?: { readonly states: readonly unknown[]; readonly stateVersion: number },
  ): Promise<AppendResult> {
    for (const event of events) assertValidEvent(event);
    if (events.length === 0) return { sequences: [], version: expectedVersion, duplicate: false };
    const h = natsHeaders();
    if (snapshot) {
      h.set(SNAPSHOT_HEADER, JSON.stringify(snapshot.states[events.length - 1]));
      h.set(SNAPSHOT_VERSION_HEADER, String(snapshot.stateVersion));
    }
    if (events.length > 1) h.set(CONTENT_TYPE_HEADER, CLOUDEVENTS_BATCH);
    // The trace the decision was made in travels with its message: whoever consumes it continues that trace.
    injectTraceHeaders(h);
    const body = JSON.stringify(events.length === 1 ? events[0] : events);
    // The first event's id names the decision: a retried publish carries the same events, so the same id.
    const msgID = events[0]!.id;
    const sent = { again: false };
    let ack;
    try {
      ack = await this.publishWithRetry(
        subject,
        this.encoder.encode(body),
        { msgID, expect: { lastSubjectSequence: expectedVersion }, headers: h, timeout: this.timeoutMs },
        sent,
      );
    } catch (err) {
      this.cache.delete(subject);
      const code = errCode(err);
      if (code === WRONG_LAST_SEQUENCE || /wrong last sequence/i.test(String(err))) {
        // Sent again after a lost acknowledgement, the decision may be the very message that moved the subject on:
        // a new stream leader checks the expected sequence before the message id. It is then stored, once.
        const stored = sent.again ? await this.storedAfter(subject, expectedVersion, msgID) : undefined;
        if (stored === undefined) throw new ConcurrencyConflictError(subject, expectedVersion);
        ack = { seq: stored, duplicate: true };
      } else {
        if (isStreamMissing(err)) throw new StreamMissingError(subject);
        throw err;
      }
    }
    if (snapshot) this.remember(subject, snapshot.states[events.length - 1], ack.seq, traceparentOf(h));
    return { sequences: events.map(() => ack.seq), version: ack.seq, duplicate: ack.duplicate };
  }

  /**
   * The sequence of the message `msgID` when it is the first on `subject` after `version` (an append expecting
   * `version` that was stored), else undefined.
   */
  private async storedAfter(subject: string, version: number, msgID: string): Promise<number | undefined> {
    // From the stream's leader: a direct get may be answered by a replica that does not hold the message yet, which
    // would turn a stored append into a conflict. The server takes `next_by_subj` here too; the client's type lacks it.
    const query = { seq: version + 1, next_by_subj: subject } as unknown as MsgRequest;
    let next: StoredMsg | null;
    try {
      next = await this.jsm.streams.getMessage(streamOfSubject(subject), query);
    } catch {
      // Whether the append was stored is still unknown: that is what its caller is told.
      throw new AppendTimeoutError(subject);
    }
    return next?.header?.get(MSG_ID_HEADER) === msgID ? next.seq : undefined;
  }

  /**
   * Appends one fact that no decision is made from (who was given a credential, a refused report): no expected
   * sequence, only the `msgID` dedup, so a retried record is stored once. Anything a decider reads goes through
   * {@link append}. Throws like {@link append}.
   */
  async record(subject: string, event: OrmuzEvent): Promise<{ seq: number; duplicate: boolean }> {
    assertValidEvent(event);
    try {
      const ack = await this.publishWithRetry(subject, this.encoder.encode(JSON.stringify(event)), {
        msgID: event.id,
        timeout: this.timeoutMs,
      });
      return { seq: ack.seq, duplicate: ack.duplicate };
    } catch (err) {
      if (isStreamMissing(err)) throw new StreamMissingError(subject);
      throw err;
    }
  }

  /**
   * Loads an aggregate's state. Uses the warm cache unless `fresh`, then the snapshot on the subject's last message,
   * and falls back to folding every event of the subject.
   */
  async load<S, C, E extends EventDraft>(
    stream: string,
    subject: string,
    decider: Decider<S, C, E>,
    opts: { fresh?: boolean } = {},
  ): Promise<Loaded<S>> {
    if (!opts.fresh) {
      const hit = this.cache.get(subject);
      if (hit) {
        this.cache.delete(subject);
        this.cache.set(subject, hit);
        return loaded(hit.state as S, hit.version, hit.traceparent);
      }
    }
    const last = await this.directGet(stream, { last_by_subj: subject });
    if (!last) return { state: decider.initialState, version: 0 };
    const traceparent = traceparentOf(last.header);
    const snap = last.header?.get(SNAPSHOT_HEADER);
    if (snap && last.header?.get(SNAPSHOT_VERSION_HEADER) === String(decider.stateVersion)) {
      const state = JSON.parse(snap) as S;
      this.remember(subject, state, last.seq, traceparent);
      return loaded(state, last.seq, traceparent);
    }
    let state = decider.initialState;
    let version = 0;
    for await (const { seq, event } of this.readSubject(stream, subject)) {
      state = decider.evolve(state, eventOf(decider, subject, seq, event));
      version = seq;
    }
    this.remember(subject, state, version, traceparent);
    return loaded(state, version, traceparent);
  }

  /** Every event of one subject, in order, as an array (a call's or a device's history). */
  async history(stream: string, subject: string): Promise<StoredEvent[]> {
    const out = [];
    for await (const item of this.readSubject(stream, subject)) out.push(item);
    return out;
  }

  /**
   * Every event stored on one subject, in order, read with direct gets (no consumer): each event of a message with
   * the message's sequence and its index in it.
   */
  async *readSubject(stream: string, subject: string): AsyncGenerator<StoredEvent> {
    let seq = 1;
    for (;;) {
      const msg = await this.directGet(stream, { seq, next_by_subj: subject });
      if (!msg) return;
      const events = decodeEvents(subject, msg.seq, msg.data);
      for (const [index, event] of events.entries()) yield { seq: msg.seq, index, event };
      seq = msg.seq + 1;
    }
  }

  /**
   * A publish whose acknowledgement did not arrive (a server restart, a lost connection) is sent again with the same
   * message id: if the first one was stored, the server answers with the original acknowledgement (duplicate).
   *
   * On a cluster, a stream answers no publish while it elects a new leader (its leader's server was lost): the server
   * says no one responded, as for a subject no stream holds. A stream that exists is then waited for (up to
   * `leaderWaitMs`) and the publish sent again; one that does not is reported at once. `sent.again` tells the caller
   * that the message went more than once.
   */
  private async publishWithRetry(
    subject: string,
    data: Uint8Array,
    opts: {
      msgID: string;
      expect?: { lastSubjectSequence: number };
      headers?: ReturnType<typeof natsHeaders>;
      timeout: number;
    },
    sent: { again: boolean } = { again: false },
    attempts = 3,
  ) {
    const leaderDeadline = Date.now() + this.leaderWaitMs;
    for (let attempt = 1; ; sent.again = true) {
      try {
        return await this.js.publish(subject, data, opts);
      } catch (err) {
        if (isStreamMissing(err)) {
          if (Date.now() < leaderDeadline && (await this.streamExists(streamOfSubject(subject)))) {
            await new Promise((resolve) => setTimeout(resolve, LEADER_POLL_MS));
            continue;
          }
          throw err;
        }
        const timedOut = /timeout|timed out|disconnect|closed|reconnect/i.test(
          `${(err as Error).name} ${(err as Error).message}`,
        );
        if (!timedOut) throw err;
        if (++attempt > attempts) throw new AppendTimeoutError(subject);
      }
    }
  }

  /**
   * False only when the server says the stream does not exist. A stream without a leader may not answer at all, and
   * neither may JetStream while its own meta leader is elected: both count as existing, to be waited for.
   */
  private async streamExists(stream: string): Promise<boolean> {
    try {
      await this.jsm.streams.info(stream);
      return true;
    } catch (err) {
      return errCode(err) !== STREAM_NOT_FOUND && !/stream not found/i.test(String(err));
    }
  }

  /** True when the aggregate's state is in the warm cache. */
  isCached(subject: string): boolean {
    return this.cache.has(subject);
  }

  /** Forgets a cached aggregate (after a failed append, or in tests). */
  forget(subject: string): void {
    this.cache.delete(subject);
  }

  /**
   * Caches a state at `version`. A load that read the log before an append finished may come back after it: an older
   * state never replaces a newer one.
   */
  private remember(subject: string, state: unknown, version: number, traceparent: string | undefined): void {
    const cached = this.cache.get(subject);
    if (cached && cached.version > version) return;
    this.cache.delete(subject);
    this.cache.set(subject, { state, version, traceparent });
    if (this.cache.size > this.cacheSize) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
  }

  private async directGet(
    stream: string,
    query: { last_by_subj: string } | { seq: number; next_by_subj: string },
  ): Promise<StoredMsg | null> {
    try {
      return await this.jsm.direct.getMessage(stream, query);
    } catch (err) {
      if (errCode(err) === 10037 || /no message found|not found/i.test(String(err))) return null;
      if (errCode(err) === STREAM_NOT_FOUND || /no responders/i.test(String(err))) throw new StreamMissingError(stream);
      throw err;
    }
  }
}
