/**
 * The main job, end to end: five service processes, a simulated phone, the scripted agent and an owner approving
 * over HTTP, against the real NATS and Postgres. Runs the built CLI exactly as `npm start` does.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createTestDatabase, randomNamespace, testEnv, type TestDatabase } from '@ormuz/testing';

const ROOT = join(import.meta.dirname, '..', '..');

function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, 'tools/cli/dist/main.js'), ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += String(d)));
    child.stderr.on('data', (d) => (stderr += String(d)));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('demo (npm start)', () => {
  const { natsUrl } = testEnv();
  let database: TestDatabase;
  let databaseUrl: string;
  beforeAll(async () => {
    database = await createTestDatabase();
    databaseUrl = database.url;
  });
  afterAll(() => database.drop());

  it('runs one low-risk and one approved high-risk call through all five services and exits 0', async () => {
    const r = await runCli(['demo', '--timeout', '60000'], {
      NATS_URL: natsUrl,
      DATABASE_URL: databaseUrl,
      ORMUZ_NAMESPACE: randomNamespace('e'),
    });
    if (r.code !== 0) throw new Error(`demo exited ${r.code}\n${r.stdout}\n${r.stderr}`);
    expect(r.stdout).toMatch(/owner approved apr_/);
    expect(r.stdout).toMatch(/device\.screen_observe: succeeded/);
    expect(r.stdout).toMatch(/device\.send_message: succeeded/);
    expect(r.stdout).toMatch(/staged\.v1 .*\n.*approved\.v1 .*\n.*authorized\.v1/);
    expect(r.stdout).toMatch(/audit row: status=succeeded decided_by=owner@demo/);
  });

  it('records a denial as it was, and the message is never sent', async () => {
    const r = await runCli(['demo', '--deny', '--timeout', '60000'], {
      NATS_URL: natsUrl,
      DATABASE_URL: databaseUrl,
      ORMUZ_NAMESPACE: randomNamespace('e'),
    });
    if (r.code !== 0) throw new Error(`demo exited ${r.code}\n${r.stdout}\n${r.stderr}`);
    expect(r.stdout).toMatch(/device\.send_message: denied/);
    expect(r.stdout).not.toMatch(/send_message: succeeded/);
  });

  it('names the dependency, its URL and how to start it when NATS is unreachable', async () => {
    const r = await runCli(['demo'], { NATS_URL: 'nats://127.0.0.1:1', DATABASE_URL: databaseUrl });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/NATS is not reachable at nats:\/\/127\.0\.0\.1:1/);
    expect(r.stderr).toMatch(/nats-server -js/);
  });

  it('names Postgres, its URL and how to start it when Postgres is unreachable', async () => {
    const r = await runCli(['demo'], { NATS_URL: natsUrl, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/postgres' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/PostgreSQL is not reachable at postgres:\/\/postgres@127\.0\.0\.1:1/);
  });
});
