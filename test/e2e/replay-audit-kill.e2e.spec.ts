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
import { callRpc } from '@ormuz/service-kit';
import {
  adminFor,
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
    const dead = audit!;
    const exited = new Promise((resolve) => dead.child.once('exit', resolve));
    dead.child.kill('SIGKILL');
    await exited;
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
    await waitFor(
      async () => {
        const body = {};
        const { projections } = await callRpc(nc, ns, 'audit.projections', body, { credential: await adminFor(body) });
        return projections.every((p) => p.checkpoint >= p.stream_last_seq && p.parked === 0);
      },
      { timeoutMs: 120_000, intervalMs: 250, message: 'the archive to hold the seeded history' },
    );
    analyst = await testToken({ tenant: 'acme', roles: ['analyst'], subject: 'ana@acme' });
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

  /**
   * Starts a replay, freezes audit (SIGSTOP) as soon as the first part is written, so that it stops in the middle of
   * answering, then kills it with SIGKILL; once the replay has noticed and is asking again, starts audit again and
   * waits for the replay to finish. Returns how many lines were written when the replay first asked again.
   */
  async function replayAcrossKill(out: string, args: readonly string[]): Promise<number> {
    // A Parquet export gathers its rows in NDJSON beside the output until they are all there.
    const rows = args.includes('parquet') ? `${out}.partial.ndjson` : out;
    const replay = spawnOrmuz(['replay', '--tenant', 'acme', '--out', out, '--part-timeout', '1', ...args]);
    await waitFor(
      () => {
        if (replay.hasExited()) throw new Error(`the replay exited before audit was killed: ${replay.stderr()}`);
        return existsSync(rows) && statSync(rows).size > 0;
      },
      { timeoutMs: 60_000, intervalMs: 2, message: 'the replay to write its first part' },
    );
    audit!.child.kill('SIGSTOP');
    await killAudit();
    await waitFor(() => replay.stderr().includes('asking the archive again'), {
      timeoutMs: 30_000,
      message: 'the replay to ask the archive again',
    });
    const written = lineCount(rows);
    expect(written).toBeLessThan(EVENTS);
    await startAudit();
    const { code } = await exitWithin(replay, 90_000, 'the replay across the kill');
    expect({ code, stderr: replay.stderr() }).toMatchObject({ code: 0 });
    expect(existsSync(`${out}.replay-state.json`)).toBe(false);
    return written;
  }

  it('asks again after the last part written when a reply is cut off, and loses and repeats nothing', async () => {
    const page = 10_000;
    // The kill must land inside a reply of many parts; on a machine slow enough for it to fall between two replies,
    // the run is tried again (each run must end in the uncut export all the same).
    let cutInside = false;
    for (let run = 1; run <= 3 && !cutInside; run++) {
      const out = path(`paged-${run}.ndjson`);
      const written = await replayAcrossKill(out, ['--page-size', String(page)]);
      expect(readFileSync(out, 'utf8')).toBe(full);
      // What was written ends inside a page: the request was cut after some of its parts.
      cutInside = written % page !== 0;
    }
    expect(cutInside).toBe(true);
  }, 300_000);

  it('finishes a replay read in windows when audit dies mid-window', async () => {
    const out = path('windows.ndjson');
    await replayAcrossKill(out, []);
    expect(readFileSync(out, 'utf8')).toBe(full);
  }, 150_000);

  it('writes the same Parquet rows across the kill', async () => {
    const out = path('windows.parquet');
    await replayAcrossKill(out, ['--format', 'parquet']);
    expect(existsSync(`${out}.partial.ndjson`)).toBe(false);
    const duck = await DuckDBInstance.create(':memory:');
    const db = await duck.connect();
    const count = async (sql: string) => Number((await db.runAndReadAll(sql)).getRowObjectsJson()[0]!.n);
    try {
      const uncut = ndjsonRows(path('full.ndjson'));
      // Every row of the uncut export once, and nothing else: EXCEPT ALL counts repeats.
      expect(await count(`select count(*) as n from '${out}'`)).toBe(EVENTS);
      expect(await count(`select count(*) as n from (from '${out}' except all from ${uncut})`)).toBe(0);
      expect(await count(`select count(*) as n from (from ${uncut} except all from '${out}')`)).toBe(0);
    } finally {
      db.closeSync();
      duck.closeSync();
    }
  }, 150_000);
});
