/**
 * Reads one context's matching events from the audit archive (`audit.export`): requests of up to `limit` events, each
 * answered in parts of whole NDJSON lines that the caller writes as they come. Memory is bounded whatever the range:
 * what is held is the parts NATS has delivered and the caller has not yet written, within one request. A request the
 * archive cannot answer for a while (NATS restarting, audit restarting), or one cut off mid-stream, is asked again
 * after the last part the caller took, until `patienceMs` has passed without progress; the caller's state file makes
 * a replay cut short beyond that resumable.
 */
import {
  AUDIT_EXPORT_MAX_BYTES,
  EXPORT_COUNT_HEADER,
  EXPORT_HIGH_SEQ_HEADER,
  EXPORT_LAST_HEADER,
  type AuditExportReplyV1,
  type AuditExportRequestV1,
  type StreamPositionV1,
} from '@ormuz/contracts';
import type { ReceivedPart } from '@ormuz/service-kit/client';

export type FetchExport = (request: AuditExportRequestV1) => AsyncGenerator<ReceivedPart, AuditExportReplyV1>;

export interface ExportReaderOptions {
  /** Events per request, one request after another; left out, the range is read in windows, two at a time. */
  readonly limit?: number;
  /** How long to keep asking while the archive does not answer and no part comes. */
  readonly patienceMs?: number;
  /** Told each time a request is sent again. */
  readonly onRetry?: (err: Error, attempt: number) => void;
}

/** One part of an export: whole lines, how many, where the last one is, and where the context ends. */
export interface ExportPart {
  readonly body: Uint8Array;
  readonly count: number;
  readonly last: StreamPositionV1;
  readonly highSeq: number;
}

/** How long to keep asking without progress when the caller does not say (`patienceMs`). */
const DEFAULT_PATIENCE_MS = 60_000;
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 2000;

/** Errors that say "nobody answered" or "the answer was cut", not "the request is wrong": worth asking again. */
function transient(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return code === 'service_unavailable' || code === 'append_unacknowledged';
}

/** The part's own account of itself (its headers); a part that lacks it is refused, not guessed at. */
export function exportPartOf(part: ReceivedPart): ExportPart {
  const field = (name: string) => (part.headers.has(name) ? part.headers.get(name) : 'missing');
  const count = Number(field(EXPORT_COUNT_HEADER));
  const [seq, idx] = field(EXPORT_LAST_HEADER).split(':').map(Number);
  const highSeq = Number(field(EXPORT_HIGH_SEQ_HEADER));
  if (![count, seq, idx, highSeq].every(Number.isSafeInteger)) {
    throw new Error('The audit service sent an export part without its count and place: is it older than this CLI?');
  }
  return { body: part.body, count, last: { seq: seq!, idx: idx! }, highSeq };
}

type Query = Omit<AuditExportRequestV1, 'after' | 'limit'>;

/** Past every index of a message: "after message `seq`". */
export const END_OF_MESSAGE = 2 ** 31 - 1;

/** Sequences in the first window of a range read two windows at a time, and the events a window is sized for. */
export const EXPORT_WINDOW_SEQS = 5_000;

/** How much wider a window may be than the one before it (a sparse tenant in a busy stream). */
const WINDOW_GROWTH = 16;

/** Windows read at once: the one being written and the next, read (and held) meanwhile. */
const LANES = 2;

/**
 * The parts of `query` after `after`, in order. With a `limit` of the caller's, one request after another. Otherwise a
 * first request of one event says where the range ends as the archive stands, and the rest is read in windows of
 * sequences, two at a time: Postgres works on both while the parts of the first are written. A window is sized from
 * the one before it to hold about {@link EXPORT_WINDOW_SEQS} events (a tenant with few events in a busy stream gets
 * wider windows). The next window's first parts, up to a request's bytes (`AUDIT_EXPORT_MAX_BYTES`), are held until
 * the windows before it are written, so what is written stays in stream order and the cursor moves only forward.
 */
export async function* readExport(
  fetch: FetchExport,
  query: Query,
  after: StreamPositionV1 | undefined,
  o: ExportReaderOptions = {},
): AsyncGenerator<ExportPart> {
  const stop = new AbortController();
  if (o.limit !== undefined) {
    yield* readRange(fetch, query, after, o.limit, o, stop.signal);
    return;
  }
  const first = yield* request(fetch, { ...query, ...(after ? { after } : {}), limit: 1 }, o, stop.signal);
  if (!first.next) return;
  // An event archived between the reply's two reads may lie past the `high_seq` it reports.
  const end = Math.max(first.high_seq, first.next.seq);
  let from: StreamPositionV1 = first.next;
  let span = EXPORT_WINDOW_SEQS;
  const read = () => {
    const toSeq = Math.min(end, from.seq + span);
    const width = toSeq - from.seq;
    let events = 0;
    const counted = async function* (parts: AsyncGenerator<ExportPart, unknown>) {
      for await (const part of parts) {
        events += part.count;
        yield part;
      }
      // Read whole: the windows after it are sized from it.
      span = Math.min(
        span * WINDOW_GROWTH,
        Math.max(EXPORT_WINDOW_SEQS, Math.ceil((width * EXPORT_WINDOW_SEQS) / Math.max(events, 1))),
      );
    };
    const held = hold(
      counted(readRange(fetch, { ...query, to_seq: toSeq }, from, undefined, o, stop.signal)),
      stop.signal,
    );
    from = { seq: toSeq, idx: END_OF_MESSAGE };
    // Awaited in its turn; until then a failure must not count as unhandled.
    held.catch(() => undefined);
    return held;
  };
  const reading: Promise<Held>[] = [];
  try {
    for (;;) {
      while (reading.length < LANES && from.seq < end) reading.push(read());
      // The last window ends at `end`; when the first started there, it still reads the rest of that message.
      if (reading.length === 0 && from === first.next) reading.push(read());
      const window = reading.shift();
      if (!window) return;
      const { parts, rest } = await window;
      try {
        yield* parts;
        if (rest) yield* rest;
      } finally {
        // Ends the window's request when the caller stopped before its end.
        await rest?.return(undefined);
      }
    }
  } finally {
    stop.abort();
    for (const window of reading)
      void window.then(
        (h) => h.rest?.return(undefined),
        () => undefined,
      );
  }
}

/** A window read ahead: its first parts, held, and the generator of the rest when it holds more than that. */
interface Held {
  readonly parts: readonly ExportPart[];
  readonly rest?: AsyncGenerator<ExportPart, unknown>;
}

/** Bytes of a window held while the windows before it are written: a request's worth, at most. */
const HOLD_BYTES = AUDIT_EXPORT_MAX_BYTES;

/** The first parts of `parts`, up to {@link HOLD_BYTES}; stops reading when `stopped` (the caller stopped). */
async function hold(parts: AsyncGenerator<ExportPart, unknown>, stopped: AbortSignal): Promise<Held> {
  const held: ExportPart[] = [];
  let bytes = 0;
  while (bytes < HOLD_BYTES) {
    const next = await parts.next();
    if (next.done) return { parts: held };
    if (stopped.aborted) {
      await parts.return(undefined);
      return { parts: [] };
    }
    held.push(next.value);
    bytes += next.value.body.length;
  }
  return { parts: held, rest: parts };
}

/** The parts after `after` within the query's bounds, request after request; returns the last reply's `high_seq`. */
async function* readRange(
  fetch: FetchExport,
  query: Query,
  after: StreamPositionV1 | undefined,
  limit: number | undefined,
  o: ExportReaderOptions,
  stopped: AbortSignal,
): AsyncGenerator<ExportPart, number> {
  let from = after;
  for (;;) {
    const body = { ...query, ...(from ? { after: from } : {}), ...(limit ? { limit } : {}) };
    const end = yield* request(fetch, body, o, stopped);
    if (!end.next) return end.high_seq;
    from = end.next;
  }
}

/**
 * One request's parts, and its final reply. Asked again after the last part taken when the archive cannot answer or
 * the reply is cut off, until `patienceMs` passes with no part or the reader is `stopped`.
 */
async function* request(
  fetch: FetchExport,
  body: AuditExportRequestV1,
  o: ExportReaderOptions,
  stopped: AbortSignal,
): AsyncGenerator<ExportPart, AuditExportReplyV1> {
  const patienceMs = o.patienceMs ?? DEFAULT_PATIENCE_MS;
  let from = body.after;
  let deadline = Date.now() + patienceMs;
  for (let attempt = 1; ; attempt++) {
    const parts = fetch({ ...body, ...(from ? { after: from } : {}) });
    try {
      for (;;) {
        const next = await parts.next();
        if (next.done) return next.value;
        const part = exportPartOf(next.value);
        yield part;
        // Taken: a request cut off from here on goes on after it.
        from = part.last;
        deadline = Date.now() + patienceMs;
        attempt = 1;
      }
    } catch (err) {
      if (stopped.aborted || !transient(err) || Date.now() >= deadline) throw err;
      o.onRetry?.(err as Error, attempt);
      await new Promise((resolve) => setTimeout(resolve, Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** attempt)));
    } finally {
      // Stops a reply still coming when the caller stopped reading (it failed to write).
      await parts.return(undefined as never);
    }
  }
}
