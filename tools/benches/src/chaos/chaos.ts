/**
 * `npm run chaos -- --seconds 120 [--devices 100] [--seed N] [--rate 10] [--json]`: the chaos suite. A load of calls
 * across tenants, agents and devices (low and high risk, the staged ones approved by a scripted owner) runs while a
 * nemesis kills service replicas with SIGKILL (two of each of policy, approvals, the device-bridge, audit and
 * model-loop), kills one node of the three-node NATS cluster and restarts it on its store, drops devices' connections
 * and reboots devices; then the checker reads the log, the device journals, every stream's append headers and
 * rebuilds of the read models (see `runner.ts`, `checker.ts`). Prints the table of anomalies (lost, run twice,
 * unexpected outcomes, stuck, diverged read models, sequence: two appends accepted on one expected sequence) with the
 * totals and the faults by target; exit code 1 on any anomaly. The seed repeats a run's schedule of faults and calls
 * (not the machine's timing).
 */
import {
  adminDbUrl,
  benchDbName,
  createDatabase,
  databaseUrl,
  dropDatabase,
  flag,
  log,
  option,
  printJson,
  printTable,
  progress,
  type BenchRow,
} from '../kit/index.js';
import { ANOMALY_KINDS, type AnomalyKind } from './checker.js';
import { runChaos, type ChaosReport } from './runner.js';

function count(name: string, fallback: number, least = 0): number {
  const raw = option(name);
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isSafeInteger(value) || value < least) {
    console.error(`--${name} ${raw} is not a whole number ≥ ${least}.`);
    process.exit(2);
  }
  return value;
}

const ANOMALY_NAMES: Readonly<Record<AnomalyKind, string>> = {
  lost: 'acknowledged submits lost',
  ranTwice: 'executions run twice',
  unexpected: 'outcomes without a device outcome (unexpected)',
  stuck: 'calls stuck past their deadline',
  diverged: 'read models diverging from a rebuild',
  sequence: 'messages accepted on a stale expected sequence, or stored twice',
};

/** The table: the anomalies (target 0), then the totals and the faults (information). */
export function reportRows(report: ChaosReport): BenchRow[] {
  const row = (id: string, measure: string, figure: number, target = ''): BenchRow => ({
    id,
    measure,
    figure: String(figure),
    baseline: '',
    ratio: Number.NaN,
    ratioLabel: '',
    target,
    verdict: target === '' ? 'info' : figure === 0 ? 'PASS' : 'MISS',
  });
  const { totals, anomalies } = report.verdict;
  return [
    ...ANOMALY_KINDS.map((kind) => row(kind, ANOMALY_NAMES[kind], anomalies[kind].length, '0')),
    ...Object.entries(totals).map(([k, v]) => row(`calls_${k}`, `calls ${k}`, v)),
    row('approved', 'staged calls approved by the owner', report.approved),
    ...Object.entries(report.faults).map(([target, n]) => row(`faults_${target}`, `faults: ${target}`, n)),
    ...Object.entries(report.selfExits).map(([name, n]) => row(`exits_${name}`, `exited by itself: ${name}`, n)),
  ];
}

const seconds = count('seconds', 120, 1);
const devices = count('devices', 100, 1);
const rate = count('rate', 10, 1);
const seed = count('seed', Math.floor(Math.random() * 2 ** 31));
const admin = adminDbUrl();
const dbName = benchDbName();
log(`chaos: ${seconds} s, ${devices} devices, ${rate} calls/s, seed ${seed} (repeat with --seed ${seed})`);
await createDatabase(admin, dbName);
try {
  const report = await runChaos({ databaseUrl: databaseUrl(admin, dbName), seconds, devices, rate, seed, progress });
  const rows = reportRows(report);
  printTable(rows);
  const problems = ANOMALY_KINDS.flatMap((kind) => report.verdict.anomalies[kind].map((a) => `${kind}: ${a}`));
  for (const p of problems.slice(0, 50)) log(`  ${p}`);
  if (problems.length > 50) log(`  … and ${problems.length - 50} more`);
  for (const e of report.submitErrors.slice(0, 10)) log(`  submit refused: ${e}`);
  if (flag('json'))
    printJson({ bench: 'chaos', seed, seconds, devices }, rows, { problems, submitErrors: report.submitErrors });
  if (problems.length > 0) process.exitCode = 1;
} finally {
  await dropDatabase(admin, dbName);
}
