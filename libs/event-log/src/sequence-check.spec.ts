import { describeAnomaly, findSequenceAnomalies, type LoggedMessage } from './sequence-check.js';

const appended = (seq: number, subject: string, expected: number, msgId = `m${seq}`): LoggedMessage => ({
  seq,
  subject,
  expectedLastSubjectSequence: expected,
  msgId,
});

describe('findSequenceAnomalies', () => {
  it('finds none on a log where every append expected the message before it on its subject', () => {
    const log = [
      appended(1, 'ns.calls.a', 0),
      appended(2, 'ns.calls.b', 0),
      appended(3, 'ns.calls.a', 1),
      // A fact recorded without an expectation moves the subject on like any message.
      { seq: 4, subject: 'ns.calls.a', msgId: 'r4' },
      appended(5, 'ns.calls.a', 4),
      appended(6, 'ns.calls.b', 2),
    ];
    expect(findSequenceAnomalies(log)).toEqual([]);
  });

  it('names two appends that were both accepted on the same expected sequence (the replicas-3 race)', () => {
    const log = [appended(1, 'ns.calls.a', 0), appended(2, 'ns.calls.a', 1), appended(3, 'ns.calls.a', 1)];
    const anomalies = findSequenceAnomalies(log);
    expect(anomalies).toEqual([{ kind: 'stale_expectation', subject: 'ns.calls.a', seq: 3, expected: 1, previous: 2 }]);
    expect(describeAnomaly(anomalies[0]!)).toMatch(/ns\.calls\.a #3 .* expecting the subject at 1, but it stood at 2/);
  });

  it('names a second first append to one subject, and an append expecting a message that is not there', () => {
    const log = [appended(1, 'ns.calls.a', 0), appended(2, 'ns.calls.a', 0), appended(3, 'ns.calls.b', 7)];
    expect(findSequenceAnomalies(log).map((a) => a.kind === 'stale_expectation' && [a.seq, a.previous])).toEqual([
      [2, 1],
      [3, 0],
    ]);
  });

  it('names a message id stored twice (a retried append the de-duplication let through)', () => {
    const log = [appended(1, 'ns.calls.a', 0, 'evt-1'), { seq: 2, subject: 'ns.calls.a', msgId: 'evt-1' }];
    const anomalies = findSequenceAnomalies(log);
    expect(anomalies).toEqual([
      { kind: 'duplicate_message_id', msgId: 'evt-1', subject: 'ns.calls.a', seq: 2, firstSeq: 1 },
    ]);
    expect(describeAnomaly(anomalies[0]!)).toMatch(/repeats message id evt-1 of #1/);
  });
});
