/**
 * The main job, end to end: six service processes, a simulated phone, the scripted agent (signed in with an API key
 * of its own) and an owner approving over HTTP, against the real Postgres and either the test NATS server (named with
 * NATS_URL) or, as a plain `npm start` does, a nats-server the demo runs itself under the shipped authorization.
 * Runs the built CLI exactly as `npm start` does.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { chromium, type Browser } from 'playwright-core';
import { claimNamespace, openDatabase } from '@ormuz/postgres';
import {
  createTestDatabase,
  OpenAiChatServer,
  randomNamespace,
  testEnv,
  waitFor,
  type TestDatabase,
} from '@ormuz/testing';
import { cliEntry, exitWithin, killAll, spawnTracked } from './support/processes.js';

/** Runs the built CLI; bounded, and its process group (the CLI and the services it started) is ended on time-out. */
async function runCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 75_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const t = spawnTracked(process.execPath, [cliEntry(), ...args], env);
  const { code } = await exitWithin(t, timeoutMs, `ormuz ${args.join(' ')}`);
  return { code, stdout: t.stdout(), stderr: t.stderr() };
}

describe('demo (npm start)', () => {
  const { natsUrl } = testEnv();
  // A namespace owns its database (decision 0009): each demo run gets both fresh.
  const databases: TestDatabase[] = [];
  const freshDatabase = async (): Promise<string> => {
    const database = await createTestDatabase();
    databases.push(database);
    return database.url;
  };
  afterAll(async () => {
    await killAll();
    for (const database of databases) await database.drop();
  });

  it('runs one low-risk and one approved high-risk call through all six services and exits 0', async () => {
    const r = await runCli(['demo', '--timeout', '60000'], {
      NATS_URL: natsUrl,
      DATABASE_URL: await freshDatabase(),
      ORMUZ_NAMESPACE: randomNamespace('e'),
    });
    if (r.code !== 0) throw new Error(`demo exited ${r.code}\n${r.stdout}\n${r.stderr}`);
    expect(r.stdout).toMatch(/agent demo\/demo-agent signs in with API key \w+/);
    expect(r.stdout).toMatch(/owner approved apr_/);
    expect(r.stdout).toMatch(/device\.screen_observe: succeeded/);
    expect(r.stdout).toMatch(/device\.send_message: succeeded/);
    expect(r.stdout).toMatch(/staged\.v1 .*\n.*approved\.v1 .*\n.*authorized\.v1/);
    expect(r.stdout).toMatch(/audit row: status=succeeded decided_by=owner@demo/);
    // Tool results print in call order, and long data is shortened inside an intact fence.
    const observe = r.stdout.indexOf('"message":"device.screen_observe ran');
    const pending = r.stdout.indexOf('"status":"pending_confirmation"');
    expect(observe).toBeGreaterThan(0);
    expect(pending).toBeGreaterThan(observe);
    expect(r.stdout).not.toMatch(/<<<END …|<<<END UNTRUSTED DATA …/);
    expect(r.stdout.match(/<<<BEGIN UNTRUSTED DATA (call_\w+)>>>/g)).toHaveLength(2);
    expect(r.stdout.match(/<<<END UNTRUSTED DATA call_\w+>>>/g)).toHaveLength(2);
    expect(r.stdout).toMatch(/the demo shortened this data: [\d,]+ more characters are not shown here/);
  }, 90_000);

  it('with --keep-running leaves a staged call for the owner, approved here in the console in Chromium, and serves MCP with the key it prints; stops on SIGINT', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'ormuz-demo-keep-'));
    const demo = spawnTracked(process.execPath, [cliEntry(), 'demo', '--keep-running', '--timeout', '60000'], {
      NATS_URL: natsUrl,
      DATABASE_URL: await freshDatabase(),
      ORMUZ_NAMESPACE: randomNamespace('k'),
      ORMUZ_DEMO_STATE_DIR: stateDir,
    });
    const context = () => `stdout:\n${demo.stdout()}\nstderr:\n${demo.stderr()}`;
    let browser: Browser | undefined;
    try {
      const waiting = await waitFor(
        () => {
          if (demo.hasExited()) throw new Error(`the demo exited\n${context()}`);
          return /waiting for the owner: (apr_\w+) — .*\n +approve or deny it in the console, (http:\S+\/console),/.exec(
            demo.stdout(),
          );
        },
        { timeoutMs: 90_000, intervalMs: 100, message: 'the demo to leave a call for the owner' },
      );
      const [, approvalId, consoleUrl] = waiting;
      const ownerToken = /Owner token .*\n +(ey\S+)/.exec(demo.stdout())?.[1];
      if (!ownerToken) throw new Error(`no owner token printed\n${context()}`);
      // Only the call left for the owner is pending; the demo's own run approved its call.
      expect(demo.stdout()).toMatch(/owner approved apr_/);
      expect(demo.stdout()).not.toContain(`owner approved ${approvalId}`);

      // An MCP client configured as the demo says: the printed endpoint and key list the demo agent's grant.
      const printed = /\nMCP: (http:\S+\/mcp) serves .*\n.*\n +(ormz_\S+)\n/.exec(demo.stdout());
      if (!printed) throw new Error(`no MCP endpoint and key printed\n${context()}`);
      const [, mcpUrl, mcpKey] = printed;
      expect(demo.stdout()).toContain(`"url": "${mcpUrl}"`);
      expect(demo.stdout()).toContain(`"Authorization": "Bearer ${mcpKey}"`);
      expect(demo.stdout()).toContain(`npx ormuz mcp --key ${mcpKey} --url ${mcpUrl} --device phone-1`);
      const mcp = new Client({ name: 'demo-e2e', version: '1.0.0' });
      await mcp.connect(
        new StreamableHTTPClientTransport(new URL(mcpUrl!), {
          requestInit: { headers: { authorization: `Bearer ${mcpKey}`, 'ormuz-device': 'phone-1' } },
        }),
      );
      try {
        const { tools } = await mcp.listTools();
        expect(tools.map((t) => t.name)).toEqual(
          expect.arrayContaining(['device.screen_observe', 'device.send_message']),
        );
      } finally {
        await mcp.close();
      }

      browser = await chromium.launch({
        executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
        args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
      });
      const page = await browser.newPage();
      await page.goto(consoleUrl!);
      await page.getByLabel('Bearer token').fill(ownerToken);
      await page.getByRole('button', { name: 'Sign in' }).click();
      const card = page.locator(`.approval[data-approval-id="${approvalId}"]`);
      await card.getByRole('button', { name: 'Approve' }).click();
      await waitFor(() => demo.stdout().includes(`the owner decided ${approvalId}`), {
        timeoutMs: 30_000,
        message: `the demo to see ${approvalId} decided and its conversation complete`,
      });
      expect(demo.hasExited()).toBe(false);

      demo.child.kill('SIGINT');
      const { code } = await exitWithin(demo, 30_000, 'the demo after SIGINT');
      expect({ code, stderr: demo.stderr() }).toEqual({ code: 0, stderr: expect.any(String) });
      expect(existsSync(join(stateDir, 'demo.env'))).toBe(false);
    } finally {
      await browser?.close();
      rmSync(stateDir, { recursive: true, force: true });
    }
  }, 180_000);

  it('plays the same scenario with a model behind any OpenAI-compatible server (--model, --base-url)', async () => {
    const key = 'sk-local-demo-e2e-0a1b2c3d4e5f60718293a4b5c6d7e8f9';
    const server = await new OpenAiChatServer(key).start();
    try {
      server.script(
        {
          kind: 'reply',
          text: "I'll look at the phone's screen and text Alice that you are running late.",
          tool_calls: [
            { name: 'device__screen_observe', arguments: {} },
            {
              name: 'device__send_message',
              arguments: { recipient: 'Alice Martin', message_body: 'Running ten minutes late, sorry!' },
            },
          ],
        },
        { kind: 'reply', text: 'The message to Alice is waiting for your approval.' },
        { kind: 'reply', text: 'Done: Alice has been told you are running ten minutes late.' },
      );
      const r = await runCli(
        [
          'demo',
          // Five services boot at once: on a loaded two-core machine that alone can take a minute and more.
          '--timeout',
          '180000',
          '--model',
          'openai-compatible:local-llm',
          '--base-url',
          server.baseUrl,
          '--api-key-env',
          'DEMO_LLM_KEY',
        ],
        {
          NATS_URL: natsUrl,
          DATABASE_URL: await freshDatabase(),
          ORMUZ_NAMESPACE: randomNamespace('m'),
          DEMO_LLM_KEY: key,
        },
        200_000,
      );
      if (r.code !== 0) throw new Error(`demo exited ${r.code}\n${r.stdout}\n${r.stderr}`);
      expect(r.stdout).toContain(`agent demo/demo-agent runs on openai-compatible:local-llm at ${server.baseUrl}`);
      expect(r.stdout).toMatch(/owner approved apr_/);
      expect(r.stdout).toMatch(/device\.send_message: succeeded/);
      expect(r.stdout).toContain('result: Done: Alice has been told you are running ten minutes late.');
      expect(server.remaining).toBe(0);
      expect(server.requests.every((q) => q.headers.authorization === `Bearer ${key}`)).toBe(true);
      expect(r.stdout).not.toContain(key);
    } finally {
      await server.close();
    }
  }, 240_000);

  it('records a denial as it was, and the message is never sent', async () => {
    const r = await runCli(['demo', '--deny', '--timeout', '60000'], {
      NATS_URL: natsUrl,
      DATABASE_URL: await freshDatabase(),
      ORMUZ_NAMESPACE: randomNamespace('e'),
    });
    if (r.code !== 0) throw new Error(`demo exited ${r.code}\n${r.stdout}\n${r.stderr}`);
    expect(r.stdout).toMatch(/device\.send_message: denied/);
    expect(r.stdout).not.toMatch(/send_message: succeeded/);
  }, 90_000);

  it('refuses a database of another namespace before starting anything, naming both and the fix', async () => {
    const databaseUrl = await freshDatabase();
    const db = await openDatabase({ url: databaseUrl, max: 1 });
    await claimNamespace(db, 'someone_else').finally(() => db.destroy());
    const namespace = randomNamespace('e');
    const r = await runCli(['demo'], { NATS_URL: natsUrl, DATABASE_URL: databaseUrl, ORMUZ_NAMESPACE: namespace });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`belongs to namespace someone_else, not ${namespace}`);
    expect(r.stderr).toMatch(/Point DATABASE_URL at a database of namespace/);
    expect(r.stdout).not.toMatch(/services up/);
  }, 30_000);

  it('refuses a --max-restarts or --timeout that is not a whole number, saying what it takes', async () => {
    const bad = await runCli(['demo', '--max-restarts', '-1'], { NATS_URL: natsUrl });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--max-restarts takes a whole number from 0, not -1/);
    const soon = await runCli(['demo', '--timeout', 'soon'], { NATS_URL: natsUrl });
    expect(soon.code).toBe(1);
    expect(soon.stderr).toMatch(/--timeout takes milliseconds, a whole number from 1000, not soon/);
  }, 30_000);

  it('names the dependency, its URL and how to start it when NATS is unreachable', async () => {
    const r = await runCli(['demo'], { NATS_URL: 'nats://127.0.0.1:1', DATABASE_URL: await freshDatabase() });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/NATS is not reachable at nats:\/\/127\.0\.0\.1:1/);
    expect(r.stderr).toMatch(/nats-server -js/);
  }, 20_000);

  it('names Postgres, its URL and how to start it when Postgres is unreachable', async () => {
    const r = await runCli(['demo'], { NATS_URL: natsUrl, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/postgres' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/PostgreSQL is not reachable at postgres:\/\/postgres@127\.0\.0\.1:1/);
  }, 20_000);
});

describe('demo on its own nats-server (npm start without NATS_URL)', () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'ormuz-demo-state-'));
  const namespace = randomNamespace('e');
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await killAll();
    await database?.drop();
    rmSync(stateDir, { recursive: true, force: true });
  });

  /** The demo as `npm start` runs it: no NATS named, no NATS user of the test's environment passed on. */
  const npmStart = (state: string) =>
    runCli(['demo', '--timeout', '60000'], {
      NATS_URL: '',
      NATS_USER: '',
      NATS_PASSWORD: '',
      DATABASE_URL: database.url,
      ORMUZ_NAMESPACE: namespace,
      // The store and logs of this test, not the developer's `.ormuz`.
      ORMUZ_DEMO_STATE_DIR: state,
    });
  const serverLog = () => readFileSync(join(stateDir, 'logs', 'nats-server.log'), 'utf8');
  const lastSeq = (out: string) => Math.max(...[...out.matchAll(/^ +#(\d+) /gm)].map((m) => Number(m[1])));

  it('runs every service as its own NATS user, the agent with an API key revoked at the end, twice in a row', async () => {
    // One namespace and database for both runs, as `npm start` keeps `demo`: the second run resumes the streams the
    // first left in the kept store, and its projections resume from checkpoints that point into them.
    const run = () => npmStart(stateDir);
    const first = await run();
    if (first.code !== 0) throw new Error(`demo exited ${first.code}\n${first.stdout}\n${first.stderr}`);
    const second = await run();
    if (second.code !== 0) throw new Error(`the second demo exited ${second.code}\n${second.stdout}\n${second.stderr}`);

    for (const r of [first, second]) {
      expect(r.stdout).toMatch(/^Ormuz demo: namespace \w+, NATS nats:\/\/127\.0\.0\.1:\d+;/m);
      // The server's own account of who is connected (its /connz): each service as itself, the demo as cli.
      expect(r.stdout).toMatch(
        /NATS users connected: approvals, audit, cli, device-bridge, mcp-gateway, model-loop, policy \(/,
      );
      expect(r.stdout).toMatch(/agent demo\/demo-agent signs in with API key \w+/);
      expect(r.stdout).toMatch(/device\.send_message: succeeded/);
      expect(r.stdout).toMatch(/audit row: status=succeeded decided_by=owner@demo/);
    }
    // The second run's calls come after the first's in the same streams: the store was kept.
    expect(lastSeq(second.stdout)).toBeGreaterThan(lastSeq(first.stdout));
    expect(
      serverLog()
        .split('\n')
        .filter((line) => /Violation/.test(line)),
    ).toEqual([]);
    // Stopped, with the store kept and unlocked.
    expect(existsSync(join(stateDir, 'nats', 'jetstream'))).toBe(true);
    expect(existsSync(join(stateDir, 'nats', 'server.pid'))).toBe(false);
    expect(serverLog()).toMatch(/Server Exiting/);

    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ issued: number; active: number }>(
        `select count(*)::int as issued, (count(*) filter (where revoked_at is null))::int as active
           from auth.api_keys where tenant = 'demo' and agent_id = 'demo-agent'`,
      );
      expect(rows).toEqual([{ issued: 2, active: 0 }]);
    } finally {
      await client.end();
    }
  }, 200_000);

  it("refuses a database whose checkpoints point past the store's streams, naming both and the ways out", async () => {
    // The database above has read its streams; a store without them (deleted, or never this database's) disagrees.
    const otherState = mkdtempSync(join(tmpdir(), 'ormuz-demo-state-'));
    try {
      const r = await npmStart(otherState);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/NATS store .* and its database .* are not from the same runs/);
      expect(r.stderr).toMatch(/DROP DATABASE/);
      expect(r.stdout).not.toMatch(/services up/);
    } finally {
      rmSync(otherState, { recursive: true, force: true });
    }
  }, 60_000);
});
