/**
 * kill -9 of the audit service while `ormuz replay` reads from it. The compiled service (as in production) answers the
 * export; it is killed with SIGKILL while parts are on their way, then started again. The replay must end with exactly
 * the bytes of an uncut export: no event lost in the cut-off reply, none written twice when the request is sent again
 * from the last part kept.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { connectNats } from '@ormuz/event-log';
import { commandSubject, type AuditExportRequestV1 } from '@ormuz/contracts';
import {
  createTestDatabase,
  EVENTS_PER_SEEDED_CALL,
  randomNamespace,
  seedCallHistory,
  testEnv,
  testToken,
  waitFor,
  type TestDatabase,
} from '@ormuz/testing';
import { ndjsonRows } from '../../tools/cli/src/replay/duckdb-sql.js';
import { spawnService, waitHealthy, type ServiceProcess } from '../../tools/cli/src/services.js';
import { waitForArchive } from './support/wait-for-archive.js';
import { cliEntry, exitWithin, killAll, spawnTracked } from './support/processes.js';

const CALLS = 4000;
const EVENTS = CALLS * EVENTS_PER_SEEDED_CALL;

describe('ormuz replay across a kill -9 of the audit service', () => {
  const ns = randomNamespace('replaykill');
  const dir = mkdtempSync(join(tmpdir(), 'ormuz-replay-kill-'));
  let nc: NatsConnection;
  let database: TestDatabase;
  let audit: ServiceProcess | undefined;
  let analyst: string;
  let full: string;
  const asked: { readonly at: number; readonly body: AuditExportRequestV1 }[] = [];

  const path = (name: string) => join(dir, name);
  const lineCount = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').length - 1 : 0);

  function spawnOrmuz(args: readonly string[]) {
    const cli = [cliEntry(), '--nats', testEnv().natsUrl, '--namespace', ns, '--auth-token', analyst, ...args];
    return spawnTracked(process.execPath, cli);
  }

  async function startAudit(): Promise<void> {
    const env = { NATS_URL: testEnv().natsUrl, DATABASE_URL: database.url, ORMUZ_NAMESPACE: ns, LOG_LEVEL: 'warn' };
    audit = spawnService('audit', env, join(dir, 'logs'));
    await waitHealthy(nc, ns, [audit]);
  }

  async function killAudit(): Promise<void> {
    const dead = audit!.child;
    if (dead.exitCode !== null || dead.signalCode !== null) return;
    const exited = new Promise((resolve) => dead.once('exit', resolve));
    dead.kill('SIGKILL');
    await exited;
  }

  /** Fails with the first line that differs, not with two copies of a 10 MB export. */
  function expectUncut(file: string): void {
    const got = readFileSync(file, 'utf8');
    if (got === full) return;
    const a = got.split('\n');
    const b = full.split('\n');
    let at = 0;
    while (a[at] === b[at]) at++;
    expect({ lines: a.length - 1, firstDifferentLine: at + 1, got: a[at], uncut: b[at] }).toEqual({
      lines: EVENTS,
      firstDifferentLine: null,
    });
  }

  beforeAll(async () => {
    nc = await connectNats({ url: testEnv().natsUrl, name: 'replay-kill-test' });
    database = await createTestDatabase();
    await startAudit();
    const seed = {
      agents: ['agent-a', 'agent-b'],
      devices: ['phone-1', 'phone-2'],
      start: new Date(Date.now() - 3_600_000),
    };
    await seedCallHistory(jetstream(nc), ns, { ...seed, tenant: 'acme', calls: CALLS });
    await waitForArchive(nc, ns, { timeoutMs: 120_000, intervalMs: 250 });
    analyst = await testToken({ tenant: 'acme', roles: ['analyst'], subject: 'ana@acme' });
    // A copy of every export request, beside audit's own subscription: where a request sent after a kill starts.
    const requests = nc.subscribe(commandSubject(ns, 'audit', 'export'));
    void (async () => {
      for await (const m of requests) asked.push({ at: Date.now(), body: m.json<AuditExportRequestV1>() });
    })();
    const uncut = spawnOrmuz(['--json', 'replay', '--tenant', 'acme', '--out', path('full.ndjson')]);
    expect(await exitWithin(uncut, 60_000, 'the uncut replay')).toMatchObject({ code: 0 });
    full = readFileSync(path('full.ndjson'), 'utf8');
    expect(full.split('\n').length - 1).toBe(EVENTS);
  }, 240_000);

  afterAll(async () => {
    await killAll();
    audit?.child.kill('SIGKILL');
    await nc?.close();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  /** What one replay across a kill showed. */
  interface KillRun {
    /** False when the machine was too slow for the kill to land mid-export (the run must still end uncut). */
    readonly conclusive: boolean;
    /** Lines written when the replay asked again after the kill. */
    readonly written: number;
    readonly killedAt: number;
  }

  /**
   * Starts a replay; past its first lines (in windows, the first is a one-event probe), freezes audit with SIGSTOP so
   * that it stops in the middle of answering, and kills it with SIGKILL. Once the replay has noticed the silence and
   * asks again, audit starts again, and the replay must finish with nothing left to resume.
   */
  async function replayAcrossKill(out: string, args: readonly string[]): Promise<KillRun> {
    // A Parquet export gathers its rows in NDJSON beside the output until they are all there.
    const rows = args.includes('parquet') ? `${out}.partial.ndjson` : out;
    const replay = spawnOrmuz(['replay', '--tenant', 'acme', '--out', out, '--part-timeout', '2', ...args]);
    const retried = (text: string) => text.includes('asking the archive again');
    await waitFor(() => replay.hasExited() || (existsSync(rows) && statSync(rows).size > 4096), {
      timeoutMs: 60_000,
      intervalMs: 2,
      message: 'the replay to write its first parts',
    });
    let run: KillRun = { conclusive: false, written: 0, killedAt: Date.now() };
    if (!replay.hasExited()) {
      try {
        audit!.child.kill('SIGSTOP');
        await killAudit();
        const killedAt = Date.now();
        const before = replay.stderr().length;
        await waitFor(() => replay.hasExited() || retried(replay.stderr().slice(before)), {
          timeoutMs: 30_000,
          message: 'the replay to ask the archive again',
        });
        // Finished from parts already on their way, or asking again before the kill: the kill proved nothing.
        const conclusive = !replay.hasExited() && !retried(replay.stderr().slice(0, before));
        run = { conclusive, written: lineCount(rows), killedAt };
      } finally {
        await killAudit();
        await startAudit();
      }
    }
    const { code } = await exitWithin(replay, 90_000, 'the replay across the kill');
    expect({ code, stderr: replay.stderr() }).toMatchObject({ code: 0 });
    expect(existsSync(`${out}.replay-state.json`)).toBe(false);
    if (run.conclusive) expect(run.written).toBeLessThan(EVENTS);
    return run;
  }

  /** Tries a kill up to three times, until one lands mid-export as `landed` says; each run must end uncut. */
  async function killUntilItLands(
    name: string,
    args: readonly string[],
    check: (out: string) => Promise<void> | void,
    landed: (run: KillRun) => boolean = () => true,
  ): Promise<KillRun> {
    for (let attempt = 1; attempt <= 3; attempt++) {
      const out = path(`${attempt}-${name}`);
      const run = await replayAcrossKill(out, args);
      await check(out);
      if (run.conclusive && landed(run)) return run;
    }
    throw new Error(`In three runs, no kill of audit landed in the middle of the ${name} export.`);
  }

  it('asks again from the last part written when a reply is cut off, and loses and repeats nothing', async () => {
    const page = 10_000;
    const events = full.trimEnd().split('\n');
    // The kill must cut a reply after some of its parts: what was written then ends inside a page.
    const run = await killUntilItLands(
      'paged.ndjson',
      ['--page-size', String(page)],
      expectUncut,
      (r) => r.written % page !== 0,
    );
    // The first request after the kill goes on after the last event written, not from the start of the page.
    const { seq, idx } = JSON.parse(events[run.written - 1]!) as { seq: number; idx: number };
    expect(asked.find((r) => r.at >= run.killedAt)?.body.after).toEqual({ seq, idx });
  }, 300_000);

  it('finishes a replay read in windows, killed after its first window began, with the uncut bytes', async () => {
    await killUntilItLands('windows.ndjson', [], expectUncut);
  }, 300_000);

  it('writes the same Parquet rows across the kill', async () => {
    const duck = await DuckDBInstance.create(':memory:');
    const db = await duck.connect();
    const count = async (sql: string) => Number((await db.runAndReadAll(sql)).getRowObjectsJson()[0]!.n);
    const uncut = ndjsonRows(path('full.ndjson'));
    try {
      await killUntilItLands('windows.parquet', ['--format', 'parquet'], async (out) => {
        expect(existsSync(`${out}.partial.ndjson`)).toBe(false);
        // Every row of the uncut export once, and nothing else: EXCEPT ALL counts repeats.
        expect(await count(`select count(*) as n from '${out}'`)).toBe(EVENTS);
        expect(await count(`select count(*) as n from (from '${out}' except all from ${uncut})`)).toBe(0);
        expect(await count(`select count(*) as n from (from ${uncut} except all from '${out}')`)).toBe(0);
      });
    } finally {
      db.closeSync();
      duck.closeSync();
    }
  }, 300_000);
});
