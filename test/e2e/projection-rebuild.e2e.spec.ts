/**
 * `ormuz projections rebuild`: after a mix of calls through the platform (authorized and run on a phone, staged then
 * approved, staged then denied, refused), every projection of every service is rebuilt from the log into a fresh
 * schema and compared row by row with its live read model: no difference. A row altered by hand is named by `--diff`,
 * and `--swap` puts the rebuilt tables in place while a reader reads without pause and never sees a gap or an error.
 * A rebuild cut by kill -9 of its service is continued by the same command and matches. Bad input is refused.
 */
import { jest } from '@jest/globals';
import { sql } from 'kysely';
import type { ConsumersStatusV1, RebuildProjectionReplyV1, SubmitCallReplyV1 } from '@ormuz/contracts';
import { openDatabase } from '@ormuz/postgres';
import { testToken, waitFor } from '@ormuz/testing';
import { startPlatform, type CliRun, type Platform } from './support/platform.js';

jest.setTimeout(180_000);

const MESSAGE_ARGS = { recipient: 'Alice', message_body: 'Running late' };
const SETTLED = new Set(['succeeded', 'failed', 'refused', 'staged', 'sealed', 'outcome_unknown', 'denied']);

describe('ormuz projections rebuild', () => {
  let platform: Platform;
  let op = 0;

  const submit = (tool: string, args: Record<string, unknown>): Promise<SubmitCallReplyV1> =>
    platform.call('policy.submit', {
      tenant: platform.tenant,
      agent_id: 'agent-1',
      tool,
      arguments: args,
      origin: { kind: 'operation', operation_id: `op-${++op}` },
      device_id: platform.devices[0]!,
    });
  const settled = (callId: string) =>
    waitFor(
      async () => {
        const s = await platform.call('policy.status', { tenant: platform.tenant, call_id: callId });
        return SETTLED.has(s.status.status) && s.status.status;
      },
      { timeoutMs: 20_000, message: `call ${callId} to settle` },
    );
  const rebuild = async (...args: string[]): Promise<CliRun & { reply: RebuildProjectionReplyV1 }> => {
    const run = await platform.ormuzWith({ timeoutMs: 60_000 }, 'projections', 'rebuild', ...args);
    return { ...run, reply: run.json as RebuildProjectionReplyV1 };
  };
  const errorOf = (run: CliRun) => (run.json as { error?: { code: string; message: string } }).error;
  const projectionNames = async () => {
    const r = await platform.ormuz('projections', 'status');
    const services = (r.json as { services: ConsumersStatusV1[] }).services;
    return services.flatMap((s) => s.consumers.filter((c) => c.kind === 'projection').map((c) => c.name));
  };
  /** Waits until every consumer has applied everything in its stream. */
  const caughtUp = () =>
    waitFor(
      async () => {
        const r = await platform.ormuz('projections', 'status');
        const services = (r.json as { services: (ConsumersStatusV1 | { consumers: null })[] }).services;
        return services.every((s) => s.consumers?.every((c) => c.running && c.lag === 0));
      },
      { timeoutMs: 30_000, message: 'every projection to catch up' },
    );

  beforeAll(async () => {
    platform = await startPlatform();
    // Authorized and run on the phone (observe), staged then approved, staged then denied, refused (a blind tap).
    const observed = await submit('device.screen_observe', {});
    const approved = await submit('device.send_message', MESSAGE_ARGS);
    const denied = await submit('device.send_message', { ...MESSAGE_ARGS, message_body: 'No' });
    const opened = await submit('device.open_app', { package: 'com.example.missing' });
    const statuses = [await settled(observed.call_id), await settled(opened.call_id)];
    await platform.call('approvals.approve', { tenant: platform.tenant, approval_id: approved.approval_id! });
    await platform.call('approvals.deny', { tenant: platform.tenant, approval_id: denied.approval_id! });
    statuses.push(await settled(approved.call_id), await settled(denied.call_id));
    const tap = await submit('device.tap', { x: 1, y: 1 });
    statuses.push(await settled(tap.call_id));
    expect(statuses).toEqual(expect.arrayContaining(['succeeded', 'denied']));
    await caughtUp();
  }, 150_000);
  afterAll(() => platform?.close(), 60_000);

  it('rebuilds every projection of every service into a fresh schema with no difference', async () => {
    const names = await projectionNames();
    expect(names).toEqual(
      expect.arrayContaining([
        'policy_call_status',
        'policy_device_screens',
        'approvals_inbox',
        'device_bridge_executions',
        'audit_call_records',
        'audit_archive_calls',
      ]),
    );
    for (const [i, name] of names.entries()) {
      const run = await rebuild(name, '--into', `rebuilt_${i}`, '--diff');
      expect({ name, code: run.code, stderr: run.stderr }).toEqual({ name, code: 0, stderr: '' });
      expect(run.reply.differences).toEqual([]);
      expect(run.reply.parked).toBe(0);
      for (const t of run.reply.tables!) expect(t.rebuilt_rows).toBe(t.live_rows);
    }
    // The calls stream's read models hold rows: the comparison was not of empty tables.
    const calls = await rebuild('policy_call_status', '--into', 'rebuilt_calls', '--diff');
    expect(calls.reply.tables).toEqual([{ table: 'call_status', live_rows: 5, rebuilt_rows: 5, differing: 0 }]);
  });

  it('--diff names a row altered by hand, and --swap replaces the live tables while a reader never sees a gap', async () => {
    const { rows } = await sql<{ call_id: string; status: string }>`select call_id, status from policy.call_status
      order by call_id limit 1`.execute(platform.db);
    const victim = rows[0]!;
    await sql`update policy.call_status set status = 'tampered' where call_id = ${victim.call_id}`.execute(platform.db);

    const diff = await rebuild('policy_call_status', '--into', 'rebuilt_diff', '--diff');
    expect(diff.code).toBe(1);
    expect(diff.reply.differences).toEqual([
      {
        table: 'call_status',
        key: { tenant: platform.tenant, call_id: victim.call_id },
        column: 'status',
        live: 'tampered',
        rebuilt: victim.status,
      },
    ]);
    const text = await platform.ormuzWith(
      {},
      'projections',
      'rebuild',
      'policy_call_status',
      '--into',
      'rebuilt_diff',
      '--diff',
      '--force',
    );
    expect(text.code).toBe(1);

    // A reader on its own connection, reading without pause during the swap.
    const reader = await openDatabase<unknown>({ url: platform.databaseUrl });
    const seen: number[] = [];
    const errors: string[] = [];
    let reading = true;
    const loop = (async () => {
      while (reading) {
        try {
          const r = await sql<{ n: number }>`select count(*)::int as n from policy.call_status`.execute(reader);
          seen.push(r.rows[0]!.n);
        } catch (err) {
          errors.push(String(err));
        }
      }
    })();
    try {
      await waitFor(() => seen.length > 10, { message: 'the reader to be reading' });
      const swap = await rebuild('policy_call_status', '--into', 'rebuilt_swap', '--swap');
      expect(swap.code).toBe(0);
      expect(swap.reply.swapped).toBe(true);
      const after = seen.length;
      await waitFor(() => seen.length > after + 10, { message: 'the reader to read after the swap' });
    } finally {
      reading = false;
      await loop;
      await reader.destroy();
    }
    expect(errors).toEqual([]);
    expect(new Set(seen)).toEqual(new Set([5]));
    // The live table is the rebuilt one; the tampered one was moved aside into the rebuild's schema.
    const live = await sql<{
      status: string;
    }>`select status from policy.call_status where call_id = ${victim.call_id}`.execute(platform.db);
    expect(live.rows[0]!.status).toBe(victim.status);
    const aside = await sql<{
      status: string;
    }>`select status from rebuilt_swap.call_status where call_id = ${victim.call_id}`.execute(platform.db);
    expect(aside.rows[0]!.status).toBe('tampered');
    // The live projection runs on from the swapped checkpoint: a new call reaches the swapped-in table.
    const next = await submit('device.screen_observe', {});
    await settled(next.call_id);
    await caughtUp();
    const again = await rebuild('policy_call_status', '--into', 'rebuilt_after_swap', '--diff');
    expect(again.code).toBe(0);
    expect(again.reply.tables).toEqual([{ table: 'call_status', live_rows: 6, rebuilt_rows: 6, differing: 0 }]);
  });

  it('a rebuild cut by kill -9 of its service is continued by the same command and matches', async () => {
    const cut = platform
      .call('audit.consumers.rebuild', { name: 'audit_archive_calls', into: 'rebuilt_killed', diff: true }, 60_000)
      .catch((err: unknown) => err);
    await waitFor(
      async () => {
        const { rows } = await sql<{ c: string | null }>`select obj_description(oid, 'pg_namespace') as c
          from pg_namespace where nspname = 'rebuilt_killed'`.execute(platform.db);
        return rows[0]?.c === 'ormuz rebuild of audit_archive_calls: unfinished';
      },
      { intervalMs: 5, message: 'the rebuild to start' },
    );
    await platform.kill9('audit');
    expect(await cut).toBeInstanceOf(Error);
    await platform.start('audit');
    const run = await rebuild('audit_archive_calls', '--into', 'rebuilt_killed', '--diff');
    expect(run.code).toBe(0);
    expect(run.reply.resumed).toBe(true);
    expect(run.reply.differences).toEqual([]);
    expect(run.reply.tables![0]!.rebuilt_rows).toBeGreaterThan(0);
  });

  it('refuses bad input with a clear error, and callers who are not platform operators', async () => {
    const unknown = await rebuild('no_such_projection', '--into', 'rebuilt_x');
    expect(unknown.code).not.toBe(0);
    expect(errorOf(unknown)?.message).toMatch(
      /No running service holds no_such_projection\. Known: .*policy_call_status/,
    );

    const badName = await rebuild('policy_call_status', '--into', 'Bad-Name;drop');
    expect(errorOf(badName)?.message).toContain('is not a schema name');

    const liveSchema = await rebuild('policy_call_status', '--into', 'policy');
    expect(errorOf(liveSchema)?.message).toContain('policy is a live schema');
    const otherLive = await rebuild('policy_call_status', '--into', 'auth', '--force');
    expect(errorOf(otherLive)?.message).toContain('auth is a live schema');

    await sql`create schema someone_elses`.execute(platform.db);
    const foreign = await rebuild('policy_call_status', '--into', 'someone_elses', '--force');
    expect(errorOf(foreign)?.message).toContain('exists and is not a rebuild');

    const exists = await rebuild('policy_call_status', '--into', 'rebuilt_calls');
    expect(errorOf(exists)?.message).toContain(
      'exists (ormuz rebuild of policy_call_status: finished); --force replaces it',
    );
    const forced = await rebuild('policy_call_status', '--into', 'rebuilt_calls', '--force', '--diff');
    expect(forced.code).toBe(0);

    for (const token of [
      await testToken({ tenant: '*', roles: ['analyst'], subject: 'analyst@platform' }),
      await testToken({ tenant: platform.tenant, roles: ['operator'], subject: 'ops@acme' }),
    ]) {
      const run = await platform.ormuzWith(
        { token },
        'projections',
        'rebuild',
        'policy_call_status',
        '--into',
        'rebuilt_y',
      );
      expect(run.code).not.toBe(0);
      expect(errorOf(run)?.code).toBe('forbidden');
    }
  });
});
