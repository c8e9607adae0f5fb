/**
 * `ormuz replay` benchmark: how fast the CLI exports a tenant's history from the audit archive, beside the raw
 * JetStream ordered-consumer read of the same events in the same run, and whether its memory stays flat.
 *
 *   npm run bench:replay                         # table, 200,000 events
 *   npm run bench:replay -- --json               # table, then one JSON object on the last line
 *   npm run bench:replay -- --events 1000000     # the memory check over a million events
 *
 * Env: NATS_URL (default nats://127.0.0.1:4222), DATABASE_URL (an admin database the user may CREATE DATABASE from,
 * default postgres://postgres@127.0.0.1:5432/postgres). The run starts the audit service as a process on a random
 * namespace and a fresh database, seeds finished calls on the calls stream (tenant `acme`, and a tenth as many for
 * `globex`, which the replay must skip), waits until audit has archived them, then runs the built CLI as an analyst
 * would. Everything it creates is deleted at the end, also on failure or Ctrl-C.
 *
 * Measured (replay | raw baseline):
 *  1. NDJSON export of the whole tenant | an ordered consumer reading and parsing the tenant's events
 *  2. NDJSON export filtered by agent and type glob (half the events) | the same raw read
 *  3. Parquet export of the whole tenant (rows, then DuckDB's conversion) | the same raw read; target 100,000 events/s
 *  4. peak RSS of the CLI exporting every event | exporting the first tenth: flat means about the same
 * The CLI's own elapsed time (its --json summary) is used, so node's start-up is not counted.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { CONTEXTS, tenantFilter, type ContextName } from '@ormuz/contracts';
import { connectNats, streamName } from '@ormuz/event-log';
import { callRpc } from '@ormuz/service-kit';
import {
  bearerFor,
  EVENTS_PER_SEEDED_CALL,
  randomNamespace,
  seedCallHistory,
  testToken,
  waitFor,
} from '@ormuz/testing';
import {
  adminDbUrl,
  benchDbName,
  bounded,
  cleanUpOnSignals,
  createDatabase,
  databaseUrl,
  dropDatabase,
  errorRow,
  flag,
  fmt,
  fmtRate,
  natsUrl,
  now,
  option,
  printJson,
  printTable,
  printVerdicts,
  progress,
  startWatchdog,
  type BenchRow,
} from '../kit/index.js';

const ROOT = join(import.meta.dirname, '..', '..', '..', '..');
const argEvents = process.argv[process.argv.indexOf('--events') + 1];
const EVENTS = Number(option('events') ?? (process.argv.includes('--events') ? argEvents : 200_000));
const CALLS = Math.ceil(EVENTS / EVENTS_PER_SEEDED_CALL);
const NDJSON_TARGET = 0.5;
const PARQUET_TARGET = 100_000;
/** Peak RSS over all events within this factor of the peak over a tenth: flat. */
const FLAT_FACTOR = 1.5;

interface CliRun {
  readonly events: number;
  readonly seconds: number;
  readonly maxRssMb: number;
}

async function main(): Promise<void> {
  const json = flag('json');
  const ns = randomNamespace('bench_replay');
  const adminUrl = adminDbUrl();
  const dbName = benchDbName();
  const dir = mkdtempSync(join(tmpdir(), 'ormuz-bench-replay-'));
  const nc = await connectNats({ url: natsUrl(), name: 'bench-replay' });
  const jsm = await jetstreamManager(nc);
  await createDatabase(adminUrl, dbName);
  const audit = spawn(process.execPath, [join(ROOT, 'services/audit/dist/main.js')], {
    env: {
      ...process.env,
      NATS_URL: natsUrl(),
      DATABASE_URL: databaseUrl(adminUrl, dbName),
      ORMUZ_NAMESPACE: ns,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const cleanup = async () => {
    killCliRuns();
    audit.kill('SIGKILL');
    for (const context of Object.keys(CONTEXTS) as ContextName[]) {
      await bounded(`delete ${context} stream`, jsm.streams.delete(streamName(ns, context)));
    }
    await bounded('close NATS', nc.close());
    await bounded('drop database', dropDatabase(adminUrl, dbName), 15_000);
    rmSync(dir, { recursive: true, force: true });
  };
  cleanUpOnSignals(cleanup);
  const watchdog = startWatchdog(Math.max(3_600_000, EVENTS * 15), cleanup);
  const rows: BenchRow[] = [];
  const detail: Record<string, unknown> = { events: EVENTS };
  try {
    const platform = await bearerFor('*');
    await waitFor(
      () =>
        callRpc(nc, ns, 'audit.health', {}).then(
          () => true,
          () => false,
        ),
      {
        timeoutMs: 60_000,
        message: 'the audit service to answer',
      },
    );
    progress(`seeding ${EVENTS} events (${CALLS} calls of acme, ${Math.ceil(CALLS / 10)} of globex)`);
    const js = jetstream(nc);
    const seed = {
      agents: ['agent-a', 'agent-b'],
      devices: ['phone-1', 'phone-2'],
      start: new Date(Date.now() - 86_400_000),
    };
    const t0 = now();
    await seedCallHistory(js, ns, { ...seed, tenant: 'acme', calls: CALLS });
    await seedCallHistory(js, ns, { ...seed, tenant: 'globex', calls: Math.ceil(CALLS / 10) });
    progress(`seeded in ${fmt((now() - t0) / 1000, 1)} s; waiting for audit to archive them`);
    await waitFor(
      async () => {
        // Every projection, not only the archive's: one still catching up would compete with the replays measured.
        const { projections } = await callRpc(nc, ns, 'audit.projections', {}, { credential: platform });
        return projections.every((p) => p.checkpoint >= p.stream_last_seq);
      },
      // Audit archives a few thousand events a second on an idle machine, far fewer on a busy one.
      { timeoutMs: Math.max(1_800_000, EVENTS * 10), intervalMs: 1000, message: 'audit to archive the seeded events' },
    );
    progress(`archived after ${fmt((now() - t0) / 1000, 1)} s`);

    const raw = await rawRead(js, ns);
    const rawRate = raw.events / raw.seconds;
    detail.raw = raw;
    const token = await testToken({ tenant: 'acme', roles: ['analyst'], subject: 'bench@acme' });
    const cli = (out: string, ...args: string[]) =>
      runCli([
        '--json',
        '--nats',
        natsUrl(),
        '--namespace',
        ns,
        '--auth-token',
        token,
        'replay',
        '--tenant',
        'acme',
        '--out',
        join(dir, out),
        ...args,
      ]);

    const ndjson = await cli('all.ndjson');
    const filtered = await cli('agent.ndjson', '--agent', 'agent-a', '--type', 'ormuz.toolcall.*');
    const parquet = await cli('all.parquet', '--format', 'parquet');
    const tenthSeq = String(Math.ceil((CALLS * EVENTS_PER_SEEDED_CALL) / 10));
    const tenth = await cli('tenth.ndjson', '--context', 'calls', '--to', tenthSeq);
    const tenthParquet = await cli('tenth.parquet', '--context', 'calls', '--to', tenthSeq, '--format', 'parquet');
    Object.assign(detail, { ndjson, filtered, parquet, tenth, tenthParquet });

    const rateRow = (id: string, measure: string, run: CliRun, target: string, pass: boolean): BenchRow => {
      const rate = run.events / run.seconds;
      return {
        id,
        measure,
        figure: fmtRate(rate),
        baseline: `${fmtRate(rawRate)} raw`,
        ratio: rate / rawRate,
        target,
        verdict: pass ? 'PASS' : 'MISS',
      };
    };
    const rate = (r: CliRun) => r.events / r.seconds;
    rows.push(
      rateRow(
        'replay-ndjson',
        `NDJSON, all ${ndjson.events} events`,
        ndjson,
        `≥ ${NDJSON_TARGET}× raw`,
        rate(ndjson) >= NDJSON_TARGET * rawRate,
      ),
      rateRow(
        'replay-ndjson-filtered',
        `NDJSON, --agent --type (${filtered.events} events)`,
        filtered,
        `≥ ${NDJSON_TARGET}× raw`,
        rate(filtered) >= NDJSON_TARGET * rawRate,
      ),
      rateRow(
        'replay-parquet',
        `Parquet, all ${parquet.events} events`,
        parquet,
        `≥ ${fmtRate(PARQUET_TARGET)}`,
        rate(parquet) >= PARQUET_TARGET,
      ),
    );
    for (const [id, all, part] of [
      ['replay-memory-ndjson', ndjson, tenth],
      ['replay-memory-parquet', parquet, tenthParquet],
    ] as const) {
      const ratio = all.maxRssMb / part.maxRssMb;
      rows.push({
        id,
        measure: `peak RSS, ${all.events} events (${id.endsWith('parquet') ? 'Parquet' : 'NDJSON'})`,
        figure: `${fmt(all.maxRssMb, 0)} MB`,
        baseline: `${fmt(part.maxRssMb, 0)} MB for ${part.events}`,
        ratio,
        target: `≤ ${FLAT_FACTOR}× (flat)`,
        verdict: ratio <= FLAT_FACTOR ? 'PASS' : 'MISS',
      });
    }
  } catch (err) {
    rows.push(errorRow('replay', err));
  } finally {
    clearTimeout(watchdog);
    await cleanup();
  }
  printTable(rows);
  printVerdicts(rows);
  if (json) printJson({ bench: 'replay', events: EVENTS }, rows, detail);
}

/** The baseline: an ordered consumer reading the tenant's calls and parsing every message, as fast as it can. */
async function rawRead(js: ReturnType<typeof jetstream>, ns: string): Promise<{ events: number; seconds: number }> {
  const t0 = now();
  const consumer = await js.consumers.get(streamName(ns, 'calls'), {
    filter_subjects: tenantFilter(ns, 'calls', 'acme'),
    deliver_policy: DeliverPolicy.All,
  });
  const messages = await consumer.consume({ max_messages: 2048 });
  let events = 0;
  for await (const m of messages) {
    const parsed = JSON.parse(new TextDecoder().decode(m.data)) as unknown;
    events += Array.isArray(parsed) ? parsed.length : 1;
    if (m.info.pending === 0) break;
  }
  await messages.close();
  return { events, seconds: (now() - t0) / 1000 };
}

/**
 * The CLI runs under way: a cleanup (SIGINT, SIGTERM, the watchdog) stops them with the services they read from. Each
 * is a process group of its own, which a terminal's Ctrl-C reaches only through that cleanup.
 */
const cliRuns = new Set<number>();

/** Kills every CLI run under way (each is its own process group: `time` and the CLI beneath it). */
function killCliRuns(): void {
  for (const pgid of cliRuns) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

/** Runs the built CLI under GNU time; returns its summary's events and seconds, and its peak RSS. */
function runCli(args: readonly string[]): Promise<CliRun> {
  progress(`ormuz ${args.slice(args.indexOf('replay')).join(' ')}`);
  return new Promise((resolve, reject) => {
    const child = spawn(
      '/usr/bin/time',
      ['-f', 'maxrss_kb=%M', process.execPath, join(ROOT, 'tools/cli/dist/main.js'), ...args],
      { stdio: ['ignore', 'pipe', 'pipe'], detached: true },
    );
    if (child.pid !== undefined) cliRuns.add(child.pid);
    child.on('exit', () => child.pid !== undefined && cliRuns.delete(child.pid));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      const rss = /maxrss_kb=(\d+)/.exec(stderr);
      if (code !== 0 || !rss) return reject(new Error(`ormuz replay exited ${code}: ${stdout}${stderr}`));
      const summary = JSON.parse(stdout.trim().split('\n').at(-1)!) as { events: number; seconds: number };
      resolve({ events: summary.events, seconds: summary.seconds, maxRssMb: Number(rss[1]) / 1024 });
    });
  });
}

await main();
