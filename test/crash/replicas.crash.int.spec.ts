/**
 * Two replicas of model-loop and of audit (decision 0033): while conversations run, the holders of both leases are
 * killed with SIGKILL at random points and a standby of each takes over (a new standby is started after each kill).
 * Afterwards the log shows no tool call submitted or run twice, no conversation lost or stuck, each told the outcomes
 * that happened, and audit's archive holds exactly the events of every stream. The harness is the model-loop chaos
 * run's (tools/benches/src/model-loop/chaos.ts, `npm run chaos:model-loop -- --replicas 2` for longer runs); it runs
 * the compiled services: `npm run build` first.
 */
import { jest } from '@jest/globals';
import { createTestDatabase, testEnv, type TestDatabase } from '@ormuz/testing';
import { runModelLoopChaos } from '../../tools/benches/src/model-loop/chaos.js';

// Well under a minute on an idle two-core machine; the bound is for a busy one.
jest.setTimeout(600_000);

const TRIALS = 3;

describe('two replicas of model-loop and audit, their lease holders killed with -9', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database?.drop());

  it('hands the consumers over to a standby and loses, repeats and strands nothing', async () => {
    const seed = Math.floor(Math.random() * 2 ** 31);
    const report = await runModelLoopChaos({
      natsUrl: testEnv().natsUrl,
      databaseUrl: database.url,
      trials: TRIALS,
      replicas: 2,
      seed,
      settleMs: 180_000,
      progress: (line) => process.stderr.write(`replicas (seed ${seed}): ${line}\n`),
    });
    expect({ seed, problems: report.problems }).toEqual({ seed, problems: [] });
    expect(report).toMatchObject({
      trials: TRIALS,
      duplicates: 0,
      lost: 0,
      stuck: 0,
      mismatched: 0,
      miscounted: 0,
      unarchived: 0,
    });
    expect(report.conversations).toBe(TRIALS * 2);
    // Each trial killed both leaders, and a standby took each lease over.
    expect(report.handovers.map((h) => h.service).sort()).toEqual([
      ...Array<string>(TRIALS).fill('audit'),
      ...Array<string>(TRIALS).fill('model-loop'),
    ]);
  });
});
