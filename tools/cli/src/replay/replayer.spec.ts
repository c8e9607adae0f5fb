import { AUDIT_REPLAY_MAX_LIMIT, type AuditReplayReplyV1, type AuditReplayRequestV1 } from '@ormuz/contracts';
import { nextPageLimit, readPages } from './replayer.js';

describe('replay pages', () => {
  it('asks for a little more than the last page held, within the bounds of a page', () => {
    expect(nextPageLimit(900)).toBe(1125);
    expect(nextPageLimit(AUDIT_REPLAY_MAX_LIMIT)).toBe(AUDIT_REPLAY_MAX_LIMIT);
    expect(nextPageLimit(1)).toBe(100);
  });

  /** An archive whose pages end at `fits` events (their size bound) or at the limit asked, over `total` events. */
  function archive(total: number, fits: number) {
    const asked: (number | undefined)[] = [];
    const fetch = async (r: AuditReplayRequestV1): Promise<AuditReplayReplyV1> => {
      asked.push(r.limit);
      const from = r.after?.seq ?? 0;
      const count = Math.min(r.limit ?? 2000, fits, total - from);
      const events = Array.from({ length: count }, (_, i) => ({ seq: from + i + 1, idx: 0, event: {} as never }));
      const last = events.at(-1)!;
      return { events, next: last.seq < total ? { seq: last.seq, idx: 0 } : null, high_seq: total };
    };
    return { asked, fetch };
  }

  it('sizes each page after the first by what the one before held, and reads every event once', async () => {
    const { asked, fetch } = archive(5_000, 900);
    const seqs: number[] = [];
    for await (const page of readPages(fetch, { tenant: 'acme', context: 'calls' }, undefined)) {
      seqs.push(...page.events.map((e) => e.seq));
    }
    expect(seqs).toEqual(Array.from({ length: 5_000 }, (_, i) => i + 1));
    expect(asked).toEqual([undefined, 1125, 1125, 1125, 1125, 1125]);
  });

  it('keeps the page size the caller chose', async () => {
    const { asked, fetch } = archive(1_000, 900);
    for await (const page of readPages(fetch, { tenant: 'acme', context: 'calls' }, undefined, { limit: 300 })) {
      expect(page.events.length).toBeLessThanOrEqual(300);
    }
    expect(asked).toEqual([300, 300, 300, 300]);
  });
});
