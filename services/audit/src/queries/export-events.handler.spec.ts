import {
  AUDIT_EXPORT_MAX_BYTES,
  AUDIT_EXPORT_PART_BYTES,
  EXPORT_COUNT_HEADER,
  EXPORT_HIGH_SEQ_HEADER,
  EXPORT_LAST_HEADER,
  type AuditExportReplyV1,
} from '@ormuz/contracts';
import type { ReplyPart, StreamedReply } from '@ormuz/service-kit';
import type { AuditConfig } from '../config.js';
import type { AuditRepository, ExportLineRow, ReplayFilter } from '../persistence/audit.repository.js';
import { ExportEventsHandler, ExportEventsQuery } from './export-events.handler.js';

/** A repository whose export holds lines of these sizes (seq 1, 2, …), each filled to its size with `x`. */
function archive(sizes: number[]) {
  const filters: ReplayFilter[] = [];
  const repo = {
    highSeq: async () => sizes.length,
    exportLines: async function* (f: ReplayFilter): AsyncGenerator<ExportLineRow> {
      filters.push(f);
      let seq = 0;
      for (const size of sizes) {
        if (++seq > f.limit) return;
        yield { seq, idx: 0, line: 'x'.repeat(size - 1) };
      }
    },
  } as unknown as AuditRepository;
  const handler = new ExportEventsHandler(repo, { namespace: 'ormuz' } as AuditConfig);
  return { filters, handler };
}

/** The parts of an export (lines per part, bytes, headers) and its final reply. */
async function parts(handler: ExportEventsHandler, limit?: number) {
  const reply = (await handler.execute(
    new ExportEventsQuery({ tenant: 'acme', context: 'calls', ...(limit ? { limit } : {}) }),
  )) as unknown as StreamedReply<AuditExportReplyV1>;
  const got: { lines: number; bytes: number; headers: ReplyPart['headers'] }[] = [];
  for (;;) {
    const next = await reply.parts.next();
    if (next.done) return { got, end: next.value };
    const text = Buffer.from(next.value.body).toString('utf8');
    got.push({ lines: text.split('\n').length - 1, bytes: next.value.body.length, headers: next.value.headers });
  }
}

describe('export parts', () => {
  const quarter = AUDIT_EXPORT_PART_BYTES / 4;

  it('fills each part with whole lines up to the part size, and sends a larger line alone', async () => {
    const { handler } = archive([quarter, quarter, quarter, quarter, 1, AUDIT_EXPORT_PART_BYTES * 2, 10, 10]);
    const { got, end } = await parts(handler);
    expect(got.map((p) => [p.lines, p.bytes])).toEqual([
      [4, AUDIT_EXPORT_PART_BYTES],
      [1, 1],
      [1, AUDIT_EXPORT_PART_BYTES * 2],
      [2, 20],
    ]);
    expect(got.map((p) => p.headers)).toEqual([
      { [EXPORT_COUNT_HEADER]: '4', [EXPORT_LAST_HEADER]: '4:0', [EXPORT_HIGH_SEQ_HEADER]: '8' },
      { [EXPORT_COUNT_HEADER]: '1', [EXPORT_LAST_HEADER]: '5:0', [EXPORT_HIGH_SEQ_HEADER]: '8' },
      { [EXPORT_COUNT_HEADER]: '1', [EXPORT_LAST_HEADER]: '6:0', [EXPORT_HIGH_SEQ_HEADER]: '8' },
      { [EXPORT_COUNT_HEADER]: '2', [EXPORT_LAST_HEADER]: '8:0', [EXPORT_HIGH_SEQ_HEADER]: '8' },
    ]);
    expect(end).toEqual({ count: 8, next: null, high_seq: 8 });
  });

  it('reads one row past the limit to say where to go on, and sends none of it', async () => {
    const { handler, filters } = archive([10, 10, 10, 10]);
    const { got, end } = await parts(handler, 3);
    expect(filters.map((f) => f.limit)).toEqual([4]);
    expect(got.map((p) => p.lines)).toEqual([3]);
    expect(end).toEqual({ count: 3, next: { seq: 3, idx: 0 }, high_seq: 4 });
    expect((await parts(archive([10, 10, 10]).handler, 3)).end).toEqual({ count: 3, next: null, high_seq: 3 });
  });

  it('ends a request once its lines would pass the most a request holds, however few events that is', async () => {
    const perPart = AUDIT_EXPORT_MAX_BYTES / AUDIT_EXPORT_PART_BYTES;
    const { got, end } = await parts(archive(Array(perPart + 4).fill(AUDIT_EXPORT_PART_BYTES)).handler);
    expect(got).toHaveLength(perPart);
    expect(end).toEqual({ count: perPart, next: { seq: perPart, idx: 0 }, high_seq: perPart + 4 });
    // One event larger than that still goes, alone.
    expect((await parts(archive([AUDIT_EXPORT_MAX_BYTES * 2, 10]).handler)).end.count).toBe(1);
  });

  it('answers an empty range with no part and nowhere to go on', async () => {
    expect(await parts(archive([]).handler)).toEqual({ got: [], end: { count: 0, next: null, high_seq: 0 } });
  });
});
