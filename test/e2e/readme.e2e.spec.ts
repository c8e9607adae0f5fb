/**
 * The README's operator-CLI block, read from README.md and run as written against a running demo platform
 * (`npm start -- --keep-running`), then what `--keep-running` promises: every port printed, a killed service reported
 * and restarted, and nothing left behind (the phone's credential revoked, its journal deleted) when the demo stops.
 *
 * The block's lines run through bash as a reader would paste them, with the substitutions a reader makes too:
 * `<call-id>` / `<approval-id>` become the last such id the previous commands printed. For isolation from other runs
 * on the same servers, the demo and the CLI share a random namespace and a fresh database instead of `demo`; the test
 * checks that the README's `export ORMUZ_NAMESPACE=…` names the namespace the demo really uses by default.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import pg from 'pg';
import { callRpc } from '@ormuz/service-kit';
import { createTestDatabase, randomNamespace, testEnv, waitFor, type TestDatabase, adminFor } from '@ormuz/testing';
import { DEMO_DEVICE, DEMO_NAMESPACE, DEMO_TENANT } from '../../tools/cli/src/commands/demo.command.js';
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

describe('README: the operator CLI block against `npm start -- --keep-running`', () => {
  const commands = readmeCliCommands(readFileSync(join(ROOT, 'README.md'), 'utf8'));
  const { natsUrl } = testEnv();
  const namespace = randomNamespace('readme');
  let database: TestDatabase;
  let demo: Tracked | undefined;
  let nc: NatsConnection | undefined;

  const demoContext = () => `--- demo stdout:\n${demo?.stdout()}\n--- demo stderr:\n${demo?.stderr()}`;

  beforeAll(async () => {
    database = await createTestDatabase();
    nc = await connect({ servers: natsUrl, name: 'ormuz-readme-e2e' });
  });
  afterAll(async () => {
    await killAll();
    await nc?.close();
    await database?.drop();
  });

  it('starts with the demo and the namespace the demo really uses', () => {
    expect(withoutComment(commands[0] ?? '')).toBe('npm start -- --keep-running');
    expect(withoutComment(commands[1] ?? '')).toBe(`export ORMUZ_NAMESPACE=${DEMO_NAMESPACE}`);
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
      NATS_URL: natsUrl,
      DATABASE_URL: database.url,
      ORMUZ_NAMESPACE: namespace,
    });
    await waitFor(
      () => {
        if (demo!.hasExited()) throw new Error(`the demo exited\n${demoContext()}`);
        return demo!.stdout().includes('platform running');
      },
      { timeoutMs: 100_000, intervalMs: 100, message: 'the demo to keep running' },
    );

    let lastCall: string | undefined;
    let lastApproval: string | undefined;
    const expectations: [RegExp, RegExp][] = [
      [/ormuz call submit/, /^call call_[0-9a-f]{32}: (authorized|staged)/m],
      [/ormuz call status/, /status: \w+/],
      [/ormuz approvals approve/, /approved[\s\S]*decided by owner@demo/],
      [/ormuz call seal/, /: sealed/],
      [/ormuz events tail/, /"specversion":"1\.0"/],
      [/ormuz migrate/, /^ok +audit: /m],
      [/ormuz risk classify/, /"level":"high"/],
    ];
    for (const command of commands.slice(2)) {
      if (!/(^|\| *)npx ormuz /m.test(command))
        throw new Error(`The README's CLI block has a step this test does not know: ${command}`);
      const line = command
        .replace(/<call-id>/g, () => lastCall ?? '<call-id>')
        .replace(/<approval-id>/g, () => lastApproval ?? '<approval-id>');
      expect(line).not.toMatch(/<[a-z-]+>/);
      const r = spawnSync('bash', ['-c', `${NPX_ORMUZ}\n${line}`], {
        cwd: ROOT,
        env: { ...process.env, NATS_URL: natsUrl, DATABASE_URL: database.url, ORMUZ_NAMESPACE: namespace },
        encoding: 'utf8',
        timeout: 30_000,
      });
      if (r.status !== 0)
        throw new Error(`${line}\nexited ${r.status ?? r.signal}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
      for (const [which, shows] of expectations) if (which.test(line)) expect(r.stdout).toMatch(shows);
      lastCall = [...r.stdout.matchAll(/call_[0-9a-f]{32}/g)].at(-1)?.[0] ?? lastCall;
      lastApproval = [...r.stdout.matchAll(/apr_[0-9a-f]{32}/g)].at(-1)?.[0] ?? lastApproval;
    }
  }, 200_000);

  it('prints every port the demo serves', () => {
    const out = demo?.stdout() ?? '';
    expect(out).toMatch(/approvals HTTP API +http:\/\/127\.0\.0\.1:\d+/);
    expect(out).toMatch(/approvals console +http:\/\/127\.0\.0\.1:\d+\/console/);
    expect(out).toMatch(/device WebSocket +ws:\/\/127\.0\.0\.1:\d+\/v1\/devices/);
    expect(out).toContain(`export ORMUZ_NAMESPACE=${namespace}`);
  });

  it('reports a service killed with SIGKILL and restarts it on the same port; the phone comes back', async () => {
    if (!demo || !nc) throw new Error('the demo is not running');
    const port = /device WebSocket +ws:\/\/127\.0\.0\.1:(\d+)/.exec(demo.stdout())?.[1];
    const before = await adminFor({}).then((credential) =>
      callRpc(nc!, namespace, 'device-bridge.health', {}, { credential, timeoutMs: 5000, checkReply: true }),
    );
    process.kill(before.pid, 'SIGKILL');
    await waitFor(() => demo!.stdout().includes('device-bridge is back'), {
      timeoutMs: 60_000,
      intervalMs: 100,
      message: 'the supervisor to restart device-bridge',
    });
    expect(demo.stdout()).toMatch(/device-bridge was killed \(SIGKILL\); restarting it in \d+ ms \(restart 1 of \d+\)/);
    const after = await adminFor({}).then((credential) =>
      callRpc(nc!, namespace, 'device-bridge.health', {}, { credential, timeoutMs: 5000, checkReply: true }),
    );
    expect(after.pid).not.toBe(before.pid);
    expect(after.endpoints.devices).toBe(`ws://127.0.0.1:${port}/v1/devices`);
    await waitFor(
      async () => {
        const r = await adminFor({ tenant: DEMO_TENANT }).then((credential) =>
          callRpc(nc!, namespace, 'device-bridge.devices', { tenant: DEMO_TENANT }, { timeoutMs: 2000, credential }),
        );
        return r.devices.some((d) => d.device_id === DEMO_DEVICE);
      },
      { timeoutMs: 30_000, intervalMs: 200, message: 'the simulated phone to reconnect to the restarted bridge' },
    );
  }, 120_000);

  it('leaves nothing behind when stopped: the phone credential revoked, its journal deleted', async () => {
    if (!demo) throw new Error('the demo is not running');
    const journal = /its journal: (\S+),/.exec(demo.stdout())?.[1];
    expect(journal && existsSync(journal)).toBe(true);
    demo.child.kill('SIGTERM'); // Ctrl-C's path: the demo stops its services itself
    const { code } = await exitWithin(demo, 30_000, 'the demo after SIGTERM');
    expect(code).toBe(0);
    expect(existsSync(journal!)).toBe(false);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ active: number }>(
        'select (count(*) filter (where revoked_at is null))::int as active from device_bridge.device_credentials where tenant = $1 and device_id = $2',
        [DEMO_TENANT, DEMO_DEVICE],
      );
      expect(rows).toEqual([{ active: 0 }]);
    } finally {
      await client.end();
    }
  }, 60_000);
});
