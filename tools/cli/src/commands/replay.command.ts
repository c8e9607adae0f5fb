import type { Command } from 'commander';
import { AUDIT_EXPORT_MAX_LIMIT, type AuditExportRequestV1 } from '@ormuz/contracts';
import { identifier, type CliContext } from '../context.js';
import { ExportFile, ExportWriteError, statePath, type ReplayFormat } from '../replay/export-file.js';
import { ReplayProgress } from '../replay/progress.js';
import { addReplayRangeOptions, REPLAY_RANGE_KEYS } from '../replay/replay-options.js';
import { planReplay } from '../replay/replay-query.js';
import { PlainSink, runReplay, writeStdout } from '../replay/replay-run.js';

const FORMATS: readonly ReplayFormat[] = ['ndjson', 'cloudevents', 'parquet'];

interface ReplayCommandOptions {
  tenant: string;
  from?: string;
  to?: string;
  context?: string;
  call?: string;
  agent?: string;
  device?: string;
  type?: string[];
  format: string;
  out?: string;
  force?: boolean;
  resume?: boolean;
  pageSize?: string;
  partTimeout: string;
}

/**
 * Shortest `--part-timeout`, in seconds: below it a busy archive's first part may not come in time, and every request
 * sent again leaves the one before running in the archive until it ends.
 */
const MIN_PART_TIMEOUT_S = 1;
/** Longest `--part-timeout`, in seconds. */
const MAX_PART_TIMEOUT_S = 3600;

/**
 * `ormuz replay`: one tenant's events from the audit archive (`audit.export`), filtered there in SQL, written as NDJSON
 * rows, NDJSON CloudEvents or Parquet, part by part so memory stays flat; `--resume` continues a cut-short export
 * (docs/decisions/0028). Analysts, operators and admins of the tenant may run it.
 */
export function registerReplayCommand(program: Command, ctx: () => CliContext): void {
  const command = program
    .command('replay')
    .description("export a tenant's events from the audit archive, filtered, as NDJSON, CloudEvents or Parquet")
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'));
  addReplayRangeOptions(command)
    .option('--format <format>', `${FORMATS.join(' | ')}`, 'ndjson')
    .option('--out <file>', 'write to this file (default stdout; required for parquet)')
    .option('--force', 'overwrite an existing --out file')
    .option('--resume', 'continue the cut-short export at --out, with the options it was started with')
    .option(
      '--page-size <n>',
      `read n events per archive request, one request after another (1 to ${AUDIT_EXPORT_MAX_LIMIT}); by default ` +
        'the range is read in windows, two at a time',
    )
    .option(
      '--part-timeout <seconds>',
      'how long the archive may stay silent, before the first part of an answer or between two, before the request is ' +
        'sent again from the last part written (the archive restarted, or its connection was cut)',
      '30',
    )
    .action(async (o: ReplayCommandOptions) => {
      const c = ctx();
      const format = o.format as ReplayFormat;
      if (!FORMATS.includes(format)) throw new Error(`--format ${o.format}: use one of ${FORMATS.join(', ')}.`);
      if (format === 'parquet' && !o.out) throw new Error('--format parquet writes a file: add --out FILE.parquet.');
      if ((o.force || o.resume) && !o.out) throw new Error('--force and --resume are about an --out file; add --out.');
      if (o.force && o.resume) throw new Error('--force starts over and --resume continues: choose one.');
      const limit = o.pageSize === undefined ? undefined : Number(o.pageSize);
      if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= AUDIT_EXPORT_MAX_LIMIT))
        throw new Error(`--page-size takes a whole number from 1 to ${AUDIT_EXPORT_MAX_LIMIT}.`);
      const partTimeout = Number(o.partTimeout);
      if (!(partTimeout >= MIN_PART_TIMEOUT_S && partTimeout <= MAX_PART_TIMEOUT_S))
        throw new Error(
          `--part-timeout takes a number of seconds from ${MIN_PART_TIMEOUT_S} to ${MAX_PART_TIMEOUT_S}.`,
        );
      const idleMs = Math.round(partTimeout * 1000);
      // Asking again must outlast one wait for a silent archive.
      const patienceMs = Math.max(60_000, 2 * idleMs);
      const options = Object.fromEntries(
        (['tenant', ...REPLAY_RANGE_KEYS] as const).filter((k) => o[k] !== undefined).map((k) => [k, o[k]]),
      );
      const plan = planReplay(o);
      const json = c.options.json;
      const fetch = (request: AuditExportRequestV1) => c.stream('audit.export', request, idleMs);
      const onRetry = (err: Error, attempt: number) => {
        if (!json && attempt === 1) process.stderr.write(`ormuz: ${err.message}; asking the archive again…\n`);
      };
      if (!o.out) {
        const sink = new PlainSink(writeStdout);
        await runReplay({ state: { ...plan, format }, fetch, sink, limit, patienceMs, onRetry });
        return;
      }
      const started = Date.now();
      const file = await ExportFile.open(o.out, { format, options, ...plan }, { force: o.force, resume: o.resume });
      // DuckDB loads here, for the one format that needs it, not with every CLI command, while the rows are read.
      const converter =
        format === 'parquet' ? import('../replay/parquet.js').then((m) => m.ParquetConverter.open()) : undefined;
      // Awaited below; a replay that fails first must not leave its failure unhandled.
      converter?.catch(() => undefined);
      try {
        const progress = process.stderr.isTTY && !json ? new ReplayProgress(process.stderr) : undefined;
        const events = await runReplay({
          state: file.state,
          fetch,
          sink: file,
          progress,
          limit,
          patienceMs,
          onRetry,
        }).catch(async (err: unknown) => {
          if (err instanceof ExportWriteError) throw err;
          await file.close().catch(() => undefined);
          const e = err as Error;
          e.message +=
            ` The replay stopped after ${file.state.events} events, kept in ${file.dataPath} and marked cut short by ` +
            `${statePath(o.out!)}: run the same command with --resume to continue.`;
          throw e;
        });
        await file.close();
        if (converter) await (await converter).convert(file.dataPath, o.out);
        await file.finish();
        progress?.done(events);
        const seconds = (Date.now() - started) / 1000;
        c.print(
          { out: o.out, format, events, seconds, resumed: Boolean(o.resume) },
          (d: { events: number }) => `${d.events} events written to ${o.out} (${format})`,
        );
      } finally {
        await converter?.then((open) => open.close()).catch(() => undefined);
      }
    });
}
