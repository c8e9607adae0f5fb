/**
 * The chaos suite's checker: a pure reading of what a run left behind (the calls stream, the devices' journals and
 * run counts, the read models' rebuild diffs, every stream's messages), Jepsen-style. It names every anomaly of six
 * kinds:
 *
 * - `lost`: a submit policy acknowledged (it answered a call id) whose call is not on the log;
 * - `ranTwice`: a call started twice on the log, run more than once by its device, or started under two request ids
 *   in the device's journal;
 * - `unexpected`: an outcome on the log that the device's journal does not hold (a success or failure it never
 *   reported, a `not_run` failure for a request the journal says started), or a device run the log has no start for;
 * - `stuck`: a call still in a non-final state after its deadline and the grace the run gives recovery;
 * - `diverged`: a read model whose rows differ from a rebuild of it from the log (or that could not be rebuilt);
 * - `sequence`: a trace on a stream of a broken append guarantee ({@link findSequenceAnomalies}): two messages accepted
 *   on one expected sequence of their subject (the race of nats-server < 2.9.21 at replicas 3), or one message id
 *   stored twice. The other kinds may not show it: both decisions can look valid on their own.
 */
import { ToolCallEventType } from '@ormuz/contracts';
import type { JournalState } from '@ormuz/device-sdk';
import { describeAnomaly, findSequenceAnomalies, type LoggedMessage, type SequenceAnomaly } from '@ormuz/event-log';

/** One event of the calls stream, as the checker reads it. */
export interface LoggedCallEvent {
  readonly type: string;
  readonly callId: string;
  /** RFC 3339, the event's time. */
  readonly time: string;
  readonly data: Readonly<Record<string, unknown>>;
}

/** One request in one device's journal. */
export interface JournalRecordSeen {
  readonly deviceId: string;
  readonly requestId: string;
  readonly callId?: string;
  readonly state: JournalState;
  /** Set once the device started the run. */
  readonly started: boolean;
  readonly outcome?: 'succeeded' | 'failed';
}

/** A read model rebuilt from the log and compared with the live one. */
export interface RebuildSeen {
  readonly projection: string;
  readonly differing: number;
  /** Why it could not be rebuilt or compared. */
  readonly error?: string;
}

/** Everything a run left behind. */
export interface ChaosHistory {
  /** Submits sent, acknowledged or not. */
  readonly submitted: number;
  /** Call ids policy answered a submit with, and when (ms since the epoch). */
  readonly acknowledged: ReadonlyMap<string, number>;
  readonly events: readonly LoggedCallEvent[];
  readonly journals: readonly JournalRecordSeen[];
  /** Runs each device's executor counted, by call id. */
  readonly deviceRuns: ReadonlyMap<string, number>;
  readonly rebuilds: readonly RebuildSeen[];
  /** Every stream of the run's namespace, by name: its messages in stream order, as the sequence check reads them. */
  readonly streams: ReadonlyMap<string, readonly LoggedMessage[]>;
  /** When the history was read (ms since the epoch). */
  readonly checkedAt: number;
  /** How long after a call's deadline it may still be moving (recovery after the nemesis stops). */
  readonly graceMs: number;
  /**
   * How long after its authorization (or request) a call may wait for its device; a later deadline on the log (a
   * staged call's expiry, a dispatch's deadline) wins.
   */
  readonly pendingDeadlineMs: number;
}

export const ANOMALY_KINDS = ['lost', 'ranTwice', 'unexpected', 'stuck', 'diverged', 'sequence'] as const;
export type AnomalyKind = (typeof ANOMALY_KINDS)[number];

/** What became of the calls on the log. */
export interface ChaosTotals {
  readonly submitted: number;
  readonly acknowledged: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly unknown: number;
  readonly sealed: number;
  /** Refused, denied or expired. */
  readonly refused: number;
}

export interface ChaosVerdict {
  readonly totals: ChaosTotals;
  /** Every anomaly found, by kind: one sentence each. */
  readonly anomalies: Readonly<Record<AnomalyKind, readonly string[]>>;
}

const FINAL: Readonly<Record<string, keyof Omit<ChaosTotals, 'submitted' | 'acknowledged'>>> = {
  [ToolCallEventType.Succeeded]: 'succeeded',
  [ToolCallEventType.Failed]: 'failed',
  [ToolCallEventType.OutcomeUnknown]: 'unknown',
  [ToolCallEventType.Sealed]: 'sealed',
  [ToolCallEventType.Refused]: 'refused',
  [ToolCallEventType.Denied]: 'refused',
  [ToolCallEventType.Expired]: 'refused',
};
/** The failure code the bridge records when a device's journal proves a claimed call never ran. */
const NOT_RUN = 'not_run';

interface CallFacts {
  requestedAt?: number;
  /** When it was last authorized (at its request, or once its owner approved it). */
  authorizedAt?: number;
  deadline?: number;
  starts: number;
  /** The last event's type. */
  last?: string;
  /** The status the log settles on (an `outcome_unknown` may still be followed by a late real outcome). */
  final?: keyof Omit<ChaosTotals, 'submitted' | 'acknowledged'>;
}

/** Reads a history and names every anomaly in it. */
export function checkHistory(history: ChaosHistory): ChaosVerdict {
  const anomalies: Record<AnomalyKind, string[]> = {
    lost: [],
    ranTwice: [],
    unexpected: [],
    stuck: [],
    diverged: [],
    sequence: [],
  };
  const calls = new Map<string, CallFacts>();
  const byRequest = new Map<string, JournalRecordSeen>();
  const startedRequests = new Map<string, Set<string>>();
  for (const j of history.journals) {
    byRequest.set(j.requestId, j);
    if (j.started && j.callId)
      startedRequests.set(j.callId, (startedRequests.get(j.callId) ?? new Set()).add(j.requestId));
  }

  for (const e of history.events) {
    const facts = calls.get(e.callId) ?? { starts: 0 };
    calls.set(e.callId, facts);
    const at = Date.parse(e.time);
    facts.last = e.type;
    if (e.type === ToolCallEventType.Requested) facts.requestedAt = at;
    if (e.type === ToolCallEventType.Authorized) facts.authorizedAt = at;
    if (e.type === ToolCallEventType.Staged) facts.deadline = later(facts.deadline, e.data.expires_at);
    if (e.type === ToolCallEventType.Dispatched) facts.deadline = later(facts.deadline, e.data.deadline);
    if (e.type === ToolCallEventType.Started) facts.starts++;
    if (FINAL[e.type]) facts.final = FINAL[e.type];
    if (e.type === ToolCallEventType.Succeeded || e.type === ToolCallEventType.Failed) {
      const requestId = String(e.data.request_id);
      const j = byRequest.get(requestId);
      const code = (e.data.error as { code?: string } | undefined)?.code;
      const said = e.type === ToolCallEventType.Succeeded ? 'succeeded' : 'failed';
      if (!j)
        anomalies.unexpected.push(`call ${e.callId} ${said} (request ${requestId}), which no device journal holds`);
      else if (said === 'failed' && code === NOT_RUN) {
        if (j.started) anomalies.unexpected.push(`call ${e.callId} failed as not run, but ${j.deviceId} started it`);
      } else if (j.outcome !== said) {
        anomalies.unexpected.push(
          `call ${e.callId} ${said} on the log, but ${j.deviceId}'s journal says ${j.outcome ?? j.state}`,
        );
      }
    }
  }

  for (const [callId] of history.acknowledged)
    if (!calls.get(callId)?.requestedAt) anomalies.lost.push(`call ${callId} was acknowledged but is not on the log`);

  const twice = (callId: string, why: string) => anomalies.ranTwice.push(`call ${callId} ${why}`);
  for (const [callId, facts] of calls) if (facts.starts > 1) twice(callId, `started ${facts.starts} times on the log`);
  for (const [callId, runs] of history.deviceRuns) {
    if (runs > 1) twice(callId, `was run ${runs} times by its device`);
    if (!calls.get(callId)?.starts)
      anomalies.unexpected.push(`call ${callId} was run by its device but never started on the log`);
  }
  for (const [callId, requests] of startedRequests)
    if (requests.size > 1) twice(callId, `started under ${requests.size} request ids in its device's journal`);

  for (const [callId, facts] of calls) {
    if (facts.final) continue;
    const waited = (facts.authorizedAt ?? facts.requestedAt ?? history.checkedAt) + history.pendingDeadlineMs;
    const deadline = Math.max(waited, facts.deadline ?? waited);
    if (deadline + history.graceMs < history.checkedAt) {
      anomalies.stuck.push(
        `call ${callId} is still ${shortType(facts.last)} ${Math.round((history.checkedAt - deadline) / 1000)} s past its deadline`,
      );
    }
  }

  for (const r of history.rebuilds) {
    if (r.error) anomalies.diverged.push(`${r.projection} could not be rebuilt: ${r.error}`);
    else if (r.differing > 0) anomalies.diverged.push(`${r.projection}: ${r.differing} rows differ from a rebuild`);
  }

  for (const [stream, messages] of history.streams)
    for (const a of findSequenceAnomalies(messages))
      anomalies.sequence.push(`${stream}: ${describeAnomaly(a)}${rivals(messages, a)}`);

  const totals = { succeeded: 0, failed: 0, unknown: 0, sealed: 0, refused: 0 };
  for (const facts of calls.values()) if (facts.final) totals[facts.final]++;
  return {
    totals: { submitted: history.submitted, acknowledged: history.acknowledged.size, ...totals },
    anomalies,
  };
}

/** How many calls on the log have not reached a final state yet (whatever their deadlines). */
export function unsettledCalls(events: readonly LoggedCallEvent[]): number {
  const none = {
    submitted: 0,
    acknowledged: new Map(),
    journals: [],
    deviceRuns: new Map(),
    rebuilds: [],
    streams: new Map(),
  };
  return checkHistory({ ...none, events, checkedAt: Number.POSITIVE_INFINITY, graceMs: 0, pendingDeadlineMs: 0 })
    .anomalies.stuck.length;
}

/** The total number of anomalies in a verdict. */
export const anomalyCount = (verdict: ChaosVerdict): number =>
  ANOMALY_KINDS.reduce((n, kind) => n + verdict.anomalies[kind].length, 0);

/** For a stale expectation: the other messages of its subject appended on the same expected sequence, if any. */
function rivals(messages: readonly LoggedMessage[], a: SequenceAnomaly): string {
  if (a.kind !== 'stale_expectation') return '';
  const others = messages.filter(
    (m) => m.subject === a.subject && m.seq !== a.seq && m.expectedLastSubjectSequence === a.expected,
  );
  return others.length === 0
    ? '; no other message of the subject expected it'
    : `; also appended on ${a.expected}: ${others.map((m) => `#${m.seq}`).join(', ')}`;
}

function later(current: number | undefined, time: unknown): number | undefined {
  const at = typeof time === 'string' ? Date.parse(time) : Number.NaN;
  if (Number.isNaN(at)) return current;
  return current === undefined ? at : Math.max(current, at);
}

const shortType = (type: string | undefined) => type?.replace(/^ormuz\.toolcall\.|\.v1$/g, '') ?? 'unknown';
