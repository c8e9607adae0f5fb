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
import { OpenAiChatServer, testToken, waitFor } from '@ormuz/testing';
import type { ServiceName } from '../../tools/cli/src/services.js';
import { startPlatform, type CliRun, type Platform } from './support/platform.js';

jest.setTimeout(180_000);

const MESSAGE_ARGS = { recipient: 'Alice', message_body: 'Running late' };
const KEY = 'sk-local-projection-rebuild-e2e-0a1b2c3d4e5f6a7b8c9d';
const SETTLED = new Set(['succeeded', 'failed', 'refused', 'staged', 'sealed', 'outcome_unknown', 'denied']);

describe('ormuz projections rebuild', () => {
  let platform: Platform;
  let model: OpenAiChatServer;
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
  /** Every projection the services run, with the service that runs it. */
  const projections = async () => {
    const r = await platform.ormuz('projections', 'status');
    const services = (r.json as { services: ConsumersStatusV1[] }).services;
    return services.flatMap((s) =>
      s.consumers
        .filter((c) => c.kind === 'projection')
        .map((c) => ({ service: s.service as ServiceName, name: c.name })),
    );
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
    model = await new OpenAiChatServer(KEY).start();
    platform = await startPlatform({
      env: { LOCAL_LLM_KEY: KEY, ORMUZ_MODEL_MAX_RETRIES: '0', MODEL_LOOP_MODEL_ATTEMPTS: '1' },
    });
    // Authorized and run on the phone (observe), staged then approved, staged then denied, refused (a blind tap).
    const observed = await submit('device.screen_observe', {});
    const approved = await submit('device.send_message', MESSAGE_ARGS);
    const denied = await submit('device.send_message', { ...MESSAGE_ARGS, message_body: 'No' });
    const opened = await submit('device.open_app', { package: 'com.example.missing' });
    const statuses = [await settled(observed.call_id), await settled(opened.call_id)];
    await platform.decide('approve', approved.approval_id!);
    await platform.decide('deny', denied.approval_id!);
    statuses.push(await settled(approved.call_id), await settled(denied.call_id));
    const tap = await submit('device.tap', { x: 1, y: 1 });
    statuses.push(await settled(tap.call_id));
    expect(statuses).toEqual(expect.arrayContaining(['succeeded', 'denied']));
    // A conversation (model-loop's read model): it observes the screen, then asks to send a message, which is staged.
    await platform.call('policy.grants.set', { tenant: platform.tenant, agent_id: 'a1', allow: ['ormuz', 'device'] });
    model.script(
      {
        kind: 'reply',
        text: 'Looking, then texting Alice.',
        tool_calls: [
          { name: 'device__screen_observe', arguments: {} },
          { name: 'device__send_message', arguments: { recipient: 'Alice Martin', message_body: 'I am late' } },
        ],
      },
      { kind: 'reply', text: 'The message waits for your approval.' },
    );
    const token = await testToken({ tenant: platform.tenant, roles: ['operator'], subject: 'op@acme' });
    const agent = await platform.ormuzWith(
      { token, timeoutMs: 90_000 },
      ...['agent', 'run', '--tenant', platform.tenant, '--agent', 'a1', '--device', platform.devices[0]!],
      ...['--model', 'openai-compatible:local-llm', '--base-url', model.baseUrl, '--api-key-env', 'LOCAL_LLM_KEY'],
      'Tell Alice I am late',
    );
    expect({ code: agent.code, stderr: agent.stderr }).toEqual({ code: 2, stderr: '' });
    await caughtUp();
  }, 300_000);
  afterAll(async () => {
    await platform?.close();
    await model?.close();
  }, 60_000);
  const liveCalls = async () =>
    (await sql<{ n: number }>`select count(*)::int as n from policy.call_status`.execute(platform.db)).rows[0]!.n;

  it('rebuilds every projection of every service into a fresh schema with no difference', async () => {
    const all = await projections();
    expect(all.map((p) => p.name)).toEqual(
      expect.arrayContaining([
        'policy_call_status',
        'policy_device_screens',
        'approvals_inbox',
        'device_bridge_executions',
        'model_loop_conversation_view',
        'audit_call_records',
        'audit_archive_calls',
      ]),
    );
    // Straight to each service (the CLI's own path is the other cases'): one process start less per projection.
    for (const [i, { service, name }] of all.entries()) {
      const reply = await platform.call(
        `${service}.consumers.rebuild`,
        { name, into: `rebuilt_${i}`, diff: true },
        60_000,
      );
      expect({ name, differences: reply.differences, parked: reply.parked }).toEqual({
        name,
        differences: [],
        parked: 0,
      });
      for (const t of reply.tables!) expect(t.rebuilt_rows).toBe(t.live_rows);
    }
    // The calls stream's read models hold rows: the comparison was not of empty tables.
    const calls = await rebuild('policy_call_status', '--into', 'rebuilt_calls', '--diff');
    const n = await liveCalls();
    expect(n).toBeGreaterThanOrEqual(7);
    expect(calls.reply.tables).toEqual([{ table: 'call_status', live_rows: n, rebuilt_rows: n, differing: 0 }]);
    const conversations = all.findIndex((p) => p.name === 'model_loop_conversation_view');
    const messages = await sql<{ n: number }>`select count(*)::int as n
      from ${sql.table(`rebuilt_${conversations}.conversation_messages`)}`.execute(platform.db);
    expect(messages.rows[0]!.n).toBeGreaterThan(0);
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
    const n = await liveCalls();
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
    expect(new Set(seen)).toEqual(new Set([n]));
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
    expect(again.reply.tables).toEqual([{ table: 'call_status', live_rows: n + 1, rebuilt_rows: n + 1, differing: 0 }]);
  });

  it('a rebuild cut by kill -9 of its service is continued by the same command and matches', async () => {
    // Its reply never comes once audit is killed: the request gives up after 10 s, read at the end ("resumed" below
    // is what shows the rebuild was cut).
    const cut = platform
      .call('audit.consumers.rebuild', { name: 'audit_archive_calls', into: 'rebuilt_killed', diff: true }, 10_000)
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
    await platform.start('audit');
    const run = await rebuild('audit_archive_calls', '--into', 'rebuilt_killed', '--diff');
    expect(run.code).toBe(0);
    expect(run.reply.resumed).toBe(true);
    expect(run.reply.differences).toEqual([]);
    expect(run.reply.tables![0]!.rebuilt_rows).toBeGreaterThan(0);
    expect(await cut).toBeInstanceOf(Error);
  });

  it('refuses bad input with a clear error, and callers who are not platform operators', async () => {
    const unknown = await rebuild('no_such_projection', '--into', 'rebuilt_x');
    expect(unknown.code).not.toBe(0);
    expect(errorOf(unknown)?.message).toMatch(
      /No running service holds no_such_projection\. Known: .*policy_call_status/,
    );

    // Checked by the service: straight to it, one CLI start less each.
    const refused = (into: string, force = false) =>
      platform.call('policy.consumers.rebuild', { name: 'policy_call_status', into, force }).then(
        () => 'accepted',
        (err: Error) => err.message,
      );
    expect(await refused('Bad-Name;drop')).toContain('"Bad-Name;drop" is not a schema name');
    expect(await refused('policy')).toContain('policy is a live schema');
    expect(await refused('auth', true)).toContain('auth is a live schema');
    await sql`create schema someone_elses`.execute(platform.db);
    expect(await refused('someone_elses', true)).toContain('Schema someone_elses exists and is not a rebuild');

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
