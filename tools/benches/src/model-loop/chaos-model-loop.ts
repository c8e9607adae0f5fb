/**
 * `npm run chaos:model-loop -- --trials 200 [--seed N] [--json]`: kills model-loop with SIGKILL at that many random
 * points while conversations run (see `chaos.ts`), then prints the table of what the log shows: trials, duplicates,
 * lost, stuck (and mismatched outcomes). The seed is printed so a run can be repeated. Exit code 1 when any count is
 * not 0. `--replicas 2` runs model-loop and audit as two processes each and kills the holder of each one's lease
 * instead (decision 0033), adding the archive's verdict and the hand-over times (kill to lease taken, to consumers
 * running).
 */
import {
  createDatabase,
  databaseUrl,
  adminDbUrl,
  benchDbName,
  cleanUpOnSignals,
  dropDatabase,
  flag,
  log,
  natsUrl,
  option,
  printJson,
  printTable,
  progress,
  type BenchRow,
} from '../kit/index.js';
import { runModelLoopChaos } from './chaos.js';

function count(name: string, fallback: number): number {
  const raw = option(name);
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) {
    console.error(`--${name} ${raw} is not a whole number ≥ 0.`);
    process.exit(2);
  }
  return value;
}

const trials = count('trials', 20);
const replicas = Math.max(1, count('replicas', 1));
const seed = count('seed', Math.floor(Math.random() * 2 ** 31));
const json = flag('json');
const admin = adminDbUrl();
const dbName = benchDbName();
log(`chaos:model-loop: ${trials} kill points, seed ${seed} (repeat with --seed ${seed})`);
// Ctrl-C or SIGTERM: the run kills what it started and tears down, then the database goes.
const interrupt = new AbortController();

async function main(): Promise<void> {
  await createDatabase(admin, dbName);
  try {
    const report = await runModelLoopChaos({
      signal: interrupt.signal,
      natsUrl: natsUrl(),
      databaseUrl: databaseUrl(admin, dbName),
      trials,
      seed,
      replicas,
      progress,
    });
    const row = (id: string, measure: string, figure: number, target: string, pass: boolean): BenchRow => ({
      id,
      measure,
      figure: String(figure),
      baseline: '',
      ratio: Number.NaN,
      ratioLabel: '',
      target,
      verdict: pass ? 'PASS' : 'MISS',
    });
    const rows: BenchRow[] = [
      { ...row('trials', 'trials (kill -9 of model-loop)', report.trials, '', true), verdict: 'info' },
      { ...row('conversations', 'conversations', report.conversations, '', true), verdict: 'info' },
      { ...row('tool_calls', 'tool calls', report.toolCalls, '', true), verdict: 'info' },
      row('duplicates', 'duplicates', report.duplicates, '0', report.duplicates === 0),
      row('lost', 'lost', report.lost, '0', report.lost === 0),
      row('stuck', 'stuck', report.stuck, '0', report.stuck === 0),
      row('mismatched', 'outcomes not as they happened', report.mismatched, '0', report.mismatched === 0),
      row('miscounted', "tenant's day not as the log counts it", report.miscounted, '0', report.miscounted === 0),
    ];
    if (replicas > 1) {
      rows.push(
        row('unarchived', 'events not archived as on the log', report.unarchived, '0', report.unarchived === 0),
      );
      for (const service of ['model-loop', 'audit']) {
        const of = report.handovers.filter((h) => h.service === service);
        const lease = of.map((h) => h.leaseMs).sort((x, y) => x - y);
        const resumed = of.map((h) => h.resumedMs).sort((x, y) => x - y);
        const median = (xs: number[]) => xs[Math.floor(xs.length / 2)] ?? Number.NaN;
        rows.push(
          {
            ...row(
              `${service}_lease_ms`,
              `${service}: kill -9 to lease taken, median (max ${lease.at(-1)}) ms`,
              median(lease),
              '',
              true,
            ),
            verdict: 'info',
          },
          {
            ...row(
              `${service}_resumed_ms`,
              `${service}: kill -9 to consumers running, median (max ${resumed.at(-1)}) ms`,
              median(resumed),
              '',
              true,
            ),
            verdict: 'info',
          },
        );
      }
    }
    printTable(rows);
    for (const p of report.problems) log(`  ${p}`);
    if (json) printJson({ bench: 'chaos:model-loop', seed, trials }, rows, { problems: report.problems });
    if (report.problems.length > 0) process.exitCode = 1;
  } finally {
    await dropDatabase(admin, dbName);
  }
}

const finished = main();
cleanUpOnSignals(async () => {
  interrupt.abort();
  await finished.catch(() => undefined);
});
await finished;
