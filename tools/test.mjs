#!/usr/bin/env node
/**
 * `npm test`: Jest as native ES modules. The whole suite runs in two lanes at once, then the nemesis alone;
 * `ORMUZ_TEST_LANES=serial` runs it as one Jest process, one file at a time.
 *
 * With arguments that pick tests (a path, `-t`, `--selectProjects`, …), or with `ORMUZ_TEST_LANES=serial`, this is
 * plain Jest with the arguments given. With no arguments (or only output flags such as `--json --outputFile=F` and
 * `--ci`), it runs the suite as two Jest processes side by side, each one file at a time, and then the nemesis:
 *
 *   - `platform`: the end-to-end scenarios, which boot the six services as processes;
 *   - `in-process`: unit and integration tests (the crash tests included);
 *   - then `nemesis`: the chaos run, which kills nodes of a NATS cluster of its own and replicas of every service.
 *
 * Jest's own `--maxWorkers=2` would also use both cores, but it may boot two whole platforms at the same moment on a
 * two-core machine; the lanes never do. Every test is isolated by namespace and database, so the lanes could share one
 * NATS server, but JetStream answers its API one request at a time and the crash tests' storms of consumer requests
 * delayed the scenarios' service starts: when the tests run against the local servers (no `NATS_URL` given), the
 * in-process lane gets a NATS server of its own, started here from the machine's `nats-server` on a free port. Both
 * lanes share Postgres.
 *
 * The nemesis runs after both lanes because beside them it failed: on December 3, one lanes run in four failed when
 * policy could not start on the nemesis's three-node cluster ("no suitable peers for placement", five starts in a row)
 * while the other lane booted the scenarios' services. The cluster's recovery from a node kill needs the CPU the lanes
 * take; alone, as in the serial run, it has always passed. With it alone, the whole suite took 873 s where the serial
 * run takes about 1,200 s.
 *
 * On December 2, one start of the demo's services (in `test/e2e/demo.e2e.spec.ts`) hung in the lanes after connecting
 * to NATS. It has not come back since the in-process lane got a NATS server of its own; a stalled start names the phase
 * it waits on (service-kit's StartPhases) in `.ormuz/logs`.
 *
 * Each run's lines are prefixed with its name (its "done after" counts from the start of the suite); the exit code is
 * non-zero when any run fails or the nemesis was skipped because a signal stopped the lanes; `--json
 * --outputFile=F` writes one merged result (Jest's format, counts summed), as a single Jest run would.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
// One Jest process runs every file, and its heap grows with each (Jest's module registries): a fresh-clone run met
// the default limit (about 4 GB) two files from the end, so the limit is raised. Node only reserves what it uses.
const JEST_HEAP_MB = 12_288;
const JEST = [
  `--max-old-space-size=${JEST_HEAP_MB}`,
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
/** Run once both lanes have finished, with the machine to itself. */
const ALONE = { name: 'nemesis', args: ['--selectProjects', 'nemesis'] };

/** The signal that asked the run to stop, once one has. */
let stopping;

const args = process.argv.slice(2);
const plan = process.env.ORMUZ_TEST_LANES === 'serial' ? undefined : planRun(args);
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
  const ownNats = await startLaneNats(scratch);
  const run = (lane) => {
    const laneOutput = join(scratch, `${lane.name}.json`);
    const env = { ...process.env };
    if (lane.name === 'in-process' && ownNats) env.NATS_URL = ownNats.url;
    const child = spawn(
      process.execPath,
      [...JEST, ...lane.args, ...passThrough, '--json', `--outputFile=${laneOutput}`],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
        env,
      },
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
  let results;
  try {
    results = await Promise.all(LANES.map(run));
  } finally {
    await ownNats?.stop();
  }
  // Stopped (an interrupt, CI's timeout): the lanes were told to stop, and the nemesis must not start after them.
  if (stopping) console.error(`stopped by ${stopping}: the ${ALONE.name} run is skipped`);
  else results.push(await run(ALONE));

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
  const failed = stopping !== undefined || reports.some((r) => r.code !== 0 || !r.report);
  return failed ? 1 : 0;
}

/**
 * A JetStream server for the in-process lane, or undefined when the tests were given a `NATS_URL`, may run on
 * containers, or the machine has no `nats-server` (both lanes then share the one server, and a line says so).
 */
async function startLaneNats(scratch) {
  if (process.env.NATS_URL || process.env.ORMUZ_TESTCONTAINERS === '1') return undefined;
  // Where a Docker engine may answer and no URL is given, each lane's Jest decides about containers
  // (libs/testing/src/jest/global-setup.ts); a NATS_URL given to one lane would keep that lane off them.
  const docker = process.env.DOCKER_HOST || existsSync('/var/run/docker.sock');
  if (docker && !process.env.DATABASE_URL && process.env.ORMUZ_TESTCONTAINERS !== '0') {
    console.error('lanes: a Docker engine may answer; each lane starts its own test servers, or uses the local ones');
    return undefined;
  }
  const binary = ['/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server'].find(existsSync);
  if (!binary) {
    console.error('lanes: no nats-server binary found; both lanes use the local NATS server');
    return undefined;
  }
  const port = await freePort();
  const storeDir = join(scratch, 'nats');
  const server = spawn(binary, ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let exited = false;
  server.once('exit', () => (exited = true));
  const stderr = [];
  server.stderr.on('data', (chunk) => stderr.push(chunk));
  const deadline = Date.now() + 30_000;
  while (!(await answers(port))) {
    if (exited || Date.now() > deadline) {
      server.kill('SIGKILL');
      throw new Error(`the in-process lane's nats-server did not start on port ${port}: ${Buffer.concat(stderr)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => server.kill('SIGKILL'));
  console.error(`lanes: the in-process lane runs on its own NATS server, nats://127.0.0.1:${port}`);
  return {
    url: `nats://127.0.0.1:${port}`,
    stop: () =>
      new Promise((resolve) => {
        if (exited) return resolve();
        server.once('exit', resolve);
        server.kill('SIGTERM');
        setTimeout(() => server.kill('SIGKILL'), 5_000).unref();
      }),
  };
}

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/** True when a NATS server greets a connection on `port` (its INFO line). */
function answers(port) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('data', (data) => done(data.toString().startsWith('INFO')));
    socket.once('error', () => done(false));
  });
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
  const merged = { success: reports.length === LANES.length + 1, startTime: Infinity, testResults: [] };
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
      stopping ??= signal;
      for (const child of children) child.kill(signal);
    });
  }
}
