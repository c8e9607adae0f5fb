import { ToolCallEventType as T } from '@ormuz/contracts';
import {
  anomalyCount,
  checkHistory,
  type ChaosHistory,
  type JournalRecordSeen,
  type LoggedCallEvent,
} from './checker.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
const ev = (callId: string, type: string, s: number, data: Record<string, unknown> = {}): LoggedCallEvent => ({
  type,
  callId,
  time: at(s),
  data,
});
/** A call that ran once on device d1 and succeeded, as the log and the journal both say. */
const ranOnce = (callId: string): { events: LoggedCallEvent[]; journal: JournalRecordSeen } => ({
  events: [
    ev(callId, T.Requested, 0),
    ev(callId, T.Authorized, 0),
    ev(callId, T.Dispatched, 1, { request_id: `r-${callId}`, deadline: at(11) }),
    ev(callId, T.Started, 1, { request_id: `r-${callId}` }),
    ev(callId, T.Succeeded, 2, { request_id: `r-${callId}` }),
  ],
  journal: {
    deviceId: 'd1',
    requestId: `r-${callId}`,
    callId,
    state: 'succeeded',
    started: true,
    outcome: 'succeeded',
  },
});

function history(over: Partial<ChaosHistory> = {}): ChaosHistory {
  const a = ranOnce('c1');
  return {
    submitted: 1,
    acknowledged: new Map([['c1', T0]]),
    events: a.events,
    journals: [a.journal],
    deviceRuns: new Map([['c1', 1]]),
    rebuilds: [{ projection: 'calls', differing: 0 }],
    streams: new Map([['CHAOS_CALLS', [{ seq: 1, subject: 'chaos.calls.a.c1', expectedLastSubjectSequence: 0 }]]]),
    checkedAt: T0 + 60_000,
    graceMs: 10_000,
    pendingDeadlineMs: 20_000,
    ...over,
  };
}

describe('the chaos checker', () => {
  it('finds nothing in a clean history, and counts its outcomes', () => {
    const verdict = checkHistory(history());
    expect(anomalyCount(verdict)).toBe(0);
    expect(verdict.totals).toEqual({
      submitted: 1,
      acknowledged: 1,
      succeeded: 1,
      failed: 0,
      unknown: 0,
      sealed: 0,
      refused: 0,
    });
  });

  it('sees an acknowledged submit that is not on the log', () => {
    const verdict = checkHistory(
      history({
        submitted: 2,
        acknowledged: new Map([
          ['c1', T0],
          ['c2', T0],
        ]),
      }),
    );
    expect(verdict.anomalies.lost).toEqual(['call c2 was acknowledged but is not on the log']);
    expect(anomalyCount(verdict)).toBe(1);
  });

  it('sees a call run twice: by its device, on the log, and under two request ids in its journal', () => {
    const a = ranOnce('c1');
    const second: JournalRecordSeen = { ...a.journal, requestId: 'r-again' };
    const verdict = checkHistory(
      history({
        events: [...a.events, ev('c1', T.Started, 3, { request_id: 'r-again' })],
        journals: [a.journal, second],
        deviceRuns: new Map([['c1', 2]]),
      }),
    );
    expect(verdict.anomalies.ranTwice).toEqual([
      'call c1 started 2 times on the log',
      'call c1 was run 2 times by its device',
      "call c1 started under 2 request ids in its device's journal",
    ]);
  });

  it('sees outcomes no device reported, and runs the log never started', () => {
    const a = ranOnce('c1');
    const verdict = checkHistory(
      history({
        events: [
          ...a.events,
          ev('c2', T.Requested, 0),
          ev('c2', T.Dispatched, 1, { request_id: 'r-c2', deadline: at(11) }),
          ev('c2', T.Started, 1, { request_id: 'r-c2' }),
          ev('c2', T.Failed, 2, { request_id: 'r-c2', error: { code: 'not_run' } }),
          ev('c3', T.Requested, 0),
          ev('c3', T.Started, 1, { request_id: 'r-c3' }),
          ev('c3', T.Succeeded, 2, { request_id: 'r-c3' }),
        ],
        acknowledged: new Map(),
        journals: [
          { ...a.journal, outcome: 'failed', state: 'failed' },
          { deviceId: 'd2', requestId: 'r-c2', callId: 'c2', state: 'started', started: true },
        ],
        deviceRuns: new Map([
          ['c1', 1],
          ['c4', 1],
        ]),
      }),
    );
    expect(verdict.anomalies.unexpected).toEqual([
      "call c1 succeeded on the log, but d1's journal says failed",
      'call c2 failed as not run, but d2 started it',
      'call c3 succeeded (request r-c3), which no device journal holds',
      'call c4 was run by its device but never started on the log',
    ]);
  });

  it('sees a call stuck past its deadline and the grace, and leaves one still within them', () => {
    const verdict = checkHistory(
      history({
        events: [
          ...ranOnce('c1').events,
          // Requested at 0 s (20 s to wait for its device, later than the dispatch's 11 s): stuck at 60 s.
          ev('c2', T.Requested, 0),
          ev('c2', T.Dispatched, 1, { request_id: 'r-c2', deadline: at(11) }),
          ev('c2', T.Started, 1, { request_id: 'r-c2' }),
          // Staged until 100 s: still waiting for its owner, not stuck.
          ev('c3', T.Requested, 0),
          ev('c3', T.Staged, 0, { expires_at: at(100) }),
          // Authorized with no dispatch, requested at 45 s: within 20 s of waiting plus grace.
          ev('c4', T.Requested, 45),
          ev('c4', T.Authorized, 45),
        ],
        journals: [
          ranOnce('c1').journal,
          { deviceId: 'd2', requestId: 'r-c2', callId: 'c2', state: 'started', started: true },
        ],
      }),
    );
    expect(verdict.anomalies.stuck).toEqual(['call c2 is still started 40 s past its deadline']);
  });

  it('sees a read model that differs from its rebuild, or could not be rebuilt', () => {
    const verdict = checkHistory(
      history({
        rebuilds: [
          { projection: 'calls', differing: 3 },
          { projection: 'approvals', differing: 0, error: 'timeout' },
        ],
      }),
    );
    expect(verdict.anomalies.diverged).toEqual([
      'calls: 3 rows differ from a rebuild',
      'approvals could not be rebuilt: timeout',
    ]);
  });

  it('sees two messages accepted on one expected sequence of their subject, and a message id stored twice', () => {
    const subject = 'chaos.approvals.a.ap1';
    const verdict = checkHistory(
      history({
        streams: new Map([
          ['CHAOS_CALLS', [{ seq: 1, subject: 'chaos.calls.a.c1', expectedLastSubjectSequence: 0, msgId: 'm1' }]],
          [
            'CHAOS_APPROVALS',
            [
              { seq: 1, subject, expectedLastSubjectSequence: 0 },
              // Two decisions on the request at 1: both writers were told they won.
              { seq: 2, subject, expectedLastSubjectSequence: 1, msgId: 'decide-1' },
              { seq: 3, subject, expectedLastSubjectSequence: 1, msgId: 'decide-2' },
              { seq: 4, subject: 'chaos.approvals.a.ap2', msgId: 'decide-1' },
            ],
          ],
        ]),
      }),
    );
    expect(verdict.anomalies.sequence).toEqual([
      expect.stringMatching(
        /^CHAOS_APPROVALS: chaos\.approvals\.a\.ap1 #3 was appended expecting the subject at 1, but it stood at 2: .*; also appended on 1: #2$/,
      ),
      expect.stringMatching(/^CHAOS_APPROVALS: chaos\.approvals\.a\.ap2 #4 repeats message id decide-1 of #2/),
    ]);
    expect(anomalyCount(verdict)).toBe(2);
  });
});
