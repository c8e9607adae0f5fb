import { headers } from '@nats-io/transport-node';
import {
  AUDIT_EXPORT_MAX_BYTES,
  EXPORT_COUNT_HEADER,
  EXPORT_HIGH_SEQ_HEADER,
  EXPORT_LAST_HEADER,
  type AuditExportReplyV1,
  type AuditExportRequestV1,
} from '@ormuz/contracts';
import { ServiceUnavailableError, type ReceivedPart } from '@ormuz/service-kit/client';
import { END_OF_MESSAGE, EXPORT_WINDOW_SEQS, exportPartOf, readExport } from './replayer.js';

const text = new TextEncoder();

/**
 * An archive of `total` events (seq 1…total) answering each request with up to `limit` events in parts of `perPart`;
 * `cut(request, part)` says whether the stream breaks before that part.
 */
function archive(total: number, perPart: number, cut: (request: number, part: number) => boolean = () => false) {
  const asked: (AuditExportRequestV1['after'] | undefined)[] = [];
  async function* fetch(r: AuditExportRequestV1): AsyncGenerator<ReceivedPart, AuditExportReplyV1> {
    const request = asked.push(r.after) - 1;
    const from = r.after?.seq ?? 0;
    const high = Math.min(total, r.to_seq ?? total);
    const end = Math.min(high, from + (r.limit ?? 20_000));
    for (let first = from + 1, part = 0; first <= end; first += perPart, part++) {
      if (cut(request, part)) throw new ServiceUnavailableError('x', 'the reply stopped');
      const last = Math.min(end, first + perPart - 1);
      const h = headers();
      h.set(EXPORT_COUNT_HEADER, String(last - first + 1));
      h.set(EXPORT_LAST_HEADER, `${last}:0`);
      h.set(EXPORT_HIGH_SEQ_HEADER, String(high));
      const lines = Array.from({ length: last - first + 1 }, (_, i) => `{"seq":${first + i}}\n`).join('');
      yield { body: text.encode(lines), headers: h };
    }
    return { count: end - from, next: end < high ? { seq: end, idx: 0 } : null, high_seq: high };
  }
  return { asked, fetch };
}

async function seqsRead(fetch: ReturnType<typeof archive>['fetch'], limit?: number): Promise<number[]> {
  const seqs: number[] = [];
  for await (const part of readExport(fetch, { tenant: 'acme', context: 'calls' }, undefined, { limit })) {
    const lines = new TextDecoder().decode(part.body).split('\n').slice(0, -1);
    expect(lines).toHaveLength(part.count);
    seqs.push(...lines.map((l) => (JSON.parse(l) as { seq: number }).seq));
    expect(part.last).toEqual({ seq: seqs.at(-1), idx: 0 });
  }
  return seqs;
}

const oneTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe('export reader', () => {
  it('reads every event once, request after request, each going on where the last one ended', async () => {
    const { asked, fetch } = archive(2_500, 300);
    expect(await seqsRead(fetch, 1_000)).toEqual(oneTo(2_500));
    expect(asked).toEqual([undefined, { seq: 1_000, idx: 0 }, { seq: 2_000, idx: 0 }]);
  });

  it('reads a long range two windows at a time, writing every event once and in order', async () => {
    const total = EXPORT_WINDOW_SEQS * 3 + 10;
    const { asked, fetch } = archive(total, 700);
    expect(await seqsRead(fetch)).toEqual(oneTo(total));
    // One event first (it says where the range ends), then the windows after it.
    expect(asked).toEqual([
      undefined,
      { seq: 1, idx: 0 },
      { seq: 1 + EXPORT_WINDOW_SEQS, idx: END_OF_MESSAGE },
      { seq: 1 + 2 * EXPORT_WINDOW_SEQS, idx: END_OF_MESSAGE },
      { seq: 1 + 3 * EXPORT_WINDOW_SEQS, idx: END_OF_MESSAGE },
    ]);
  });

  it('asks again after the last part taken when a reply is cut off, repeating and losing nothing', async () => {
    const { asked, fetch } = archive(2_000, 300, (request, part) => request === 0 && part === 2);
    expect(await seqsRead(fetch, 1_000)).toEqual(oneTo(2_000));
    expect(asked).toEqual([undefined, { seq: 600, idx: 0 }, { seq: 1_600, idx: 0 }]);
    // The same in a window read ahead: its held parts stay, and it goes on after them.
    const windows = archive(EXPORT_WINDOW_SEQS * 2, 300, (request, part) => request === 2 && part === 3);
    expect(await seqsRead(windows.fetch)).toEqual(oneTo(EXPORT_WINDOW_SEQS * 2));
    expect(windows.asked.at(-1)).toEqual({ seq: 1 + EXPORT_WINDOW_SEQS + 900, idx: 0 });
  });

  /**
   * An archive with one event every `every` sequences up to `total`, each event's line `line(seq)`; `log` records
   * each event read, and `asked` each request's end.
   */
  function sparse(every: number, total: number, line: (seq: number) => Uint8Array) {
    const log: string[] = [];
    const asked: number[] = [];
    async function* fetch(r: AuditExportRequestV1): AsyncGenerator<ReceivedPart, AuditExportReplyV1> {
      const high = Math.min(total, r.to_seq ?? total);
      const limit = r.limit ?? 50_000;
      asked.push(high);
      let count = 0;
      let last = r.after?.seq ?? 0;
      for (let seq = (Math.floor(last / every) + 1) * every; seq <= high && count < limit; seq += every) {
        const h = headers();
        h.set(EXPORT_COUNT_HEADER, '1');
        h.set(EXPORT_LAST_HEADER, `${seq}:0`);
        h.set(EXPORT_HIGH_SEQ_HEADER, String(high));
        log.push(`read ${seq}`);
        yield { body: line(seq), headers: h };
        count++;
        last = seq;
      }
      return { count, next: count === limit && last < high ? { seq: last, idx: 0 } : null, high_seq: high };
    }
    const seqs = Array.from({ length: Math.floor(total / every) }, (_, i) => (i + 1) * every);
    return { fetch, log, asked, seqs };
  }

  it('holds no more of the window read ahead than a request answers, however large its events', async () => {
    // An event every 500 sequences, of 2 MiB each: ten to a window, 20 MiB.
    const size = 2 * 1024 * 1024;
    const { fetch, log, seqs } = sparse(500, EXPORT_WINDOW_SEQS * 2, () => new Uint8Array(size));
    const written: number[] = [];
    for await (const part of readExport(fetch, { tenant: 'acme', context: 'calls' }, undefined)) {
      log.push(`write ${part.last.seq}`);
      written.push(part.last.seq);
    }
    expect(written).toEqual(seqs);
    // When the first window's last event is written, the second window has been read only as far as it is held.
    const readAhead = log.slice(0, log.indexOf(`write ${EXPORT_WINDOW_SEQS}`)).filter((l) => {
      const seq = Number(l.split(' ')[1]);
      return l.startsWith('read') && seq > EXPORT_WINDOW_SEQS;
    });
    expect(readAhead.length * size).toBeLessThanOrEqual(AUDIT_EXPORT_MAX_BYTES + size);
  });

  it('widens the windows of a tenant with few events in a busy stream', async () => {
    // One event every 100 sequences of 200,000: fixed windows would take 40 requests.
    const { fetch, asked, seqs } = sparse(100, 200_000, (seq) => text.encode(`{"seq":${seq}}\n`));
    expect(await seqsRead(fetch)).toEqual(seqs);
    expect(asked.length).toBeLessThan(8);
  });

  it('ends at the first event when its reply says the range ended before it (archived between two reads)', async () => {
    const { fetch } = archive(EXPORT_WINDOW_SEQS + 50, 100);
    let first = true;
    async function* racing(r: AuditExportRequestV1): AsyncGenerator<ReceivedPart, AuditExportReplyV1> {
      // As audit refuses it.
      if (r.after && r.to_seq !== undefined && r.after.seq > r.to_seq) {
        throw Object.assign(new Error('after.seq is beyond to_seq'), { code: 'invalid_query' });
      }
      const reply = yield* fetch(r);
      if (!first) return reply;
      first = false;
      return { ...reply, high_seq: 0 };
    }
    expect(await seqsRead(racing)).toEqual([1]);
  });

  it('stops at an answer about the request itself, which asking again would repeat', async () => {
    async function* refused(): AsyncGenerator<ReceivedPart, AuditExportReplyV1> {
      yield* [];
      throw Object.assign(new Error('another tenant'), { code: 'forbidden' });
    }
    await expect(seqsRead(refused)).rejects.toMatchObject({ code: 'forbidden' });
  });

  it('gives up when no part comes within its patience', async () => {
    const { fetch } = archive(100, 10, () => true);
    const reading = readExport(fetch, { tenant: 'acme', context: 'calls' }, undefined, { patienceMs: 0 });
    await expect(reading.next()).rejects.toBeInstanceOf(ServiceUnavailableError);
  });

  it('refuses a part that does not say what it holds', () => {
    expect(() => exportPartOf({ body: new Uint8Array(), headers: headers() })).toThrow(/count and place/);
  });
});
