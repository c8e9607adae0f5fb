/**
 * Where `ormuz replay --out FILE` writes, and how a cut-short export is continued. Beside a regular output file a small
 * state file, `FILE.replay-state.json`, records the query and, after every page written, the bytes of the file that
 * hold whole events and the last event written of each context. Its presence marks the file as cut short; `--resume`
 * truncates the file to those bytes and asks for the events after those places. A finished export has no state file.
 *
 * Parquet cannot be appended to: its rows are gathered as NDJSON in `FILE.partial.ndjson` (resumed the same way) and
 * converted once complete. Outputs that are not regular files (`/dev/full`, a pipe) are written without state.
 */
import { constants, type FileHandle, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import type { ContextName, StreamPositionV1 } from '@ormuz/contracts';
import type { ContextQuery } from './replay-query.js';

export type ReplayFormat = 'ndjson' | 'cloudevents' | 'parquet';

/** What the state file holds. */
export interface ExportState {
  readonly version: 1;
  readonly format: ReplayFormat;
  /** The options as given, to refuse a `--resume` that asks for something else. */
  readonly options: Readonly<Record<string, unknown>>;
  /** The resolved queries (durations resolved once, when the export began). */
  readonly queries: readonly ContextQuery[];
  readonly fromSeq: number;
  /** Last event written per context; `done` once its context is read to the end. */
  readonly cursors: Partial<Record<ContextName, StreamPositionV1 | 'done'>>;
  /** Bytes of the data file holding whole events. */
  readonly bytes: number;
  readonly events: number;
}

export const statePath = (out: string): string => `${out}.replay-state.json`;
export const partialPath = (out: string): string => `${out}.partial.ndjson`;

/** An error writing the output; says what was kept. */
export class ExportWriteError extends Error {}

async function kind(path: string): Promise<'absent' | 'file' | 'other'> {
  try {
    return (await stat(path)).isFile() ? 'file' : 'other';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'absent';
    throw err;
  }
}

const describe = (err: unknown): string => {
  const e = err as NodeJS.ErrnoException;
  return e.code ? `${e.code}: ${e.message.replace(/^\w+: /, '')}` : String(err);
};

/** The data file of an export, with its state. */
export class ExportFile {
  private constructor(
    readonly out: string,
    /** Where the rows go: `out`, or the partial NDJSON of a Parquet export. */
    readonly dataPath: string,
    private readonly handle: FileHandle,
    /** False for outputs that are not regular files: no state, no resume. */
    private readonly tracked: boolean,
    private current: ExportState,
  ) {}

  get state(): ExportState {
    return this.current;
  }

  /**
   * Opens `out` for a new export (refused when it exists, unless `force`) or, with `resume`, for the export its
   * state file describes, which must have been started with the same `options`.
   */
  static async open(
    out: string,
    fresh: Omit<ExportState, 'cursors' | 'bytes' | 'events' | 'version'>,
    how: { readonly force?: boolean; readonly resume?: boolean },
  ): Promise<ExportFile> {
    const parquet = fresh.format === 'parquet';
    const dataPath = parquet ? partialPath(out) : out;
    const [outKind, stateKind] = await Promise.all([kind(out), kind(statePath(out))]);
    const tracked = outKind !== 'other';
    if (how.resume) {
      if (stateKind === 'absent') {
        throw new Error(
          outKind === 'file'
            ? `${out} is a finished export (no ${statePath(out)} beside it): nothing to resume. Use --force to export again.`
            : `Nothing to resume at ${out}: no ${statePath(out)}. Run the replay without --resume.`,
        );
      }
      const state = JSON.parse(await readFile(statePath(out), 'utf8')) as ExportState;
      if (JSON.stringify(state.options) !== JSON.stringify(fresh.options) || state.format !== fresh.format) {
        throw new Error(
          `${out} was started with ${JSON.stringify({ format: state.format, ...state.options })}; --resume continues ` +
            'that export only: give the same options, or --force to start over.',
        );
      }
      const handle = await open(dataPath, constants.O_RDWR).catch((err: unknown) => {
        throw new Error(`Cannot reopen ${dataPath} to resume it (${describe(err)}).`);
      });
      await handle.truncate(state.bytes);
      return new ExportFile(out, dataPath, handle, true, state);
    }
    if (tracked && !how.force && (outKind === 'file' || stateKind === 'file')) {
      throw new Error(
        stateKind === 'file'
          ? `${out} is a cut-short export (${statePath(out)} records where it stopped): --resume continues it, --force starts over.`
          : `${out} exists: pass --force to overwrite it, or choose another --out.`,
      );
    }
    const handle = await open(dataPath, tracked ? 'w' : 'a').catch((err: unknown) => {
      throw new Error(`Cannot write ${dataPath} (${describe(err)}).`);
    });
    const file = new ExportFile(out, dataPath, handle, tracked, {
      version: 1,
      ...fresh,
      cursors: {},
      bytes: 0,
      events: 0,
    });
    try {
      await file.saveState();
    } catch (err) {
      await file.abandon();
      throw new ExportWriteError(`Cannot write ${statePath(out)} (${describe(err)}); nothing was exported.`);
    }
    return file;
  }

  /** Appends whole events, then records that they and the cursor are on disk. */
  async append(
    bytes: Uint8Array,
    count: number,
    context: ContextName,
    cursor: StreamPositionV1 | 'done',
  ): Promise<void> {
    try {
      let written = 0;
      while (written < bytes.length) {
        const r = await this.handle.write(bytes, written, bytes.length - written, this.current.bytes + written);
        written += r.bytesWritten;
      }
    } catch (err) {
      throw await this.failed(err);
    }
    this.current = {
      ...this.current,
      bytes: this.current.bytes + bytes.length,
      events: this.current.events + count,
      cursors: { ...this.current.cursors, [context]: cursor },
    };
    await this.saveState().catch(async (err: unknown) => {
      throw await this.failed(err);
    });
  }

  /** The rows are complete: closes the data file; the state stays until {@link finish}. */
  async close(): Promise<void> {
    await this.handle.close();
  }

  /** The export is done: its state file goes, and so does the partial NDJSON of a Parquet export. */
  async finish(): Promise<void> {
    if (!this.tracked) return;
    await rm(statePath(this.out), { force: true });
    if (this.dataPath !== this.out) await rm(this.dataPath, { force: true });
  }

  /** Removes what a new export made before it wrote anything (its state could not be written). */
  private async abandon(): Promise<void> {
    await this.handle.close().catch(() => undefined);
    if (this.tracked) await rm(this.dataPath, { force: true });
  }

  private async saveState(): Promise<void> {
    if (!this.tracked) return;
    const path = statePath(this.out);
    await writeFile(`${path}.tmp`, `${JSON.stringify(this.current)}\n`);
    await rename(`${path}.tmp`, path);
  }

  private async failed(err: unknown): Promise<ExportWriteError> {
    await this.handle.close().catch(() => undefined);
    if (!this.tracked) return new ExportWriteError(`Writing ${this.out} failed (${describe(err)}).`);
    await rm(`${statePath(this.out)}.tmp`, { force: true });
    return new ExportWriteError(
      `Writing ${this.dataPath} failed (${describe(err)}). The ${this.current.events} events written before are kept, ` +
        `marked cut short by ${statePath(this.out)}: free space and run the same command with --resume, or delete both files.`,
    );
  }
}
