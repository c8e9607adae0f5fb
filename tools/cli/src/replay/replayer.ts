/**
 * Reads one context's matching events from the audit archive (`audit.export`): requests of up to `limit` events, each
 * answered in parts of whole NDJSON lines that the caller writes as they come. Memory is bounded whatever the range:
 * what is held is the parts NATS has delivered and the caller has not yet written, within one request. A request the
 * archive cannot answer for a while (NATS restarting, audit restarting), or one cut off mid-stream, is asked again
 * after the last part the caller took, until `patienceMs` has passed without progress; the caller's state file makes
 * a replay cut short beyond that resumable.
 */
import {
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
  /** Events per request (the archive's default when left out). */
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

/** The parts of `query` after `after`, in order, each to be written before the next is asked for. */
export async function* readExport(
  fetch: FetchExport,
  query: Omit<AuditExportRequestV1, 'after' | 'limit'>,
  after: StreamPositionV1 | undefined,
  o: ExportReaderOptions = {},
): AsyncGenerator<ExportPart> {
  let from = after;
  let deadline = Date.now() + (o.patienceMs ?? 60_000);
  for (let attempt = 1; ;) {
    const parts = fetch({ ...query, ...(from ? { after: from } : {}), ...(o.limit ? { limit: o.limit } : {}) });
    let end: AuditExportReplyV1;
    try {
      for (;;) {
        const next = await parts.next();
        if (next.done) {
          end = next.value;
          break;
        }
        const part = exportPartOf(next.value);
        yield part;
        // Written: a request cut off from here on goes on after it.
        from = part.last;
        deadline = Date.now() + (o.patienceMs ?? 60_000);
        attempt = 1;
      }
    } catch (err) {
      if (!transient(err) || Date.now() >= deadline) throw err;
      o.onRetry?.(err as Error, attempt);
      await new Promise((resolve) => setTimeout(resolve, Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** attempt)));
      attempt++;
      continue;
    } finally {
      // Stops a reply still coming when the caller stopped reading (it failed to write).
      await parts.return(undefined as never);
    }
    if (!end.next) return;
    from = end.next;
  }
}
