/**
 * `npm run chaos:cluster -- --trials 10 [--seed N] [--json]`: the expected-sequence race, looked for where it lives.
 *
 * A three-node JetStream cluster of the machine's `nats-server` (`startNatsCluster`) holds a calls stream at replicas
 * 3. Writers, each on its own connection to its own server, race on a few subjects: each loads the subject's last
 * sequence and appends one event expecting it. In each trial the stream's leader is killed with SIGKILL at a seeded
 * moment and restarted on its store a seeded moment later. Then two independent verdicts:
 *
 * - the writers': two writers acknowledged on one (subject, expected sequence) both won a race only one may win;
 * - the log's: `checkStreamSequences` finds a message whose expected sequence is not the message before it on its
 *   subject, or a message id stored twice.
 *
 * And every acknowledged append must be on the log at its sequence. nats-server before 2.9.21 can show the race; a run
 * that sees none proves nothing for that server, but a run that sees one shows that the check would catch it. Exit code
 * 1 when any count is not 0, or when the writers saw a race the log's check missed.
 */
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { aggregateSubject, envelope } from '@ormuz/contracts';
import {
  checkStreamSequences,
  ConcurrencyConflictError,
  connectNats,
  describeAnomaly,
  ensureStreams,
  EventStore,
  startNatsCluster,
  streamName,
} from '@ormuz/event-log';
import { counter, INCREMENTED } from '@ormuz/testing';
import { flag, log, option, printJson, printTable, progress, sleep, type BenchRow } from '../kit/index.js';
import { seededRandom } from '../model-loop/chaos.js';

const trials = Number(option('trials') ?? 5);
const seed = Number(option('seed') ?? Math.floor(Math.random() * 2 ** 31));
const writersPerSubject = Number(option('writers') ?? 3);
const subjects = Number(option('subjects') ?? 3);
const json = flag('json');
const random = seededRandom(seed);
const ns = `chaos${Math.floor(Math.random() * 1e9).toString(36)}`;
const stream = streamName(ns, 'calls');

log(`chaos:cluster: ${trials} kills of the stream leader, seed ${seed} (repeat with --seed=${seed})`);
const cluster = await startNatsCluster({ nodes: 3 });
const connections: NatsConnection[] = [];
const wins: { subject: string; expected: number; seq: number }[] = [];
let conflicts = 0;
const failures: string[] = [];
let running = true;

async function writer(index: number, id: string): Promise<void> {
  const nc = await connectNats({ url: cluster.nodes[index % cluster.nodes.length]!.url, name: `writer-${index}` });
  connections.push(nc);
  const store = new EventStore(jetstream(nc), await jetstreamManager(nc));
  const subject = aggregateSubject(ns, 'calls', 'acme', id);
  while (running) {
    try {
      const { version } = await store.load(stream, subject, counter, { fresh: true });
      const event = envelope(
        { type: INCREMENTED, data: { by: 1, total: version + 1 } },
        { source: '/chaos', subject: id, tenant: 'acme', correlationid: 'c', causationid: 'c', time: new Date() },
      );
      const result = await store.append(subject, [event], version);
      wins.push({ subject, expected: version, seq: result.version });
    } catch (err) {
      if (err instanceof ConcurrencyConflictError) conflicts++;
      else failures.push(String(err));
    }
  }
}

try {
  const admin = await connectNats({ url: cluster.url, name: 'chaos-admin' });
  connections.push(admin);
  const jsm = await jetstreamManager(admin);
  await ensureStreams(jsm, ns, ['calls'], { replicas: 3 });
  const writers = Array.from({ length: subjects * writersPerSubject }, (_, i) => writer(i, `s${i % subjects}`));
  for (let trial = 1; trial <= trials; trial++) {
    await sleep(200 + Math.floor(random() * 800));
    const leader = (await jsm.streams.info(stream)).cluster?.leader;
    if (!leader) continue;
    await cluster.node(leader).kill();
    await sleep(Math.floor(random() * 1500));
    await cluster.node(leader).restart();
    progress(`trial ${trial}: killed and restarted ${leader}; ${wins.length} appends, ${conflicts} conflicts`);
  }
  running = false;
  await Promise.all(writers);

  const byExpectation = new Map<string, number>();
  for (const w of wins) {
    const key = `${w.subject}@${w.expected}`;
    byExpectation.set(key, (byExpectation.get(key) ?? 0) + 1);
  }
  const doubleWins = [...byExpectation.values()].filter((n) => n > 1).length;
  const anomalies = await checkStreamSequences(jetstream(admin), stream);
  const store = new EventStore(jetstream(admin), jsm);
  let lost = 0;
  for (const subject of new Set(wins.map((w) => w.subject))) {
    const onLog = new Set((await store.history(stream, subject)).map((e) => e.seq));
    lost += wins.filter((w) => w.subject === subject && !onLog.has(w.seq)).length;
  }
  const missed = doubleWins > 0 && anomalies.length === 0;

  const row = (id: string, measure: string, figure: number, pass: boolean | undefined): BenchRow => ({
    id,
    measure,
    figure: String(figure),
    baseline: '',
    ratio: Number.NaN,
    ratioLabel: '',
    target: pass === undefined ? '' : '0',
    verdict: pass === undefined ? 'info' : pass ? 'PASS' : 'MISS',
  });
  const rows: BenchRow[] = [
    row('trials', 'kills of the stream leader', trials, undefined),
    row('appends', 'appends acknowledged', wins.length, undefined),
    row('conflicts', 'appends refused on a stale sequence', conflicts, undefined),
    row('failures', 'appends failed otherwise', failures.length, failures.length === 0),
    row('double_wins', 'races won twice (seen by the writers)', doubleWins, doubleWins === 0),
    row('anomalies', 'anomalies (checkStreamSequences)', anomalies.length, anomalies.length === 0),
    row('lost', 'acknowledged appends not on the log', lost, lost === 0),
  ];
  printTable(rows);
  for (const a of anomalies.slice(0, 20)) log(`  ${describeAnomaly(a)}`);
  for (const f of failures.slice(0, 5)) log(`  ${f}`);
  if (missed) log('  the writers saw a race that the check of the log did not: the check is wrong');
  if (json) printJson({ bench: 'chaos:cluster', seed, trials }, rows, { anomalies: anomalies.map(describeAnomaly) });
  if (failures.length + doubleWins + anomalies.length + lost > 0 || missed) process.exitCode = 1;
} finally {
  running = false;
  for (const nc of connections) await nc.close().catch(() => undefined);
  await cluster.stop();
}
