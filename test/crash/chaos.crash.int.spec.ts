/**
 * The chaos suite for 60 seconds (the harness behind `npm run chaos`, in tools/benches/src/chaos): calls across two
 * tenants, four agents and 40 simulated devices while the nemesis kills replicas of policy, approvals, the
 * device-bridge, audit and model-loop (two of each) with SIGKILL, kills one node of the three-node NATS cluster (the
 * streams at replicas 3) and restarts it on its store, drops devices' connections and reboots devices. Afterwards no
 * acknowledged submit is lost, no call ran twice, no outcome is recorded that no device reported, none is stuck past
 * its deadline (with 30 s of recovery), every read model equals its rebuild from the log, and no stream holds two
 * messages accepted on one expected sequence or one message id twice. It runs the compiled services: `npm run build`
 * first.
 */
import { jest } from '@jest/globals';
import { hasExpectedSequenceRace } from '@ormuz/event-log';
import { createTestDatabase, type TestDatabase } from '@ormuz/testing';
import { ANOMALY_KINDS } from '../../tools/benches/src/chaos/checker.js';
import { runChaos } from '../../tools/benches/src/chaos/runner.js';

// About two minutes on a two-core machine (start, 60 s of chaos, recovery, rebuilds); the bound is for a busy one.
jest.setTimeout(1_200_000);

describe('the platform under the chaos nemesis', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database?.drop());

  it('loses, repeats, invents and strands no call, its read models equal a rebuild, and its log keeps its sequences', async () => {
    const seed = Math.floor(Math.random() * 2 ** 31);
    const report = await runChaos({
      databaseUrl: database.url,
      seconds: 60,
      devices: 40,
      seed,
      progress: (line) => process.stderr.write(`chaos (seed ${seed}): ${line}\n`),
    });
    // A server with the replicas-3 race (before 2.9.21: nats-server#4320) accepts appends made at once on one expected
    // sequence, and the checker says so; that is the server's fault, so on such a server it is reported here, not
    // failed. `tools/fetch-nats-server.sh` (run by .ci/run) provides a server without it, and then it must be empty.
    const racy = hasExpectedSequenceRace(report.natsVersion);
    const { sequence, ...others } = report.verdict.anomalies;
    if (racy && sequence.length > 0) {
      process.stderr.write(
        `chaos (seed ${seed}): nats-server ${report.natsVersion} has the replicas-3 race: ${sequence.length} ` +
          `sequence anomalies, not counted (run tools/fetch-nats-server.sh for a server without it)\n`,
      );
    }
    const kinds = ANOMALY_KINDS.filter((kind) => !racy || kind !== 'sequence');
    // The seed first, so a failure can be replayed with `npm run chaos -- --seconds 60 --devices 40 --seed <seed>`.
    expect({ seed, anomalies: racy ? others : report.verdict.anomalies }).toEqual({
      seed,
      anomalies: Object.fromEntries(kinds.map((kind) => [kind, []])),
    });
    expect(report.verdict.totals.acknowledged).toBeGreaterThan(0);
    expect(report.submitErrors).toEqual([]);
    expect(Object.values(report.faults).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
  });
});
