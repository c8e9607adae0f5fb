import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DeviceJournal,
  JournalCorruptError,
  JournalLockedError,
  JournalTransitionError,
  type JournalSubmit,
} from './journal.js';

const submit: JournalSubmit = {
  requestId: 'req-1',
  callId: 'call-1',
  tool: 'device.tap',
  payloadSha256: 'a'.repeat(64),
  deadline: '2030-01-01T00:00:00.000Z',
  verdict: { level: 'low', reasons: [] },
};

describe('DeviceJournal', () => {
  let dir: string;
  const open: DeviceJournal[] = [];
  const openJournal = (): DeviceJournal => {
    const journal = DeviceJournal.open(dir, { now: () => new Date('2026-01-02T03:04:05.000Z') });
    open.push(journal);
    return journal;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ormuz-journal-'));
  });
  afterEach(() => {
    open.splice(0).forEach((j) => j.close());
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps every state change across a reopen', () => {
    const journal = openJournal();
    journal.admit(submit);
    journal.markClaimed('req-1');
    journal.markStarted('req-1', 'boot-1');
    journal.recordOutcome('req-1', { status: 'succeeded', result: { message_id: 'm1' }, durationMs: 3 });
    journal.seal('req-2');
    journal.close();

    const reopened = openJournal();
    expect(reopened.get('req-1')).toMatchObject({
      state: 'succeeded',
      startedBootId: 'boot-1',
      outcome: { status: 'succeeded', result: { message_id: 'm1' } },
      acked: false,
    });
    expect(reopened.get('req-2')?.state).toBe('sealed');
    expect(reopened.unackedOutcomes().map((e) => e.requestId)).toEqual(['req-1']);
    reopened.markAcked('req-1');
    expect(reopened.unackedOutcomes()).toEqual([]);
  });

  it('observes a duplicate request id instead of recording it again', () => {
    const journal = openJournal();
    expect(journal.admit(submit).kind).toBe('new');
    journal.markClaimed('req-1');
    const again = journal.admit(submit);
    expect(again).toMatchObject({ kind: 'duplicate', entry: { state: 'claimed' } });
    expect(readFileSync(journal.path, 'utf8').trim().split('\n')).toHaveLength(2);
  });

  it('reports the same id with different bytes as a conflict', () => {
    const journal = openJournal();
    journal.admit(submit);
    expect(journal.admit({ ...submit, payloadSha256: 'b'.repeat(64) })).toMatchObject({
      kind: 'conflict',
      entry: { payloadSha256: 'a'.repeat(64) },
    });
  });

  it('treats a submit for an id sealed before it arrived as a duplicate of the seal', () => {
    const journal = openJournal();
    journal.seal('req-1');
    expect(journal.admit(submit)).toMatchObject({ kind: 'duplicate', entry: { state: 'sealed' } });
  });

  it('refuses to start a request twice, or one that was sealed', () => {
    const journal = openJournal();
    journal.admit(submit);
    journal.markClaimed('req-1');
    journal.markStarted('req-1', 'boot-1');
    expect(() => journal.markStarted('req-1', 'boot-1')).toThrow(JournalTransitionError);
    expect(journal.canSeal('req-1')).toBe(false);
    expect(() => journal.seal('req-1')).toThrow(/cannot be sealed in the journal while it is started/);

    journal.admit({ ...submit, requestId: 'req-2' });
    journal.seal('req-2');
    expect(() => journal.markClaimed('req-2')).toThrow(JournalTransitionError);
  });

  it('drops a torn last line left by a crash during a write', () => {
    const journal = openJournal();
    journal.admit(submit);
    journal.close();
    appendFileSync(join(dir, 'journal.jsonl'), '{"op":"claimed","id":"req-1"');

    const reopened = openJournal();
    expect(reopened.get('req-1')?.state).toBe('received');
    reopened.markClaimed('req-1');
    reopened.close();
    expect(openJournal().get('req-1')?.state).toBe('claimed');
  });

  it('refuses to open a journal with an unreadable line instead of forgetting what ran', () => {
    writeFileSync(join(dir, 'journal.jsonl'), 'not json\n');
    expect(() => openJournal()).toThrow(JournalCorruptError);
  });

  it('refuses a second writer on the same directory', () => {
    openJournal();
    expect(() => openJournal()).toThrow(JournalLockedError);
  });
});
