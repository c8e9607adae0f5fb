import { cpus, loadavg } from 'node:os';
import { fmt } from './format.js';
import { now } from './stats.js';

/** One line of a bench's results table (and of its `--json` `results`). */
export interface BenchRow {
  id: string;
  measure: string;
  figure: string;
  baseline: string;
  ratio: number;
  /** The ratio column as printed; when absent, `ratio` with two decimals and `×` (blank when not finite). */
  ratioLabel?: string;
  target: string;
  verdict: 'PASS' | 'MISS' | 'info';
}

/** A line of the report, on stdout. */
export const log = (...parts: unknown[]): void => console.log(...parts);

/** A progress line, on stderr, so stdout stays the report (and `--json` stays its last line). */
export const progress = (msg: string): void => {
  process.stderr.write(`· ${msg}\n`);
};

/** Prints the results table: measure, figure, baseline (same run), ratio, target, verdict (PASS/MISS only). */
export function printTable(rows: readonly BenchRow[]): void {
  const head = ['measure', 'figure', 'baseline (same run)', 'ratio', 'target', ''];
  const cells = rows.map((r) => [
    r.measure,
    r.figure,
    r.baseline,
    r.ratioLabel ?? (Number.isFinite(r.ratio) ? `${fmt(r.ratio, 2)}×` : ''),
    r.target,
    r.verdict === 'info' ? '' : r.verdict,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) =>
    c
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  log(line(head));
  log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const c of cells) log(line(c));
}

/** Prints the `N PASS, M MISS` line under the table. */
export function printVerdicts(rows: readonly BenchRow[]): void {
  const misses = rows.filter((r) => r.verdict === 'MISS').length;
  log(`${rows.filter((r) => r.verdict === 'PASS').length} PASS, ${misses} MISS (informational; exit code stays 0)`);
}

/**
 * Prints the `--json` line: `head`'s keys in their order, then `results` (id, figure, baseline, ratio, target,
 * verdict of every row) and `detail`.
 */
export function printJson(head: Record<string, unknown>, rows: readonly BenchRow[], detail: unknown): void {
  log(
    JSON.stringify({
      ...head,
      results: rows.map(({ id, figure, baseline, ratio, target, verdict }) => ({
        id,
        figure,
        baseline,
        ratio,
        target,
        verdict,
      })),
      detail,
    }),
  );
}

/** The row a section that threw leaves in the table: its message, cut to `width` characters, as a MISS. */
export function errorRow(id: string, err: unknown, width = 60): BenchRow & { ratioLabel: string } {
  return {
    id,
    measure: `${id}: ERROR`,
    figure: String((err as Error).message ?? err).slice(0, width),
    baseline: '',
    ratio: Number.NaN,
    ratioLabel: '',
    target: '',
    verdict: 'MISS',
  };
}

/** What names a run in its report: the bench, its namespace, when it started (`now()`) and the 1-minute loadavg then. */
export interface RunHead {
  readonly bench: string;
  readonly title: string;
  readonly namespace: string;
  readonly startedMs: number;
  readonly load0: number;
}

/**
 * The report's end: a line naming the run (node, namespace, seconds, cores, loadavg(1m) at its start → now, as a busy
 * machine colours every figure), the table, the verdicts, and with `json` the `--json` line.
 */
export function printRunReport(head: RunHead, rows: readonly BenchRow[], detail: unknown, json: boolean): void {
  const seconds = (now() - head.startedMs) / 1000;
  const load1 = loadavg()[0]!;
  log('');
  log(
    `${head.title} — node ${process.version}, namespace ${head.namespace}, ${fmt(seconds, 1)} s, ` +
      `${cpus().length} cores, loadavg(1m) ${fmt(head.load0, 2)} → ${fmt(load1, 2)}`,
  );
  printTable(rows);
  printVerdicts(rows);
  if (json) {
    printJson(
      { bench: head.bench, node: process.version, namespace: head.namespace, seconds, loadavg: [head.load0, load1] },
      rows,
      detail,
    );
  }
}
