/**
 * One replay from start to end: for each context of the plan, its parts in order, each written whole (rows or
 * CloudEvents, one a line, as the archive wrote them) before the cursor moves on. No event is parsed or serialised
 * here. Shared by `ormuz replay`, `ormuz analyze` and `ormuz report`.
 */
import type { ContextName, StreamPositionV1 } from '@ormuz/contracts';
import type { ExportState } from './export-file.js';
import type { ReplayProgress } from './progress.js';
import { END_OF_MESSAGE, readExport, type ExportReaderOptions, type FetchExport } from './replayer.js';

/** Where parts go: the export file, or stdout. */
export interface ReplaySink {
  readonly state: Pick<ExportState, 'cursors' | 'events'>;
  append(data: Uint8Array, count: number, context: ContextName, cursor: StreamPositionV1 | 'done'): Promise<void>;
}

const NOTHING = new Uint8Array(0);

export async function runReplay(
  r: {
    readonly state: Pick<ExportState, 'queries' | 'fromSeq' | 'format'>;
    readonly fetch: FetchExport;
    readonly sink: ReplaySink;
    readonly progress?: ReplayProgress;
  } & ExportReaderOptions,
): Promise<number> {
  const { queries, fromSeq, format } = r.state;
  const as = format === 'cloudevents' ? 'cloudevents' : 'rows';
  for (const query of queries) {
    const context = query.context;
    const cursor = r.sink.state.cursors[context];
    if (cursor === 'done') continue;
    const after = cursor ?? (fromSeq > 1 ? { seq: fromSeq - 1, idx: END_OF_MESSAGE } : undefined);
    for await (const part of readExport(r.fetch, { ...query, as }, after, r)) {
      await r.sink.append(part.body, part.count, context, part.last);
      r.progress?.update(context, after?.seq ?? 0, part.last.seq, part.highSeq, r.sink.state.events);
    }
    await r.sink.append(NOTHING, 0, context, 'done');
  }
  return r.sink.state.events;
}

/** A sink with nothing to resume (stdout, a throwaway file): writes each part with `write` and counts. */
export class PlainSink implements ReplaySink {
  state: Pick<ExportState, 'cursors' | 'events'> = { cursors: {}, events: 0 };

  constructor(private readonly write: (data: Uint8Array) => Promise<unknown>) {}

  async append(
    data: Uint8Array,
    count: number,
    context: ContextName,
    cursor: StreamPositionV1 | 'done',
  ): Promise<void> {
    if (data.length) await this.write(data);
    this.state = { events: this.state.events + count, cursors: { ...this.state.cursors, [context]: cursor } };
  }
}

/** Writes to stdout, waiting while it is full. */
export async function writeStdout(data: Uint8Array): Promise<void> {
  if (!process.stdout.write(data)) await new Promise((resolve) => process.stdout.once('drain', resolve));
}
