/**
 * One replay from start to end: for each context of the plan, its pages in order, each written whole (as rows or as
 * CloudEvents, one a line) before the cursor moves on. Shared by `ormuz replay` and the replay bench.
 */
import type { ContextName, ReplayedEventV1, StreamPositionV1 } from '@ormuz/contracts';
import type { ExportState, ReplayFormat } from './export-file.js';
import type { ReplayProgress } from './progress.js';
import { readPages, type FetchPage, type PageReaderOptions } from './replayer.js';
import { replayRow } from './replay-row.js';

/** Where pages go: the export file, or stdout. */
export interface ReplaySink {
  readonly state: Pick<ExportState, 'cursors' | 'events'>;
  append(text: string, count: number, context: ContextName, cursor: StreamPositionV1 | 'done'): Promise<void>;
}

/** Past every index of a message: "after message `seq`". */
const END_OF_MESSAGE = 2 ** 31 - 1;

export function formatEvents(format: ReplayFormat, context: ContextName, events: readonly ReplayedEventV1[]): string {
  let text = '';
  for (const e of events) text += `${JSON.stringify(format === 'cloudevents' ? e.event : replayRow(context, e))}\n`;
  return text;
}

export async function runReplay(
  r: {
    readonly state: Pick<ExportState, 'queries' | 'fromSeq' | 'format'>;
    readonly fetch: FetchPage;
    readonly sink: ReplaySink;
    readonly progress?: ReplayProgress;
  } & PageReaderOptions,
): Promise<number> {
  const { queries, fromSeq, format } = r.state;
  for (const query of queries) {
    const context = query.context;
    const cursor = r.sink.state.cursors[context];
    if (cursor === 'done') continue;
    const after = cursor ?? (fromSeq > 1 ? { seq: fromSeq - 1, idx: END_OF_MESSAGE } : undefined);
    for await (const page of readPages(r.fetch, query, after, r)) {
      const last = page.events.at(-1);
      await r.sink.append(
        formatEvents(format, context, page.events),
        page.events.length,
        context,
        page.next ? { seq: last!.seq, idx: last!.idx } : 'done',
      );
      r.progress?.update(context, after?.seq ?? 0, last?.seq ?? page.high_seq, page.high_seq, r.sink.state.events);
    }
  }
  return r.sink.state.events;
}

/** Writes pages to stdout, waiting when it is full; nothing to resume. */
export class StdoutSink implements ReplaySink {
  state: Pick<ExportState, 'cursors' | 'events'> = { cursors: {}, events: 0 };

  async append(text: string, count: number, context: ContextName, cursor: StreamPositionV1 | 'done'): Promise<void> {
    if (text && !process.stdout.write(text)) await new Promise((resolve) => process.stdout.once('drain', resolve));
    this.state = { events: this.state.events + count, cursors: { ...this.state.cursors, [context]: cursor } };
  }
}
