/**
 * The demo survives a NATS restart: a private nats-server (JetStream on a file store) is SIGKILLed while the
 * conversation is under way and started again on the same port and store. Every service reconnects on its own, the
 * durable consumers resume from the store, and the demo finishes exactly as without the restart. Runs the built CLI
 * as `npm start` does.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, freePort, randomNamespace, waitFor, type TestDatabase } from '@ormuz/testing';
import { cliEntry, DEMO_LOG_DIR, exitWithin, killAll, NatsServerProcess, spawnTracked } from './support/processes.js';

const DEMO_TIMEOUT_MS = 45_000;

describe('demo across a NATS restart', () => {
  // A namespace owns its database (decision 0009): each demo run gets both fresh.
  const databases: TestDatabase[] = [];
  let storeDir: string;
  let nats: NatsServerProcess;

  beforeAll(async () => {
    storeDir = mkdtempSync(join(tmpdir(), 'ormuz-nats-restart-'));
    nats = new NatsServerProcess(await freePort(), storeDir);
    await nats.start();
  });

  afterAll(async () => {
    await killAll();
    for (const database of databases) await database.drop();
    if (storeDir) rmSync(storeDir, { recursive: true, force: true });
  });

  /**
   * Runs the demo, SIGKILLs NATS and starts it again on the same port and store once `killAt` shows on the demo's
   * stdout, and returns the demo's output after it exited 0 (or fails with the output and where the logs are).
   */
  async function demoAcrossRestart(killAt: RegExp): Promise<string> {
    const namespace = randomNamespace('r');
    const database = await createTestDatabase();
    databases.push(database);
    const demo = spawnTracked(process.execPath, [cliEntry(), 'demo', '--timeout', String(DEMO_TIMEOUT_MS)], {
      NATS_URL: nats.url,
      DATABASE_URL: database.url,
      ORMUZ_NAMESPACE: namespace,
    });
    const context = () =>
      `namespace ${namespace}; service logs in ${DEMO_LOG_DIR}\n--- arrivals: ${demo.timeline()}` +
      `\n--- demo stdout:\n${demo.stdout()}\n--- demo stderr:\n${demo.stderr()}`;
    await waitFor(
      () => {
        if (demo.hasExited()) throw new Error(`the demo exited before printing ${killAt}\n${context()}`);
        return killAt.test(demo.stdout());
      },
      { timeoutMs: 40_000, intervalMs: 10, message: `the demo to print ${killAt}` },
    );
    await nats.kill();
    await nats.start();

    const { code, signal } = await exitWithin(demo, DEMO_TIMEOUT_MS + 10_000, 'the demo after the NATS restart');
    if (code !== 0) throw new Error(`demo exited ${code ?? signal} after the NATS restart\n${context()}`);
    return demo.stdout();
  }

  function expectCompleteDemo(out: string): void {
    expect(out).toMatch(/owner approved apr_/);
    expect(out).toMatch(/device\.screen_observe: succeeded/);
    expect(out).toMatch(/device\.send_message: succeeded/);
    expect(out).toMatch(/staged\.v1 .*\n.*approved\.v1 .*\n.*authorized\.v1/);
    expect(out).toMatch(/audit row: status=succeeded decided_by=owner@demo/);
    expect(out).toMatch(/\nresult: .*Alice Martin succeeded/);
    // Nothing ran twice: one start and one outcome per call, despite the redeliveries a restart causes.
    expect(out.match(/started\.v1/g)).toHaveLength(2);
    expect(out.match(/succeeded\.v1/g)).toHaveLength(2);
  }

  it('finishes when NATS is killed just after the conversation starts (driver, gate and bridge in flight)', async () => {
    expectCompleteDemo(await demoAcrossRestart(/conversation conv_\S+ started/));
  }, 90_000);

  it('finishes when NATS is killed while the conversation waits for the owner (the approval crosses the restart)', async () => {
    expectCompleteDemo(await demoAcrossRestart(/owner inbox: apr_/));
  }, 90_000);
});
