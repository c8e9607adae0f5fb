/**
 * The README's operator-CLI block, read from README.md and run as written against a running demo platform
 * (`npm start -- --keep-running`), then what `--keep-running` promises: every port printed, a killed service reported
 * and restarted, and nothing left behind (the phone's credential and the agent's key revoked, its journal deleted,
 * the demo's NATS server stopped and `demo.env` removed) when the demo stops.
 *
 * The demo runs as a plain `npm start` does: on a nats-server of its own under the shipped authorization, each
 * service as its own NATS user. The block's second line, `source .ormuz/demo.env`, gives the CLI that server, user
 * `cli`, the namespace and a token; every later line runs through bash after it, as a reader would paste them into
 * that shell, with the substitutions a reader makes too: `<call-id>` / `<approval-id>` / `<webhook-id>` become the last such id the
 * previous commands printed. For isolation from other runs on the same machine, the demo keeps its state (store,
 * logs, demo.env) in a directory of the test's own and uses a random namespace and a fresh database instead of
 * `demo`; the test checks that the README's path is where the demo writes by default, and that the file names the
 * namespace the demo really uses.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import pg from 'pg';
import { connectNats } from '@ormuz/event-log';
import { callRpc } from '@ormuz/service-kit';
import { createTestDatabase, randomNamespace, waitFor, type TestDatabase, adminFor } from '@ormuz/testing';
import {
  DEMO_AGENT,
  DEMO_DEVICE,
  DEMO_NAMESPACE,
  DEMO_TENANT,
  demoStateDir,
} from '../../tools/cli/src/commands/demo.command.js';
import { cliEntry, exitWithin, killAll, ROOT, spawnTracked, type Tracked } from './support/processes.js';

/** The commands of the `sh` block under "## The operator CLI", continuation lines kept with their command. */
function readmeCliCommands(markdown: string): string[] {
  const at = markdown.indexOf('## The operator CLI');
  if (at < 0) throw new Error('README.md has no "## The operator CLI" section.');
  const block = /```sh\n([\s\S]*?)```/.exec(markdown.slice(at))?.[1];
  if (!block) throw new Error('The "The operator CLI" section of README.md has no ```sh block.');
  const commands: string[] = [];
  let pending = '';
  for (const line of block.split('\n')) {
    if (!pending && !line.trim()) continue;
    pending = pending ? `${pending}\n${line}` : line;
    if (!/\\\s*$/.test(line)) {
      commands.push(pending);
      pending = '';
    }
  }
  return commands;
}

/**
 * `npx ormuz` runs the workspace's bin link, node_modules/.bin/ormuz → tools/cli/bin/ormuz.js. On a loaded two-core
 * machine npx adds seconds per command, so the block's `npx ormuz` runs that same file directly (the first test checks
 * the link); any other npx use goes to the real npx.
 */
const NPX_ORMUZ = `npx() { if [ "$1" = ormuz ]; then shift; node ${JSON.stringify(join(ROOT, 'tools/cli/bin/ormuz.js'))} "$@"; else command npx "$@"; fi; }`;

/** A line without its trailing `# comment` (none of the block's commands has a `#` inside quotes). */
const withoutComment = (line: string): string => line.replace(/\s+#.*$/, '').trim();

/** What `source <file>` sets, read through bash as the reader's shell would. */
function sourced(file: string): Record<string, string> {
  const r = spawnSync('bash', ['-c', 'source "$1" && env', 'bash', file], { encoding: 'utf8', env: {} });
  if (r.status !== 0) throw new Error(`source ${file} failed: ${r.stderr}`);
  return Object.fromEntries(
    r.stdout.split('\n').map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

describe('README: the operator CLI block against `npm start -- --keep-running`', () => {
  const commands = readmeCliCommands(readFileSync(join(ROOT, 'README.md'), 'utf8'));
  const namespace = randomNamespace('readme');
  const stateDir = mkdtempSync(join(tmpdir(), 'ormuz-readme-state-'));
  const envFile = join(stateDir, 'demo.env');
  let database: TestDatabase;
  let demo: Tracked | undefined;
  let nc: NatsConnection | undefined;

  const demoContext = () => `--- demo stdout:\n${demo?.stdout()}\n--- demo stderr:\n${demo?.stderr()}`;
  /** The demo's NATS server as the CLI of the README reaches it: the settings in demo.env (user `cli`). */
  const demoNats = async () => {
    const settings = sourced(envFile);
    return (nc ??= await connectNats({
      url: settings.NATS_URL!,
      name: 'ormuz-readme-e2e',
      user: settings.NATS_USER,
      password: settings.NATS_PASSWORD,
    }));
  };

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await killAll();
    await nc?.close();
    await database?.drop();
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('starts with the demo and its settings for the CLI, where the demo writes them by default', () => {
    expect(withoutComment(commands[0] ?? '')).toBe('npm start -- --keep-running');
    const source = /^source (\S+)$/.exec(withoutComment(commands[1] ?? ''));
    expect(source?.[1]).toBe(relative(ROOT, join(demoStateDir({}), 'demo.env')));
    expect(DEMO_NAMESPACE).toBe('demo');
    // Every example acts on the demo's own tenant, and the connected phone is the demo's.
    expect([DEMO_TENANT, DEMO_DEVICE]).toEqual(['demo', 'phone-1']);
    for (const c of commands.slice(2)) expect(c).not.toMatch(/--tenant (?!demo\b)/);
    expect(commands.some((c) => c.includes('--device phone-1'))).toBe(true);
    // What `npx ormuz` runs from the repository root.
    expect(realpathSync(join(ROOT, 'node_modules/.bin/ormuz'))).toBe(
      realpathSync(join(ROOT, 'tools/cli/bin/ormuz.js')),
    );
  });

  it('runs every command of the block as written, each exiting 0', async () => {
    // `npm start -- --keep-running` is `ormuz demo --keep-running` after a build (the e2e run has built already).
    const demoArgs = withoutComment(commands[0]!)
      .replace(/^npm start -- /, '')
      .split(/\s+/);
    demo = spawnTracked(process.execPath, [cliEntry(), 'demo', ...demoArgs], {
      // As a plain `npm start`: no NATS named, so the demo runs its own.
      NATS_URL: '',
      NATS_USER: '',
      NATS_PASSWORD: '',
      DATABASE_URL: database.url,
      ORMUZ_NAMESPACE: namespace,
      ORMUZ_DEMO_STATE_DIR: stateDir,
    });
    await waitFor(
      () => {
        if (demo!.hasExited()) throw new Error(`the demo exited\n${demoContext()}`);
        return demo!.stdout().includes('platform running');
      },
      { timeoutMs: 100_000, intervalMs: 100, message: 'the demo to keep running' },
    );

    // What the demo wrote for the CLI: its own server, user cli, the namespace it runs in, a token; for its owner only.
    const settings = sourced(envFile);
    expect(settings).toMatchObject({ NATS_USER: 'cli', ORMUZ_NAMESPACE: namespace });
    expect(settings.NATS_URL).toMatch(/^nats:\/\/127\.0\.0\.1:\d+$/);
    expect(settings.ORMUZ_TOKEN).toMatch(/^ey/);
    expect(statSync(envFile).mode & 0o777).toBe(0o600);

    let lastCall: string | undefined;
    let lastApproval: string | undefined;
    let lastWebhook: string | undefined;
    const expectations: [RegExp, RegExp][] = [
      [/ormuz call submit/, /^call call_[0-9a-f]{32}: (authorized|staged)/m],
      [/ormuz call status/, /status: \w+/],
      // The decider is the token's subject: the demo.env token's.
      [/ormuz approvals approve/, /approved[\s\S]*decided by operator@demo/],
      [/ormuz call seal/, /: sealed/],
      [/ormuz events tail/, /"specversion":"1\.0"/],
      [/ormuz risk classify/, /"level":"high"/],
      [/ormuz webhooks set/, /^wh_[0-9a-f]{16} {2}enabled [\s\S]*\nwhsec_/m],
      // a1 may not send messages: the scripted agent's send is refused, and it answers with what happened.
      [/ormuz agent run/, /^answer: Here is what happened\./m],
      [/ormuz call status .*--as-of/, /status: \w+/],
      [/ormuz whatif/, /^whatif: \d+ past request\(s\) judged/m],
    ];
    for (const command of commands.slice(2)) {
      if (!/(^|\| *)npx ormuz /m.test(command))
        throw new Error(`The README's CLI block has a step this test does not know: ${command}`);
      const line = command
        .replace(/<call-id>/g, () => lastCall ?? '<call-id>')
        .replace(/<approval-id>/g, () => lastApproval ?? '<approval-id>')
        .replace(/<webhook-id>/g, () => lastWebhook ?? '<webhook-id>');
      expect(line).not.toMatch(/<[a-z-]+>/);
      // The shell of the block's second line: `source` of the file the demo wrote, here in the test's directory.
      const shell = withoutComment(commands[1]!).replace(/\S+$/, JSON.stringify(envFile));
      const r = spawnSync('bash', ['-c', `${NPX_ORMUZ}\n${shell}\n${line}`], {
        cwd: ROOT,
        env: { ...process.env, NATS_URL: '', NATS_USER: '', NATS_PASSWORD: '', ORMUZ_TOKEN: '' },
        encoding: 'utf8',
        // `agent run` follows a whole conversation (model turns, a call run on the phone): it gets longer.
        timeout: /ormuz agent run/.test(line) ? 90_000 : 30_000,
      });
      if (r.status !== 0)
        throw new Error(`${line}\nexited ${r.status ?? r.signal}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
      for (const [which, shows] of expectations) if (which.test(line)) expect(r.stdout).toMatch(shows);
      lastCall = [...r.stdout.matchAll(/call_[0-9a-f]{32}/g)].at(-1)?.[0] ?? lastCall;
      lastApproval = [...r.stdout.matchAll(/apr_[0-9a-f]{32}/g)].at(-1)?.[0] ?? lastApproval;
      lastWebhook = [...r.stdout.matchAll(/wh_[0-9a-f]{16}/g)].at(-1)?.[0] ?? lastWebhook;
    }
  }, 300_000);

  it('prints every port the demo serves, how the CLI joins it, and the owner token', async () => {
    // The demo prints this block right after "platform running"; its pipe to this process may deliver it later.
    const out = await waitFor(
      () => {
        const printed = demo?.stdout() ?? '';
        return printed.includes('Sign in to the approvals console') ? printed : undefined;
      },
      { message: 'the demo to print how to reach its platform' },
    );
    const approvals = /approvals HTTP API +(http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
    expect(approvals).toBeDefined();
    expect(out).toContain(`approvals console   ${approvals}/console`);
    expect(out).toMatch(/device WebSocket +ws:\/\/127\.0\.0\.1:\d+\/v1\/devices/);
    expect(out).toMatch(/NATS +nats:\/\/127\.0\.0\.1:\d+ \(the demo's own server/);
    expect(out).toContain(`source ${envFile}`);
    expect(out).toMatch(/Owner token .*\n +ey\S+/);
    expect(out).toMatch(
      /NATS users connected: approvals, audit, cli, device-bridge, mcp-gateway, model-loop, policy \(/,
    );
  });

  it('reports a service killed with SIGKILL and restarts it on the same port; the phone comes back', async () => {
    if (!demo) throw new Error('the demo is not running');
    const nc = await demoNats();
    const port = /device WebSocket +ws:\/\/127\.0\.0\.1:(\d+)/.exec(demo.stdout())?.[1];
    const before = await adminFor({}).then((credential) =>
      callRpc(nc, namespace, 'device-bridge.health', {}, { credential, timeoutMs: 5000, checkReply: true }),
    );
    process.kill(before.pid, 'SIGKILL');
    await waitFor(() => demo!.stdout().includes('device-bridge is back'), {
      timeoutMs: 60_000,
      intervalMs: 100,
      message: 'the supervisor to restart device-bridge',
    });
    expect(demo.stdout()).toMatch(/device-bridge was killed \(SIGKILL\); restarting it in \d+ ms \(restart 1 of \d+\)/);
    const after = await adminFor({}).then((credential) =>
      callRpc(nc, namespace, 'device-bridge.health', {}, { credential, timeoutMs: 5000, checkReply: true }),
    );
    expect(after.pid).not.toBe(before.pid);
    expect(after.endpoints.devices).toBe(`ws://127.0.0.1:${port}/v1/devices`);
    await waitFor(
      async () => {
        const r = await adminFor({ tenant: DEMO_TENANT }).then((credential) =>
          callRpc(nc, namespace, 'device-bridge.devices', { tenant: DEMO_TENANT }, { timeoutMs: 2000, credential }),
        );
        return r.devices.some((d) => d.device_id === DEMO_DEVICE);
      },
      { timeoutMs: 30_000, intervalMs: 200, message: 'the simulated phone to reconnect to the restarted bridge' },
    );
  }, 120_000);

  it("leaves nothing behind when stopped: the phone's credential and the agent's key revoked, its journal deleted, the server stopped", async () => {
    if (!demo) throw new Error('the demo is not running');
    const journal = /its journal: (\S+),/.exec(demo.stdout())?.[1];
    expect(journal && existsSync(journal)).toBe(true);
    await nc?.close();
    nc = undefined;
    demo.child.kill('SIGTERM'); // Ctrl-C's path: the demo stops its services and its server itself
    const { code } = await exitWithin(demo, 30_000, 'the demo after SIGTERM');
    expect(code).toBe(0);
    expect(existsSync(journal!)).toBe(false);
    expect(existsSync(envFile)).toBe(false);
    expect(existsSync(join(stateDir, 'nats', 'server.pid'))).toBe(false);
    expect(readFileSync(join(stateDir, 'logs', 'nats-server.log'), 'utf8')).toMatch(/Server Exiting/);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const credentials = await client.query<{ active: number }>(
        'select (count(*) filter (where revoked_at is null))::int as active from device_bridge.device_credentials where tenant = $1 and device_id = $2',
        [DEMO_TENANT, DEMO_DEVICE],
      );
      expect(credentials.rows).toEqual([{ active: 0 }]);
      const keys = await client.query<{ active: number }>(
        'select (count(*) filter (where revoked_at is null))::int as active from auth.api_keys where tenant = $1 and agent_id = $2',
        [DEMO_TENANT, DEMO_AGENT],
      );
      expect(keys.rows).toEqual([{ active: 0 }]);
    } finally {
      await client.end();
    }
  }, 60_000);
});
