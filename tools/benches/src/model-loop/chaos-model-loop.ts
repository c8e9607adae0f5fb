/**
 * `npm run chaos:model-loop -- --trials 200 [--seed N] [--json]`: kills model-loop with SIGKILL at that many random
 * points while conversations run (see `chaos.ts`), then prints the table of what the log shows: trials, duplicates,
 * lost, stuck (and mismatched outcomes). The seed is printed so a run can be repeated. Exit code 1 when any count is
 * not 0.
 */
import {
  createDatabase,
  databaseUrl,
  adminDbUrl,
  benchDbName,
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
const seed = count('seed', Math.floor(Math.random() * 2 ** 31));
const json = flag('json');
const admin = adminDbUrl();
const dbName = benchDbName();
log(`chaos:model-loop: ${trials} kill points, seed ${seed} (repeat with --seed ${seed})`);
await createDatabase(admin, dbName);
try {
  const report = await runModelLoopChaos({
    natsUrl: natsUrl(),
    databaseUrl: databaseUrl(admin, dbName),
    trials,
    seed,
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
  ];
  printTable(rows);
  for (const p of report.problems) log(`  ${p}`);
  if (json) printJson({ bench: 'chaos:model-loop', seed, trials }, rows, { problems: report.problems });
  if (report.problems.length > 0) process.exitCode = 1;
} finally {
  await dropDatabase(admin, dbName);
}
