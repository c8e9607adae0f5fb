/**
 * model-loop under kill -9 at 20 random points while conversations run (the harness behind `npm run
 * chaos:model-loop`, in tools/benches/src/model-loop/chaos.ts): policy, approvals and the device-bridge run as
 * processes with a simulated phone, model-loop as a child process that is killed with SIGKILL and started again at
 * each point. Afterwards the log shows no tool call submitted or run twice, no conversation lost, none stuck, and each
 * conversation was told the outcomes that really happened, and the tenant's day as model-loop serves it equals a fold
 * of the usage stream that counts each recorded reply once (its turn, tokens and tool calls). It runs the compiled services: `npm run build` first.
 */
import { jest } from '@jest/globals';
import { createTestDatabase, testEnv, type TestDatabase } from '@ormuz/testing';
import { runModelLoopChaos } from '../../tools/benches/src/model-loop/chaos.js';

// About a minute on an idle two-core machine; the bound is for a busy one.
jest.setTimeout(900_000);

const TRIALS = 20;

describe('model-loop under kill -9 at random points', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database?.drop());

  it('submits no call twice, loses and strands no conversation, reports the outcomes that happened, and counts the tenant’s day as the log does', async () => {
    const seed = Math.floor(Math.random() * 2 ** 31);
    const report = await runModelLoopChaos({
      natsUrl: testEnv().natsUrl,
      databaseUrl: database.url,
      trials: TRIALS,
      seed,
      settleMs: 180_000,
      progress: (line) => process.stderr.write(`model-loop chaos (seed ${seed}): ${line}\n`),
    });
    // The seed first, so a failure can be replayed with `npm run chaos:model-loop -- --trials 20 --seed <seed>`.
    expect({ seed, problems: report.problems }).toEqual({ seed, problems: [] });
    expect(report).toMatchObject({ trials: TRIALS, duplicates: 0, lost: 0, stuck: 0, mismatched: 0, miscounted: 0 });
    expect(report.conversations).toBe(TRIALS * 2);
    expect(report.toolCalls).toBeGreaterThanOrEqual(TRIALS * 2 * 2);
  });
});
