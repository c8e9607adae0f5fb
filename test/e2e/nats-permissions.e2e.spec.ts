/**
 * The whole platform under the NATS authorization it ships (infra/nats/authorization.conf): the demo and `ormuz
 * migrate` run against a nats-server of the test's own, the CLI as user `cli` and each service as its own user. Every
 * service does its real work (streams, consumers, appends, bridge links, model-loop asking policy), and the server
 * reports not one permissions violation while they do.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import {
  createTestDatabase,
  randomNamespace,
  startNatsServer,
  type NatsServerHandle,
  type TestDatabase,
} from '@ormuz/testing';
import { cliEntry, exitWithin, killAll, ROOT, spawnTracked } from './support/processes.js';

const SERVICES = ['policy', 'approvals', 'device-bridge', 'model-loop', 'audit', 'mcp-gateway'] as const;
const variable = (user: string) => `NATS_${user.toUpperCase().replaceAll('-', '_')}_PASSWORD`;
/** A letter first: nats-server reads the variable as a configuration value (see authorization.conf). */
const passwords = Object.fromEntries(
  [...SERVICES, 'cli'].map((user) => [variable(user), `p${randomBytes(12).toString('hex')}`]),
);

async function runCli(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 75_000) {
  // Only what the test names: no NATS_USER or password of the developer's shell leaks in.
  const t = spawnTracked(process.execPath, [cliEntry(), ...args], { NATS_USER: '', NATS_PASSWORD: '', ...env });
  const { code } = await exitWithin(t, timeoutMs, `ormuz ${args.join(' ')}`);
  return { code, stdout: t.stdout(), stderr: t.stderr() };
}

describe('the platform under the shipped NATS authorization', () => {
  let server: NatsServerHandle;
  const databases: TestDatabase[] = [];
  const freshDatabase = async () => {
    const database = await createTestDatabase();
    databases.push(database);
    return database.url;
  };
  const violations = () =>
    server
      .log()
      .split('\n')
      .filter((line) => /Violation/.test(line));

  beforeAll(async () => {
    server = await startNatsServer({
      include: [join(ROOT, 'infra', 'nats', 'authorization.conf')],
      env: passwords,
    });
  });
  afterAll(async () => {
    await killAll();
    await server?.stop();
    for (const database of databases) await database.drop();
  });

  it('migrates as each service, then runs the demo through all six services without a permissions violation', async () => {
    const env = {
      NATS_URL: server.url,
      DATABASE_URL: await freshDatabase(),
      ORMUZ_NAMESPACE: randomNamespace('e'),
      NATS_USER: 'cli',
      NATS_PASSWORD: passwords[variable('cli')],
      ...passwords,
    };
    // Six services start at once: on a loaded two-core machine that alone can take half a minute.
    const migrated = await runCli(['--json', 'migrate'], env, 90_000);
    if (migrated.code !== 0) throw new Error(`migrate exited ${migrated.code}\n${migrated.stdout}\n${migrated.stderr}`);
    expect((JSON.parse(migrated.stdout) as { results: { ok: boolean }[] }).results).toHaveLength(SERVICES.length);

    const r = await runCli(['demo', '--timeout', '60000'], env);
    if (r.code !== 0) throw new Error(`demo exited ${r.code}\n${r.stdout}\n${r.stderr}\n${violations().join('\n')}`);
    expect(r.stdout).toMatch(/owner approved apr_/);
    expect(r.stdout).toMatch(/device\.screen_observe: succeeded/);
    expect(r.stdout).toMatch(/device\.send_message: succeeded/);
    expect(r.stdout).toMatch(/audit row: status=succeeded decided_by=owner@demo/);
    expect(violations()).toEqual([]);
  }, 180_000);

  it('refuses a CLI without credentials, and one that would hand its own user to the services', async () => {
    const anonymous = await runCli(['approvals', 'list', '--tenant', 'demo'], { NATS_URL: server.url });
    expect(anonymous.code).toBe(1);
    expect(anonymous.stderr).toMatch(/refused a connection without credentials/);
    expect(anonymous.stderr).toMatch(/NATS_USER and NATS_PASSWORD/);

    const cliOnly = await runCli(['migrate'], {
      NATS_URL: server.url,
      DATABASE_URL: await freshDatabase(),
      NATS_USER: 'cli',
      NATS_PASSWORD: passwords[variable('cli')],
    });
    expect(cliOnly.code).toBe(1);
    expect(cliOnly.stdout).toMatch(/policy: .*NATS_POLICY_PASSWORD is not set/);
  }, 60_000);
});
