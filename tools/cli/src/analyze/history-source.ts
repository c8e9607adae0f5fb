/**
 * Where `ormuz analyze` and `ormuz report` read the history: an export file (`--input`), or a live replay of a tenant's
 * archived events (`--tenant` with replay's range options), gathered as replay rows in a private temporary file and
 * removed once loaded. Either way the result is one {@link HistoryDatabase}.
 */
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { identifier, type CliContext } from '../context.js';
import { addReplayRangeOptions, REPLAY_RANGE_KEYS } from '../replay/replay-options.js';
import { planReplay, type ReplayOptions } from '../replay/replay-query.js';
import { PlainSink, runReplay } from '../replay/replay-run.js';
import type { HistoryDatabase } from './history-database.js';

export type HistorySourceOptions = Partial<ReplayOptions> & { readonly input?: string };

/** Adds `--input FILE`, `--tenant` and replay's range options to `command`. */
export function addHistorySourceOptions(command: Command): Command {
  command
    .option('--input <file>', 'an export of ormuz replay (Parquet, or NDJSON rows)')
    .option(
      '--tenant <tenant>',
      "replay this tenant's archived events instead of reading a file",
      identifier('--tenant'),
    );
  return addReplayRangeOptions(command);
}

/** Opens the history the options name; exactly one of `--input` and `--tenant`. */
export async function openHistory(o: HistorySourceOptions, c: CliContext): Promise<HistoryDatabase> {
  // DuckDB is loaded by the commands that use it only.
  const { HistoryDatabase } = await import('./history-database.js');
  if (o.input !== undefined) {
    if (o.tenant !== undefined) throw new Error('--input reads a file and --tenant replays the archive: give one.');
    const range = REPLAY_RANGE_KEYS.filter((k) => o[k] !== undefined);
    if (range.length) {
      throw new Error(
        `${range.map((k) => `--${k}`).join(', ')} select what a replay reads; with --input, filter in SQL instead.`,
      );
    }
    return HistoryDatabase.load(o.input);
  }
  if (o.tenant === undefined)
    throw new Error('Say which history: --input FILE (an export) or --tenant TENANT (a replay).');
  const plan = planReplay({ ...o, tenant: o.tenant });
  const dir = await mkdtemp(join(tmpdir(), 'ormuz-analyze-'));
  try {
    const rows = join(dir, 'rows.ndjson');
    const handle = await open(rows, 'wx', 0o600);
    try {
      await runReplay({
        state: { ...plan, format: 'ndjson' },
        fetch: (request) => c.stream('audit.export', request),
        // Nothing to resume: the file is thrown away if the replay fails.
        sink: new PlainSink((data) => handle.write(data)),
      });
    } finally {
      await handle.close();
    }
    return await HistoryDatabase.load(rows);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
