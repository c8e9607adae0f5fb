/**
 * Reads one context's matching events from the audit archive (`audit.replay`), a page at a time, asking for the next
 * page while the caller writes the current one. Only two pages are ever held, so memory is bounded whatever the range.
 * A page the archive cannot answer for a while (NATS restarting, audit restarting) is asked again until `patienceMs`
 * has passed; the caller's state file makes a replay cut short beyond that resumable.
 */
import {
  AUDIT_REPLAY_MAX_LIMIT,
  type AuditReplayReplyV1,
  type AuditReplayRequestV1,
  type StreamPositionV1,
} from '@ormuz/contracts';
import type { ContextQuery } from './replay-query.js';

export type FetchPage = (request: AuditReplayRequestV1) => Promise<AuditReplayReplyV1>;

export interface PageReaderOptions {
  /** Events per page (the archive's default when left out). */
  readonly limit?: number;
  /** How long to keep asking while the archive does not answer. */
  readonly patienceMs?: number;
  /** Told each time a page is asked again. */
  readonly onRetry?: (err: Error, attempt: number) => void;
}

const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 2000;

/** Errors that say "nobody answered", not "the request is wrong": worth asking again. */
function transient(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return code === 'service_unavailable' || code === 'append_unacknowledged';
}

/** Asks `fetch` until it answers, backing off, for up to `patienceMs`; gives up at once when `stopped`. */
async function patiently(fetch: FetchPage, request: AuditReplayRequestV1, o: PageReaderOptions, stopped: AbortSignal) {
  const deadline = Date.now() + (o.patienceMs ?? 60_000);
  for (let attempt = 1; ; attempt++) {
    try {
      return await fetch(request);
    } catch (err) {
      if (stopped.aborted || !transient(err) || Date.now() >= deadline) throw err;
      o.onRetry?.(err as Error, attempt);
      await new Promise((resolve) => setTimeout(resolve, Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** attempt)));
    }
  }
}

/**
 * The limit to ask the next page for, when the caller set none, from the events the last page held: a little more
 * than that. A page ends at its size bound long before the default limit when events are large, and the archive reads
 * (and writes as JSON) as many rows as the limit asks; asking for about what fits keeps that work to the page. A page
 * that held its whole limit lets the next one grow.
 */
export function nextPageLimit(received: number): number {
  return Math.min(AUDIT_REPLAY_MAX_LIMIT, Math.max(PAGE_LIMIT_FLOOR, Math.ceil(received * 1.25)));
}

/** The fewest events a page is asked for (after a page of a few very large events, small ones may follow). */
const PAGE_LIMIT_FLOOR = 100;

/** The pages of `query` after `after`, in order; the first page's `high_seq` is the end of the range. */
export async function* readPages(
  fetch: FetchPage,
  query: ContextQuery,
  after: StreamPositionV1 | undefined,
  o: PageReaderOptions = {},
): AsyncGenerator<AuditReplayReplyV1> {
  // Set when the reader stops early (the caller failed to write): the page asked ahead is not asked again.
  const stop = new AbortController();
  let limit = o.limit;
  const ask = (from: StreamPositionV1 | undefined) =>
    patiently(fetch, { ...query, ...(from ? { after: from } : {}), ...(limit ? { limit } : {}) }, o, stop.signal);
  let pending = ask(after);
  try {
    for (;;) {
      const page = await pending;
      if (o.limit === undefined) limit = nextPageLimit(page.events.length);
      if (page.next) {
        pending = ask(page.next);
        // Awaited on the next turn; until then a failure must not count as unhandled.
        pending.catch(() => undefined);
      }
      yield page;
      if (!page.next) return;
    }
  } finally {
    stop.abort();
  }
}
