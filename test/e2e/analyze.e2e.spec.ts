/**
 * `ormuz analyze` and `ormuz report` over a small history driven onto the log of a private nats-server, archived by the
 * audit service in this process: the seeded calls of `seedCallHistory` plus one call of each kind the standing
 * questions count (refused, denied after a wait, approved and ended `outcome_unknown`, sealed) and a conversation with
 * token use. Both commands run as an analyst would, over a live replay and over a Parquet export; the numbers are
 * checked against what was driven, and the HTML report is opened in headless Chromium.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  aggregateSubject,
  canonicalPayload,
  ConversationEventType as C,
  envelope,
  ToolCallEventType as T,
  type ContextName,
} from '@ormuz/contracts';
import { EVENTS_PER_SEEDED_CALL, launchBrowser, randomNamespace, seedCallHistory, testToken } from '@ormuz/testing';
import { AuditArchive } from './support/audit-archive.js';
import { cliEntry, exitWithin, ROOT, spawnTracked } from './support/processes.js';

const SEEDED = 20;
// refused: requested, refused; denied: + staged, denied; outcome unknown: 7; sealed: requested, authorized, sealed.
const EXTRA_CALL_EVENTS = 2 + 3 + 7 + 3;
const CONVERSATION_EVENTS = 3;
const ALL_EVENTS = SEEDED * EVENTS_PER_SEEDED_CALL + EXTRA_CALL_EVENTS + CONVERSATION_EVENTS;

describe('ormuz analyze and ormuz report', () => {
  const ns = randomNamespace('analyze');
  const dir = mkdtempSync(join(tmpdir(), 'ormuz-analyze-e2e-'));
  const start = new Date(Date.now() - 3_600_000);
  let archive: AuditArchive;
  let nc: NatsConnection;
  let analyst: string;

  async function ormuz(...args: string[]) {
    const cli = [cliEntry(), '--nats', archive.nats.url, '--namespace', ns, '--auth-token', analyst, ...args];
    const t = spawnTracked(process.execPath, cli);
    const { code } = await exitWithin(t, 60_000, `ormuz ${args.join(' ')}`);
    return { code, stdout: t.stdout(), stderr: t.stderr() };
  }

  /** Publishes one aggregate's events, `offsets` seconds after `start`. */
  async function drive(context: ContextName, subject: string, drafts: [string, object, number][]) {
    const js = jetstream(nc);
    for (const [type, data, offset] of drafts) {
      const event = envelope({ type, data } as never, {
        tenant: 'acme',
        subject,
        source: '/ormuz/test',
        correlationid: subject,
        causationid: subject,
        time: new Date(start.getTime() + offset * 1000),
      });
      await js.publish(aggregateSubject(ns, context, 'acme', subject), JSON.stringify(event), { msgID: event.id });
    }
  }

  const requested = (call: string, agent: string, device: string, tool: string) => {
    const { payload, sha256 } = canonicalPayload({ call });
    return {
      call_id: call,
      tool,
      contract_version: '1',
      payload,
      payload_sha256: sha256,
      origin: { kind: 'operation', operation_id: `op_${call}` },
      agent_id: agent,
      target: { device_id: device },
    };
  };
  const sha = canonicalPayload({}).sha256;
  const high = { level: 'high', reasons: ['sends a message'] };
  const staged = (call: string) => ({
    call_id: call,
    approval_id: `apr_${call}`,
    summary: 'Send a message',
    expires_at: new Date(start.getTime() + 7_200_000).toISOString(),
    payload_sha256: sha,
    contract_version: '1',
    verdict: high,
  });

  beforeAll(async () => {
    archive = await AuditArchive.start(ns);
    nc = archive.nc;
    const seed = { agents: ['agent-a', 'agent-b'], devices: ['phone-1', 'phone-2'], start, stepMs: 1000 };
    await seedCallHistory(jetstream(nc), ns, { ...seed, tenant: 'acme', calls: SEEDED });
    const send = 'device.send_message';
    await drive('calls', 'call_refused', [
      [T.Requested, requested('call_refused', 'agent-a', 'phone-1', send), 200],
      [T.Refused, { call_id: 'call_refused', reason_code: 'tool_not_granted', message: 'Not granted.' }, 200],
    ]);
    await drive('calls', 'call_denied', [
      [T.Requested, requested('call_denied', 'agent-b', 'phone-2', send), 210],
      [T.Staged, staged('call_denied'), 210],
      [T.Denied, { call_id: 'call_denied', approval_id: 'apr_call_denied', decided_by: 'owner', reason: null }, 214],
    ]);
    await drive('calls', 'call_unknown', [
      [T.Requested, requested('call_unknown', 'agent-a', 'phone-1', send), 220],
      [T.Staged, staged('call_unknown'), 220],
      [
        T.Approved,
        {
          call_id: 'call_unknown',
          approval_id: 'apr_call_unknown',
          decided_by: 'owner',
          payload_sha256: sha,
          contract_version: '1',
        },
        222,
      ],
      [T.Authorized, { call_id: 'call_unknown', verdict: high, approval_id: 'apr_call_unknown' }, 222],
      [
        T.Dispatched,
        {
          call_id: 'call_unknown',
          request_id: 'req_u',
          executor: { kind: 'device', device_id: 'phone-1' },
          payload_sha256: sha,
          deadline: new Date(start.getTime() + 7_200_000).toISOString(),
        },
        222,
      ],
      [T.Started, { call_id: 'call_unknown', request_id: 'req_u', executor_id: 'phone-1', boot_id: 'boot-1' }, 223],
      [T.OutcomeUnknown, { call_id: 'call_unknown', request_id: 'req_u', cause: 'timeout', detail: '' }, 230],
    ]);
    await drive('calls', 'call_sealed', [
      [T.Requested, requested('call_sealed', 'agent-b', 'phone-2', 'device.screen_observe'), 240],
      [
        T.Authorized,
        { call_id: 'call_sealed', verdict: { level: 'low', reasons: ['a read'] }, approval_id: null },
        240,
      ],
      [T.Sealed, { call_id: 'call_sealed', sealed_by: 'owner', reason: 'wrong device' }, 241],
    ]);
    const turn = (n: number, input: number, output: number) => ({
      turn: n,
      message: { role: 'assistant', content: `turn ${n}` },
      usage: { input_tokens: input, output_tokens: output },
    });
    await drive('conversations', 'conv_1', [
      [
        C.Started,
        {
          conversation_id: 'conv_1',
          agent_id: 'agent-a',
          model: 'scripted:demo',
          task: 'Say hello',
          device_id: 'phone-1',
          limits: { max_steps: 5, max_tool_calls: 5, max_tokens: 10_000, deadline: new Date().toISOString() },
        },
        250,
      ],
      [C.MessageAdded, turn(1, 100, 20), 251],
      [C.MessageAdded, turn(2, 150, 30), 252],
    ]);
    await archive.caughtUp();
    analyst = await testToken({ tenant: 'acme', roles: ['analyst'], subject: 'ana@acme' });
  }, 120_000);

  afterAll(async () => {
    await archive?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const json = (stdout: string) => JSON.parse(stdout) as unknown;

  it('answers SQL over a live replay, as JSON rows, CSV and a table', async () => {
    const sql = 'SELECT context, count(*) AS n FROM events GROUP BY context ORDER BY context';
    const r = await ormuz('--json', 'analyze', '--tenant', 'acme', sql);
    expect(r).toMatchObject({ code: 0 });
    expect(json(r.stdout)).toEqual([
      { context: 'calls', n: ALL_EVENTS - CONVERSATION_EVENTS },
      { context: 'conversations', n: CONVERSATION_EVENTS },
    ]);
    const csv = await ormuz(
      'analyze',
      '--csv',
      '--tenant',
      'acme',
      '--agent',
      'agent-b',
      "SELECT call_id, outcome FROM calls WHERE outcome <> 'succeeded' ORDER BY 1",
    );
    expect(csv.stdout).toBe('call_id,outcome\r\ncall_denied,denied\r\ncall_sealed,sealed\r\n');
    // --type takes several globs: the query goes before it.
    const table = await ormuz(
      'analyze',
      'SELECT type, count(*) AS n FROM events GROUP BY type',
      '--tenant',
      'acme',
      '--type',
      'ormuz.toolcall.refused.*',
    );
    expect(table.stdout).toBe(
      'type                       n\n-------------------------  -\normuz.toolcall.refused.v1  1\n(1 rows)\n',
    );
  });

  it('reports the standing questions with the numbers that were driven, from a live replay and from Parquet', async () => {
    const parquet = join(dir, 'acme.parquet');
    expect(await ormuz('replay', '--tenant', 'acme', '--format', 'parquet', '--out', parquet)).toMatchObject({
      code: 0,
    });
    const live = await ormuz('--json', 'report', '--tenant', 'acme');
    const fromFile = await ormuz('--json', 'report', '--input', parquet);
    expect(live).toMatchObject({ code: 0 });
    expect(json(fromFile.stdout)).toEqual(json(live.stdout));
    const answers = Object.fromEntries(
      (json(live.stdout) as { questions: { id: string; rows: unknown[] }[] }).questions.map((q) => [q.id, q.rows]),
    );
    expect(answers.calls_by_tool).toEqual([
      { tool: 'device.screen_observe', risk: 'low', outcome: 'sealed', calls: 1 },
      { tool: 'device.screen_observe', risk: 'low', outcome: 'succeeded', calls: SEEDED },
      { tool: 'device.send_message', risk: 'high', outcome: 'denied', calls: 1 },
      { tool: 'device.send_message', risk: 'high', outcome: 'outcome_unknown', calls: 1 },
      { tool: 'device.send_message', risk: 'none', outcome: 'refused', calls: 1 },
    ]);
    expect(answers.approvals_by_agent).toEqual([
      {
        agent_id: 'agent-a',
        staged: 1,
        decided: 1,
        approved: 1,
        denied: 0,
        expired: 0,
        denied_pct: 0,
        wait_p50_s: 2,
        wait_p90_s: 2,
        wait_p99_s: 2,
        wait_max_s: 2,
      },
      {
        agent_id: 'agent-b',
        staged: 1,
        decided: 1,
        approved: 0,
        denied: 1,
        expired: 0,
        denied_pct: 100,
        wait_p50_s: 4,
        wait_p90_s: 4,
        wait_p99_s: 4,
        wait_max_s: 4,
      },
    ]);
    // phone-1: 10 seeded calls (all started), the refused call, the outcome_unknown call; phone-2: 10, denied, sealed.
    expect(answers.devices).toEqual([
      {
        device_id: 'phone-1',
        calls: 12,
        started: 11,
        outcome_unknown: 1,
        outcome_unknown_pct: 9.1,
        sealed: 0,
        sealed_pct: 0,
      },
      {
        device_id: 'phone-2',
        calls: 12,
        started: 10,
        outcome_unknown: 0,
        outcome_unknown_pct: 0,
        sealed: 1,
        sealed_pct: 8.3,
      },
    ]);
    expect(answers.refusals).toEqual([
      { reason: 'tool_not_granted', calls: 1, agents: 1, tools: 'device.send_message' },
    ]);
    expect(answers.tokens_by_agent).toEqual([
      {
        agent_id: 'agent-a',
        conversations: 1,
        model_turns: 2,
        input_tokens: 250,
        output_tokens: 50,
        total_tokens: 300,
      },
    ]);
  });

  it('writes an HTML report that renders its charts in headless Chromium with no request leaving the page', async () => {
    const html = join(dir, 'report.html');
    const r = await ormuz('report', '--tenant', 'acme', '--html', html);
    expect(r).toMatchObject({ code: 0 });
    expect(r.stdout).toContain(`HTML report written to ${html}`);
    expect(readFileSync(html, 'utf8')).not.toMatch(/(src|href)=["']?https?:/);
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      const requests: string[] = [];
      const failed: string[] = [];
      page.on('request', (q) => requests.push(q.url()));
      page.on('requestfailed', (q) => failed.push(q.url()));
      await page.goto(`file://${html}`);
      expect(await page.locator('svg.chart').count()).toBe(5);
      expect(await page.locator('svg.chart[data-question="calls_by_tool"] rect.bar').count()).toBe(5);
      expect(await page.locator('h2').allTextContents()).toContain('Refused calls by reason');
      expect(failed).toEqual([]);
      expect(requests).toEqual([`file://${html}`]);
      mkdirSync(join(ROOT, 'test-artifacts'), { recursive: true });
      await page.screenshot({ path: join(ROOT, 'test-artifacts', 'analyze-report.png'), fullPage: true });
    } finally {
      await browser.close();
    }
  }, 60_000);

  describe('bad input', () => {
    it.each([
      ['a write', 'DELETE FROM events', /this is delete, which is refused/],
      ['COPY', "COPY events TO '/tmp/ormuz-leak.csv'", /can be neither read nor written/],
      ['ATTACH', "ATTACH '/tmp/ormuz-other.db'", /this is attach, which is refused|neither read nor written/],
      ['a file outside the export', "SELECT * FROM read_csv('/etc/passwd')", /can be neither read nor written/],
    ])('refuses %s with a clear error', async (_what, sql, reason) => {
      const r = await ormuz('analyze', '--tenant', 'acme', sql);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/Only one read-only query/);
      expect(r.stderr).toMatch(reason);
    });

    it('asks for one history', async () => {
      expect((await ormuz('analyze', 'SELECT 1')).stderr).toContain('Say which history: --input FILE');
      const both = await ormuz('analyze', '--tenant', 'acme', '--input', join(dir, 'x.parquet'), 'SELECT 1');
      expect(both.stderr).toContain('--input reads a file and --tenant replays the archive: give one.');
    });
  });
});
