/**
 * `ormuz replay` against the real audit service: a private nats-server (so it can be restarted), audit in this process
 * on a fresh database, a seeded history of two tenants, and the built CLI run as an analyst would. One boot serves
 * every case: the exports and their filters, Parquet read back with DuckDB, and each bad input the command must refuse
 * or survive (a full disk, a file-size limit, a NATS restart), each ending in the same export as an uncut run.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { pino } from 'pino';
import { connectNats } from '@ormuz/event-log';
import { startService, waitUntilServing, type RunningService } from '@ormuz/service-kit';
import {
  createTestDatabase,
  EVENTS_PER_SEEDED_CALL,
  freePort,
  randomNamespace,
  seedCallHistory,
  testToken,
  waitFor,
  type TestDatabase,
} from '@ormuz/testing';
import { auditService, loadAuditConfig } from '../../services/audit/src/index.js';
import { waitForArchive } from './support/wait-for-archive.js';
import { cliEntry, exitWithin, killAll, NatsServerProcess, spawnTracked } from './support/processes.js';

const ACME_CALLS = 300;
const ACME_EVENTS = ACME_CALLS * EVENTS_PER_SEEDED_CALL;
const STEP_MS = 1000;

describe('ormuz replay', () => {
  const ns = randomNamespace('replay');
  const dir = mkdtempSync(join(tmpdir(), 'ormuz-replay-'));
  const start = new Date(Date.now() - 2 * 3_600_000);
  let nats: NatsServerProcess;
  let nc: NatsConnection;
  let database: TestDatabase;
  let audit: RunningService;
  let analyst: string;
  let acmeCalls: string[];
  let globexCalls: string[];
  let full: string;

  const path = (name: string) => join(dir, name);
  const lines = (text: string) => text.split('\n').filter(Boolean);
  const timeOf = (k: number) => new Date(start.getTime() + k * STEP_MS).toISOString();

  function spawnOrmuz(args: readonly string[], wrap: readonly string[] = []) {
    const cli = [cliEntry(), '--nats', nats.url, '--namespace', ns, '--auth-token', analyst, ...args];
    return wrap.length
      ? spawnTracked('sh', ['-c', `${wrap.join(' ')}; exec "$0" "$@"`, process.execPath, ...cli])
      : spawnTracked(process.execPath, cli);
  }

  async function ormuz(...args: string[]) {
    const t = spawnOrmuz(args);
    const { code } = await exitWithin(t, 60_000, `ormuz ${args.join(' ')}`);
    return { code, stdout: t.stdout(), stderr: t.stderr() };
  }

  beforeAll(async () => {
    nats = new NatsServerProcess(await freePort(), mkdtempSync(join(tmpdir(), 'ormuz-replay-nats-')));
    await nats.start();
    nc = await connectNats({ url: nats.url, name: 'replay-test' });
    database = await createTestDatabase();
    const config = loadAuditConfig({ NATS_URL: nats.url, DATABASE_URL: database.url, ORMUZ_NAMESPACE: ns });
    audit = await startService({ ...auditService(config), logger: pino({ level: 'warn' }) });
    await waitUntilServing(nc, ns, 'audit');
    const js = jetstream(nc);
    const seed = { agents: ['agent-a', 'agent-b'], devices: ['phone-1', 'phone-2'], start, stepMs: STEP_MS };
    acmeCalls = await seedCallHistory(js, ns, { ...seed, tenant: 'acme', calls: ACME_CALLS });
    globexCalls = await seedCallHistory(js, ns, { ...seed, tenant: 'globex', calls: 10 });
    await waitForArchive(nc, ns);
    analyst = await testToken({ tenant: 'acme', roles: ['analyst'], subject: 'ana@acme' });
    const r = await ormuz('--json', 'replay', '--tenant', 'acme', '--out', path('full.ndjson'));
    expect(r).toMatchObject({ code: 0 });
    expect(JSON.parse(r.stdout)).toMatchObject({ events: ACME_EVENTS, format: 'ndjson' });
    full = readFileSync(path('full.ndjson'), 'utf8');
  }, 120_000);

  afterAll(async () => {
    await killAll();
    await audit?.close();
    await nc?.close();
    await nats?.kill();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
    if (nats) rmSync(nats.storeDir, { recursive: true, force: true });
  });

  it("exports the tenant's whole history in stream order, as rows with the fields analysts filter on", () => {
    const rows = lines(full).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows).toHaveLength(ACME_EVENTS);
    expect(new Set(rows.map((r) => r.tenant))).toEqual(new Set(['acme']));
    const seqs = rows.map((r) => r.seq as number);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(rows[0]).toMatchObject({
      context: 'calls',
      type: 'ormuz.toolcall.requested.v1',
      call_id: acmeCalls[0],
      agent_id: 'agent-a',
      device_id: 'phone-1',
      tool: 'device.screen_observe',
      time: timeOf(0),
    });
    expect(rows.filter((r) => r.risk === 'low')).toHaveLength(ACME_CALLS);
    expect(rows.filter((r) => r.outcome === 'succeeded')).toHaveLength(ACME_CALLS);
  });

  it('filters by agent, device, type glob, call and time in the archive', async () => {
    const byAgent = await ormuz('replay', '--tenant', 'acme', '--agent', 'agent-b', '--type', 'ormuz.toolcall.s*');
    // agent-b made the odd calls; s* is staged, started, succeeded, sealed: two of each seeded call.
    const agentRows = lines(byAgent.stdout).map((l) => JSON.parse(l) as { call_id: string; type: string });
    expect(agentRows).toHaveLength(ACME_CALLS);
    expect(new Set(agentRows.map((r) => r.call_id))).toEqual(new Set(acmeCalls.filter((_, i) => i % 2 === 1)));
    expect(new Set(agentRows.map((r) => r.type))).toEqual(
      new Set(['ormuz.toolcall.started.v1', 'ormuz.toolcall.succeeded.v1']),
    );

    const byDevice = await ormuz('replay', '--tenant', 'acme', '--device', 'phone-2', '--format', 'cloudevents');
    const events = lines(byDevice.stdout).map((l) => JSON.parse(l) as { specversion: string; subject: string });
    expect(events).toHaveLength(ACME_EVENTS / 2);
    expect(events.every((e) => e.specversion === '1.0' && acmeCalls.indexOf(e.subject) % 2 === 1)).toBe(true);

    const oneCall = await ormuz('replay', '--tenant', 'acme', '--call', acmeCalls[7]!);
    expect(lines(oneCall.stdout).map((l) => (JSON.parse(l) as { call_id: string }).call_id)).toEqual(
      Array(EVENTS_PER_SEEDED_CALL).fill(acmeCalls[7]),
    );

    const window = await ormuz('replay', '--tenant', 'acme', '--from', timeOf(100), '--to', timeOf(199));
    expect(
      lines(window.stdout)
        .map((l) => (JSON.parse(l) as { time: string }).time)
        .sort(),
    ).toEqual(Array.from({ length: 100 }, (_, k) => timeOf(100 + k)));

    // A duration is "that long ago": the history began two hours ago, so the last hour holds none of it.
    expect(lines((await ormuz('replay', '--tenant', 'acme', '--from', '1h')).stdout)).toEqual([]);
    const bySeq = await ormuz('replay', '--tenant', 'acme', '--context', 'calls', '--from', '11', '--to', '20');
    expect(lines(bySeq.stdout)).toEqual(lines(full).slice(10, 20));
  });

  it('writes Parquet with typed columns and the data as JSON', async () => {
    const out = path('acme.parquet');
    const r = await ormuz('--json', 'replay', '--tenant', 'acme', '--format', 'parquet', '--out', out);
    expect(r).toMatchObject({ code: 0 });
    expect(existsSync(`${out}.partial.ndjson`) || existsSync(`${out}.replay-state.json`)).toBe(false);
    const duck = await DuckDBInstance.create(':memory:');
    const db = await duck.connect();
    const q = async (sql: string) => (await db.runAndReadAll(sql)).getRowObjectsJson();
    expect(await q(`select count(*) as n, count(distinct call_id) as calls from '${out}'`)).toEqual([
      { n: String(ACME_EVENTS), calls: String(ACME_CALLS) },
    ]);
    expect(
      await q(`select agent_id, count(*) as n from '${out}' where agent_id is not null group by 1 order by 1`),
    ).toEqual([
      { agent_id: 'agent-a', n: String(ACME_CALLS / 2) },
      { agent_id: 'agent-b', n: String(ACME_CALLS / 2) },
    ]);
    expect(await q(`select typeof(seq) as s, typeof(time) as t, typeof(data) as d from '${out}' limit 1`)).toEqual([
      { s: 'BIGINT', t: 'TIMESTAMP WITH TIME ZONE', d: 'JSON' },
    ]);
    expect(
      await q(`select data->>'$.result.ok' as ok from '${out}' where outcome = 'succeeded' order by seq limit 2`),
    ).toEqual([{ ok: '0' }, { ok: '1' }]);
    db.closeSync();
    duck.closeSync();
  });

  describe('bad input', () => {
    it('refuses --from after --to', async () => {
      const r = await ormuz('replay', '--tenant', 'acme', '--from', timeOf(20), '--to', timeOf(10));
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`--from ${timeOf(20)} is after --to ${timeOf(10)}: swap them.`);
    });

    it('refuses a --part-timeout that is not a number of seconds from 1 to 3600', async () => {
      for (const bad of ['0', '0.0001', '-1', 'soon', '3601']) {
        const r = await ormuz('replay', '--tenant', 'acme', '--part-timeout', bad);
        expect({ bad, code: r.code, stderr: r.stderr }).toMatchObject({
          code: 1,
          stderr: expect.stringContaining('--part-timeout takes a number of seconds from 1 to 3600.'),
        });
      }
    });

    it('refuses a time in the future', async () => {
      const future = new Date(Date.now() + 86_400_000).toISOString();
      const r = await ormuz('replay', '--tenant', 'acme', '--from', future);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`--from ${future} is in the future`);
    });

    it('refuses a type glob matching no event type, listing the known ones', async () => {
      const r = await ormuz('replay', '--tenant', 'acme', '--type', 'ormuz.toolcall.teleported.*');
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('--type ormuz.toolcall.teleported.* matches no event type. Known types:');
      expect(r.stderr).toContain('ormuz.toolcall.requested.v1');
    });

    it("gives nothing for another tenant's call id, and refuses the other tenant outright", async () => {
      const r = await ormuz('replay', '--tenant', 'acme', '--call', globexCalls[0]!);
      expect(r).toMatchObject({ code: 0, stdout: '' });
      const other = await ormuz('replay', '--tenant', 'globex', '--call', globexCalls[0]!);
      expect(other.code).toBe(1);
      expect(other.stdout).toBe('');
      expect(other.stderr).toMatch(/acme/);
    });

    it('refuses to overwrite an export unless --force', async () => {
      const out = path('exists.ndjson');
      writeFileSync(out, 'keep me\n');
      const r = await ormuz('replay', '--tenant', 'acme', '--out', out);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`${out} exists: pass --force to overwrite it`);
      expect(readFileSync(out, 'utf8')).toBe('keep me\n');
      expect(await ormuz('replay', '--tenant', 'acme', '--out', out, '--force')).toMatchObject({ code: 0 });
      expect(readFileSync(out, 'utf8')).toBe(full);
    });

    it('says so when the disk is full', async () => {
      const r = await ormuz('replay', '--tenant', 'acme', '--out', '/dev/full');
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('Writing /dev/full failed (ENOSPC');
    });

    it('keeps and marks what a full file system cut short, and --resume finishes it', async () => {
      const out = path('cut.ndjson');
      // The file-size limit stands for a full disk: the write fails part-way (EFBIG) like ENOSPC would.
      const cut = spawnOrmuz(['replay', '--tenant', 'acme', '--out', out, '--page-size', '100'], ['ulimit -f 200']);
      expect((await exitWithin(cut, 60_000, 'the cut-short replay')).code).toBe(1);
      expect(cut.stderr()).toMatch(
        /Writing .*cut\.ndjson failed \(EFBIG.* kept, marked cut short by .*replay-state\.json/,
      );
      const state = JSON.parse(readFileSync(`${out}.replay-state.json`, 'utf8')) as { events: number; bytes: number };
      expect(state.events).toBeGreaterThan(0);
      expect(state.events).toBeLessThan(ACME_EVENTS);
      expect(full.startsWith(readFileSync(out, 'utf8').slice(0, state.bytes))).toBe(true);

      const again = await ormuz('replay', '--tenant', 'acme', '--out', out);
      expect(again.stderr).toContain('cut-short export');
      const resumed = await ormuz('--json', 'replay', '--tenant', 'acme', '--out', out, '--resume');
      expect(resumed).toMatchObject({ code: 0 });
      expect(JSON.parse(resumed.stdout)).toMatchObject({ events: ACME_EVENTS, resumed: true });
      expect(readFileSync(out, 'utf8')).toBe(full);
      expect(existsSync(`${out}.replay-state.json`)).toBe(false);
    });

    it('finishes a replay cut by a NATS restart where it stopped', async () => {
      const out = path('restart.ndjson');
      // The request in flight when NATS goes away is never answered: the CLI asks again after --part-timeout.
      const replay = spawnOrmuz([
        'replay',
        '--tenant',
        'acme',
        '--out',
        out,
        '--page-size',
        '5',
        '--part-timeout',
        '3',
      ]);
      await waitFor(
        () => {
          if (replay.hasExited()) throw new Error(`the replay exited before NATS restarted: ${replay.stderr()}`);
          return existsSync(out) && readFileSync(out, 'utf8').length > 0;
        },
        // The CLI's start-up is most of it on a busy machine.
        { timeoutMs: 60_000, intervalMs: 5, message: 'the replay to write its first page' },
      );
      // Hold the CLI still so that NATS goes away mid-replay, whatever the speed of this machine.
      process.kill(replay.pid, 'SIGSTOP');
      const before = lines(readFileSync(out, 'utf8')).length;
      expect(before).toBeLessThan(ACME_EVENTS);
      await nats.kill();
      await nats.start();
      process.kill(replay.pid, 'SIGCONT');
      const { code } = await exitWithin(replay, 90_000, 'the replay across the NATS restart');
      if (code !== 0) {
        // It gave up waiting: its state says where it stopped.
        expect(replay.stderr()).toContain('--resume');
        expect(await ormuz('replay', '--tenant', 'acme', '--out', out, '--resume')).toMatchObject({ code: 0 });
      }
      expect(readFileSync(out, 'utf8')).toBe(full);
    }, 150_000);
  });
});
