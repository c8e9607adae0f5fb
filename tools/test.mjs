#!/usr/bin/env node
/**
 * `npm test`: Jest as native ES modules, and the whole suite in two lanes at once.
 *
 * With arguments that pick tests (a path, `-t`, `--selectProjects`, …) this is plain Jest with those arguments. With
 * none (or only output flags such as `--json --outputFile=F` and `--ci`), it runs the suite as two Jest processes side by
 * side, each one file at a time:
 *
 *   - `platform`: the end-to-end scenarios, which boot the six services as processes;
 *   - `in-process`: unit and integration tests (the crash tests included).
 *
 * Jest's own `--maxWorkers=2` would also use both cores, but it may boot two whole platforms at the same moment on a
 * two-core machine; the lanes never do, and the platform lane's scenarios always run beside lighter work. Every test is
 * isolated by namespace and database, so the lanes share NATS and Postgres safely. `ORMUZ_TEST_LANES=serial` runs the
 * lanes one after the other instead (one Jest at a time, as before).
 *
 * Each lane's lines are prefixed with its name; the exit code is non-zero when either lane fails; `--json
 * --outputFile=F` writes one merged result (Jest's format, counts summed), as a single Jest run would.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const JEST = [
  '--experimental-vm-modules',
  '--no-warnings=ExperimentalWarning',
  join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'),
];

/** Flags that only shape the output or the run as a whole; anything else picks tests and means "plain Jest". */
const OUTPUT_FLAGS = new Set(['--ci', '--json', '--colors', '--verbose', '--silent', '--detectOpenHandles']);

const LANES = [
  { name: 'platform', args: ['--selectProjects', 'e2e'] },
  { name: 'in-process', args: ['--selectProjects', 'unit', 'integration'] },
];

const args = process.argv.slice(2);
const plan = planRun(args);
if (!plan) {
  const child = spawn(process.execPath, [...JEST, ...args], { cwd: ROOT, stdio: 'inherit' });
  forwardSignals([child]);
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
} else {
  process.exitCode = await runLanes(plan);
}

/**
 * `{ outputFile, passThrough }` when `args` run the whole suite (lanes apply), undefined when they pick tests.
 * `--outputFile` is taken out: each lane writes its own, merged at the end.
 */
function planRun(argv) {
  let outputFile;
  const passThrough = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg.startsWith('--outputFile=')) outputFile = arg.slice('--outputFile='.length);
    else if (arg === '--outputFile') outputFile = argv[++i];
    else if (OUTPUT_FLAGS.has(arg)) passThrough.push(arg);
    else return undefined;
  }
  return { outputFile, passThrough };
}

async function runLanes({ outputFile, passThrough }) {
  const scratch = mkdtempSync(join(tmpdir(), 'ormuz-test-lanes-'));
  const started = Date.now();
  const run = (lane) => {
    const laneOutput = join(scratch, `${lane.name}.json`);
    const child = spawn(
      process.execPath,
      [...JEST, ...lane.args, ...passThrough, '--json', `--outputFile=${laneOutput}`],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR } },
    );
    forwardSignals([child]);
    // `--json` puts the results on stdout as well: that copy is dropped; Jest's report (stderr) is shown prefixed.
    child.stdout.resume();
    prefixLines(child.stderr, `[${lane.name}] `);
    return new Promise((resolve) =>
      child.on('exit', (code, signal) =>
        resolve({ lane, code: code ?? 1, signal, seconds: (Date.now() - started) / 1000, laneOutput }),
      ),
    );
  };
  const results =
    process.env.ORMUZ_TEST_LANES === 'serial'
      ? await LANES.reduce(async (done, lane) => [...(await done), await run(lane)], Promise.resolve([]))
      : await Promise.all(LANES.map(run));

  const reports = results.map((r) => ({ ...r, report: readReport(r.laneOutput) }));
  for (const { lane, code, signal, seconds, report } of reports) {
    const counts = report
      ? `${report.numPassedTests} passed, ${report.numFailedTests} failed, ${report.numTotalTestSuites} files`
      : 'no results (Jest did not finish)';
    const end = signal ? `stopped by ${signal}` : `exit ${code}`;
    console.error(`lane ${lane.name}: ${counts}, ${end}, done after ${seconds.toFixed(0)} s`);
  }
  const merged = mergeReports(reports.map((r) => r.report).filter(Boolean));
  console.error(
    `Tests: ${merged.numPassedTests} passed, ${merged.numFailedTests} failed, ${merged.numTotalTests} total, ` +
      `in ${((Date.now() - started) / 1000).toFixed(0)} s`,
  );
  if (outputFile) writeFileSync(outputFile, JSON.stringify(merged));
  rmSync(scratch, { recursive: true, force: true });
  const failed = reports.some((r) => r.code !== 0 || !r.report);
  return failed ? 1 : 0;
}

function readReport(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

/** One result in Jest's `--json` shape: counts summed, files concatenated, success only if every lane succeeded. */
function mergeReports(reports) {
  const merged = { success: reports.length === LANES.length, startTime: Infinity, testResults: [] };
  for (const report of reports) {
    for (const [key, value] of Object.entries(report)) {
      if (key.startsWith('num') && typeof value === 'number') merged[key] = (merged[key] ?? 0) + value;
    }
    merged.success &&= report.success;
    merged.startTime = Math.min(merged.startTime, report.startTime);
    merged.testResults.push(...report.testResults);
  }
  for (const key of ['numPassedTests', 'numFailedTests', 'numTotalTests']) merged[key] ??= 0;
  if (!Number.isFinite(merged.startTime)) merged.startTime = Date.now();
  return merged;
}

function prefixLines(stream, prefix) {
  createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) =>
    process.stderr.write(prefix + line + '\n'),
  );
}

/** An interrupt or a CI timeout stops the lanes too. */
function forwardSignals(children) {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      for (const child of children) child.kill(signal);
    });
  }
}
