/**
 * Event-log benchmark: every figure of the library beside a raw baseline measured in the same run, because the
 * machines are shared and figures drift from run to run.
 *
 *   npm run bench:log               # table
 *   npm run bench:log -- --json     # table, then one JSON object on the last line
 *   npm run bench:log -- --only=concurrent,projection   # a subset (sequential, concurrent, load, projection)
 *
 * Env: NATS_URL (default nats://127.0.0.1:4222), DATABASE_URL (an admin database the user may CREATE DATABASE from,
 * default postgres://postgres@127.0.0.1:5432/postgres). Everything the run creates — two streams under a random
 * namespace and one database — is deleted at the end, also on failure or Ctrl-C.
 *
 * Measured (library | raw baseline):
 *  1. sequential append: runCommand on one aggregate | js.publish of a same-sized payload, sequential
 *  2. appends over 64 concurrent aggregates: 64 runCommand loops | 64 loops publishing with expect.lastSubjectSequence
 *  3. cold load (fresh EventStore, snapshot header) in raw round trips | direct get last_by_subj;
 *     plus the fold fallback (snapshot of another stateVersion) and the warm (cached) load
 *  4. projection apply rate: ProjectionRunner start → catchUp() | single-row autocommit INSERTs, sequential
 * Raw and library samples are taken in interleaved blocks so a burst of load from elsewhere hits both sides alike.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { aggregateSubject, envelope, tenantFilter, type ContextName, type OrmuzEvent } from '@ormuz/contracts';
import { migrateSchema, openDatabase } from '@ormuz/postgres';
import {
  counter,
  countersTableMigration,
  countIncrement,
  INCREMENTED,
  resetCounters,
  type CounterCommand,
  type CounterState,
} from '@ormuz/testing';
import {
  connectNats,
  EventStore,
  ensureStreams,
  projectionBookkeepingMigration,
  ProjectionRunner,
  runCommand,
  SNAPSHOT_HEADER,
  SNAPSHOT_VERSION_HEADER,
  streamName,
  type Projection,
} from '@ormuz/event-log';
import {
  adminDbUrl,
  benchDbName,
  bounded,
  cleanUpOnSignals,
  createDatabase,
  databaseUrl,
  dropDatabase,
  errorRow,
  flag,
  fmt,
  fmtRate,
  log,
  natsUrl,
  now,
  option,
  printJson,
  printTable,
  printVerdicts,
  progress,
  sleep,
  startWatchdog,
  summarize,
  type BenchRow,
} from '../kit/index.js';

// ---------------------------------------------------------------------------------------------------------------
// Sizes. Bounded so the whole run stays well under 90 s on two busy cores; each phase also has a time cap.

const SEQ_N = 2000; // 1. sequential appends per side
const SEQ_BLOCK = 250; // interleaving block
const SEQ_WARMUP = 300;
const CONC_LOOPS = 64; // 2.
const CONC_TOTAL = 20_000; // per side per round
const CONC_ROUNDS = 2; // best round per side is reported
const CONC_WARMUP = 2_000;
const LOAD_AGGREGATES = 200; // 3.
const LOAD_EVENTS_PER_AGGREGATE = 6;
const LOAD_PASSES = 2; // samples per kind = aggregates × passes
const LOAD_WARMUP = 20;
const PROJ_EVENTS = 20_000; // 4.
const PROJ_AGGREGATES = 200;
const PROJ_WARMUP_EVENTS = 1_000;
const PROJ_BATCH = 256; // the runner's default, passed explicitly so the table can name it
const PG_RAW_MAX = 20_000; // raw insert baseline: this many rows or ...
const PG_RAW_MS = 2_500; // ... this long, whichever comes first
const PHASE_CAP_MS = 25_000; // any timed loop stops here and reports what it measured
const WATCHDOG_MS = 180_000;

const JSON_OUT = flag('json');
/** `--only=load,projection` runs just those sections (ids: sequential, concurrent, load, projection). */
const ONLY = option('only')?.split(',');
const NATS_URL = natsUrl();
const ADMIN_DB_URL = adminDbUrl();

// ---------------------------------------------------------------------------------------------------------------
// The counter of @ormuz/testing: a tiny aggregate, and its read model.

/** Same logic, another state version: every stored snapshot is ignored and loads fold the subject. */
const counterNoSnapshot: typeof counter = { ...counter, stateVersion: 2 };
const INCREMENT: CounterCommand = { type: 'Increment', by: 1 };

// ---------------------------------------------------------------------------------------------------------------
// Small helpers.

interface Lat {
  n: number;
  p50: number;
  p99: number;
  mean: number;
  /** Operations per second when run back to back (1000 / mean). */
  rate: number;
}
function lat(samples: readonly number[]): Lat {
  const { n, p50, p99, mean } = summarize(samples);
  return { n, p50, p99, mean, rate: 1000 / mean };
}

/** Runs `fn` `n` times sequentially, pushing each latency (ms) into `into`; stops at the phase cap. */
async function timeSeq(n: number, into: number[], fn: (i: number) => Promise<unknown>, capAt: number): Promise<void> {
  for (let i = 0; i < n && now() < capAt; i++) {
    const t0 = now();
    await fn(i);
    into.push(now() - t0);
  }
}

/** `loops` concurrent workers share a budget of `total` operations. Returns operations per second. */
async function timeConcurrent(
  total: number,
  loops: number,
  fn: (loop: number) => Promise<unknown>,
  capAt: number,
): Promise<{ ops: number; ms: number; rate: number; cpuUsPerOp: number }> {
  let taken = 0;
  let done = 0;
  const cpu0 = process.cpuUsage();
  const t0 = now();
  await Promise.all(
    Array.from({ length: loops }, async (_, loop) => {
      while (taken < total && now() < capAt) {
        taken++;
        await fn(loop);
        done++;
      }
    }),
  );
  const ms = now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { ops: done, ms, rate: (done / ms) * 1000, cpuUsPerOp: (cpu.user + cpu.system) / Math.max(1, done) };
}

type Row = BenchRow & { ratioLabel: string };

// ---------------------------------------------------------------------------------------------------------------
// Environment: namespace, streams, database, and their teardown.

const ns = `b${randomBytes(4).toString('hex')}`;
const dbName = benchDbName();
const contexts: ContextName[] = ['calls', 'conversations'];
const streams = contexts.map((c) => streamName(ns, c));
const appendStream = streamName(ns, 'calls');
const projStream = streamName(ns, 'conversations');

let nc: NatsConnection | undefined;
let jsmRef: JetStreamManager | undefined;
/** The bench database's read model (schema `bench`). */
interface BenchDB {
  counters: { projection: string; id: string; total: number; events: number; last_seq: number };
  raw_rows: { id: string; total: number; events: number; last_seq: number };
}
let db: Kysely<BenchDB> | undefined;
let dbCreated = false;
const runners: ProjectionRunner[] = [];
let cleaning: Promise<void> | undefined;

const adminUrlFor = (name: string): string => databaseUrl(ADMIN_DB_URL, name);

function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    for (const r of runners) await bounded('stopping a projection runner', r.stop());
    if (jsmRef) for (const s of streams) await bounded(`deleting stream ${s}`, jsmRef.streams.delete(s));
    await bounded('closing the database pool', db?.destroy() ?? Promise.resolve());
    if (dbCreated) await bounded(`dropping ${dbName}`, dropDatabase(ADMIN_DB_URL, dbName));
    await bounded('closing the NATS connection', nc?.close() ?? Promise.resolve());
  })();
  return cleaning;
}

cleanUpOnSignals(cleanup);

// ---------------------------------------------------------------------------------------------------------------
// 1. Sequential append.

async function benchSequential(js: JetStreamClient, store: EventStore, rows: Row[], out: Record<string, unknown>) {
  progress('1. sequential append');
  const ctx = (id: string) => ({
    source: '/bench',
    tenant: 'acme',
    aggregateId: id,
    correlationid: 'c',
    causationid: 'c',
  });
  const subj = (id: string) => aggregateSubject(ns, 'calls', 'acme', id);
  const rawSubj = (id: string) => aggregateSubject(ns, 'calls', 'raw', id);
  // A payload of the same size as the library's event body.
  const sample = JSON.stringify(
    envelope(
      { type: INCREMENTED, data: { by: 1, total: 1000 } },
      { source: '/bench', tenant: 'acme', subject: 'seq', correlationid: 'c', causationid: 'c', time: new Date() },
    ),
  );
  const payload = new TextEncoder().encode(sample);
  const snapshotHeader = JSON.stringify({ total: 1000, count: 1000 });

  const lib = (id: string) => () => runCommand(store, appendStream, subj(id), counter, INCREMENT, ctx(id));
  const raw = (id: string) => () => js.publish(rawSubj(id), payload);
  // Diagnostic: the same publish with everything the library asks of the server (msgID, expected sequence, headers).
  const rawOptsState = new Map<string, number>();
  const rawOpts = (id: string) => async () => {
    const h = natsHeaders();
    h.set(SNAPSHOT_HEADER, snapshotHeader);
    h.set(SNAPSHOT_VERSION_HEADER, '1');
    const ack = await js.publish(rawSubj(id), payload, {
      msgID: randomUUID(),
      expect: { lastSubjectSequence: rawOptsState.get(id) ?? 0 },
      headers: h,
    });
    rawOptsState.set(id, ack.seq);
  };

  const cap = now() + PHASE_CAP_MS;
  for (let i = 0; i < SEQ_WARMUP; i++) {
    await lib('seq-warm')();
    await raw('seq-warm')();
    await rawOpts('seq-warm-o')();
  }
  const L: number[] = [];
  const R: number[] = [];
  const O: number[] = [];
  const kinds = [
    [R, raw('seq')],
    [L, lib('seq')],
    [O, rawOpts('seq-o')],
  ] as const;
  for (let b = 0; b * SEQ_BLOCK < SEQ_N; b++) {
    const n = Math.min(SEQ_BLOCK, SEQ_N - b * SEQ_BLOCK);
    for (let k = 0; k < kinds.length; k++) {
      const [into, fn] = kinds[(b + k) % kinds.length]!; // rotate order between blocks
      await timeSeq(n, into, fn, cap);
    }
  }
  const l = lat(L);
  const r = lat(R);
  const o = lat(O);
  out.sequential = {
    library: l,
    raw: r,
    rawWithLibraryOptions: o,
    payloadBytes: payload.length,
    snapshotHeaderBytes: snapshotHeader.length,
  };
  const ratio = l.p50 / r.p50;
  rows.push({
    id: 'append.sequential.p50',
    measure: `1. sequential append p50 (N=${l.n})`,
    figure: `${fmt(l.p50)} ms`,
    baseline: `${fmt(r.p50)} ms raw publish-ack`,
    ratio,
    ratioLabel: `${fmt(ratio, 2)}×`,
    target: '≤ 1.5×',
    verdict: ratio <= 1.5 ? 'PASS' : 'MISS',
  });
  rows.push({
    id: 'append.sequential.p99',
    measure: '   sequential append p99',
    figure: `${fmt(l.p99)} ms`,
    baseline: `${fmt(r.p99)} ms`,
    ratio: l.p99 / r.p99,
    ratioLabel: `${fmt(l.p99 / r.p99, 2)}×`,
    target: '',
    verdict: 'info',
  });
  rows.push({
    id: 'append.sequential.rate',
    measure: '   sequential append rate',
    figure: fmtRate(l.rate),
    baseline: fmtRate(r.rate),
    ratio: l.rate / r.rate,
    ratioLabel: `${fmt(l.rate / r.rate, 2)}×`,
    target: '',
    verdict: 'info',
  });
  rows.push({
    id: 'append.sequential.rawopts.p50',
    measure: '   (diag) raw + msgID/expect/headers p50',
    figure: `${fmt(o.p50)} ms`,
    baseline: `${fmt(r.p50)} ms`,
    ratio: o.p50 / r.p50,
    ratioLabel: `${fmt(o.p50 / r.p50, 2)}×`,
    target: '',
    verdict: 'info',
  });
}

// ---------------------------------------------------------------------------------------------------------------
// 2. Appends over 64 concurrent aggregates.

async function benchConcurrent(js: JetStreamClient, store: EventStore, rows: Row[], out: Record<string, unknown>) {
  progress('2. 64 concurrent aggregates');
  const ctx = (id: string) => ({
    source: '/bench',
    tenant: 'acme',
    aggregateId: id,
    correlationid: 'c',
    causationid: 'c',
  });
  const sample = JSON.stringify(
    envelope(
      { type: INCREMENTED, data: { by: 1, total: 100 } },
      { source: '/bench', tenant: 'acme', subject: 'c-0-00', correlationid: 'c', causationid: 'c', time: new Date() },
    ),
  );
  const payload = new TextEncoder().encode(sample);
  const snapshotHeader = JSON.stringify({ total: 100, count: 100 });

  const libRound = (tag: string, total: number, cap: number) => {
    const ids = Array.from({ length: CONC_LOOPS }, (_, i) => `c-${tag}-${i}`);
    const subjects = ids.map((id) => aggregateSubject(ns, 'calls', 'acme', id));
    return timeConcurrent(
      total,
      CONC_LOOPS,
      (i) => runCommand(store, appendStream, subjects[i]!, counter, INCREMENT, ctx(ids[i]!)),
      cap,
    );
  };
  const rawRound = (tag: string, total: number, cap: number, withLibraryOptions = false) => {
    const subjects = Array.from({ length: CONC_LOOPS }, (_, i) =>
      aggregateSubject(ns, 'calls', 'raw', `c-${tag}-${i}`),
    );
    const last = new Array<number>(CONC_LOOPS).fill(0);
    return timeConcurrent(
      total,
      CONC_LOOPS,
      async (i) => {
        let opts: Parameters<JetStreamClient['publish']>[2] = { expect: { lastSubjectSequence: last[i]! } };
        if (withLibraryOptions) {
          const h = natsHeaders();
          h.set(SNAPSHOT_HEADER, snapshotHeader);
          h.set(SNAPSHOT_VERSION_HEADER, '1');
          opts = { ...opts, msgID: randomUUID(), headers: h };
        }
        const ack = await js.publish(subjects[i]!, payload, opts);
        last[i] = ack.seq;
      },
      cap,
    );
  };

  const cap = now() + PHASE_CAP_MS;
  await rawRound('w', CONC_WARMUP, cap);
  await libRound('w', CONC_WARMUP, cap);
  await rawRound('wo', CONC_WARMUP, cap, true);
  type Run = Awaited<ReturnType<typeof timeConcurrent>>;
  const libRuns: Run[] = [];
  const rawRuns: Run[] = [];
  const optRuns: Run[] = [];
  for (let round = 0; round < CONC_ROUNDS; round++) {
    const order = round % 2 === 0 ? ['raw', 'lib', 'opt'] : ['lib', 'opt', 'raw'];
    for (const kind of order) {
      if (kind === 'raw') rawRuns.push(await rawRound(`r${round}`, CONC_TOTAL, cap));
      else if (kind === 'lib') libRuns.push(await libRound(`r${round}`, CONC_TOTAL, cap));
      else optRuns.push(await rawRound(`o${round}`, CONC_TOTAL, cap, true));
    }
  }
  const best = (xs: Run[]) => xs.reduce((a, b) => (b.rate > a.rate ? b : a));
  const l = best(libRuns).rate;
  const r = best(rawRuns).rate;
  const o = best(optRuns).rate;
  const cpuL = Math.min(...libRuns.map((x) => x.cpuUsPerOp));
  const cpuR = Math.min(...rawRuns.map((x) => x.cpuUsPerOp));
  out.concurrent = {
    loops: CONC_LOOPS,
    totalPerRound: CONC_TOTAL,
    library: libRuns,
    raw: rawRuns,
    rawWithLibraryOptions: optRuns,
  };
  rows.push({
    id: 'append.concurrent64.rate',
    measure: `2. appends, ${CONC_LOOPS} aggregates (${CONC_TOTAL}, best of ${CONC_ROUNDS})`,
    figure: fmtRate(l),
    baseline: `${fmtRate(r)} raw expect-seq`,
    ratio: l / r,
    ratioLabel: `${fmt((l / r) * 100, 0)}%`,
    target: '≥ 50%',
    verdict: l / r >= 0.5 ? 'PASS' : 'MISS',
  });
  rows.push({
    id: 'append.concurrent64.cpu',
    measure: '   (diag) bench process CPU per append',
    figure: `${fmt(cpuL, 1)} µs`,
    baseline: `${fmt(cpuR, 1)} µs raw`,
    ratio: cpuL / cpuR,
    ratioLabel: `${fmt(cpuL / cpuR, 2)}×`,
    target: '',
    verdict: 'info',
  });
  rows.push({
    id: 'append.concurrent64.rawopts.rate',
    measure: '   (diag) raw + msgID/headers',
    figure: fmtRate(o),
    baseline: fmtRate(r),
    ratio: o / r,
    ratioLabel: `${fmt((o / r) * 100, 0)}%`,
    target: '',
    verdict: 'info',
  });
}

// ---------------------------------------------------------------------------------------------------------------
// 3. Cold, fallback and warm loads.

async function benchLoad(js: JetStreamClient, jsm: JetStreamManager, rows: Row[], out: Record<string, unknown>) {
  progress('3. aggregate loads');
  const writer = new EventStore(js, jsm);
  const ids = Array.from({ length: LOAD_WARMUP + LOAD_AGGREGATES }, (_, i) => `l-${i}`);
  const subjects = ids.map((id) => aggregateSubject(ns, 'calls', 'acme', id));
  // Build: each aggregate gets its events, 16 aggregates at a time.
  let nextAgg = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (nextAgg < ids.length) {
        const i = nextAgg++;
        for (let e = 0; e < LOAD_EVENTS_PER_AGGREGATE; e++) {
          await runCommand(writer, appendStream, subjects[i]!, counter, INCREMENT, {
            source: '/bench',
            tenant: 'acme',
            aggregateId: ids[i]!,
            correlationid: 'c',
            causationid: 'c',
          });
        }
      }
    }),
  );

  const warmStore = new EventStore(js, jsm);
  for (const s of subjects) await warmStore.load(appendStream, s, counter);

  const check = (state: CounterState, what: string) => {
    if (state.count !== LOAD_EVENTS_PER_AGGREGATE)
      throw new Error(`${what} load gave count ${state.count}, not ${LOAD_EVENTS_PER_AGGREGATE}`);
  };
  const kinds: Array<[string, (s: string) => Promise<unknown>]> = [
    ['raw', (s) => jsm.direct.getMessage(appendStream, { last_by_subj: s })],
    ['cold', async (s) => check((await new EventStore(js, jsm).load(appendStream, s, counter)).state, 'cold')],
    [
      'fallback',
      async (s) => check((await new EventStore(js, jsm).load(appendStream, s, counterNoSnapshot)).state, 'fallback'),
    ],
    ['warm', async (s) => check((await warmStore.load(appendStream, s, counter)).state, 'warm')],
  ];
  const samples: Record<string, number[]> = { raw: [], cold: [], fallback: [], warm: [] };
  const cap = now() + PHASE_CAP_MS;
  for (let i = 0; i < LOAD_WARMUP; i++) for (const [, fn] of kinds) await fn(subjects[i]!);
  let turn = 0;
  for (let pass = 0; pass < LOAD_PASSES; pass++) {
    for (let i = LOAD_WARMUP; i < subjects.length && now() < cap; i++) {
      turn++;
      for (let k = 0; k < kinds.length; k++) {
        const [name, fn] = kinds[(turn + k) % kinds.length]!;
        const t0 = now();
        await fn(subjects[i]!);
        samples[name]!.push(now() - t0);
      }
    }
  }
  const raw = lat(samples.raw!);
  const cold = lat(samples.cold!);
  const fb = lat(samples.fallback!);
  const warm = lat(samples.warm!);
  const rt = (v: number) => v / raw.p50;
  out.load = { eventsPerAggregate: LOAD_EVENTS_PER_AGGREGATE, rawDirectGet: raw, cold, fallback: fb, warm };
  rows.push({
    id: 'load.cold.p50',
    measure: `3. cold load p50 (${LOAD_EVENTS_PER_AGGREGATE} events, n=${cold.n})`,
    figure: `${fmt(cold.p50)} ms`,
    baseline: `${fmt(raw.p50)} ms raw last_by_subj`,
    ratio: rt(cold.p50),
    ratioLabel: `${fmt(rt(cold.p50), 2)} rt`,
    target: '≤ 3 rt',
    verdict: rt(cold.p50) <= 3 ? 'PASS' : 'MISS',
  });
  rows.push({
    id: 'load.cold.p99',
    measure: '   cold load p99',
    figure: `${fmt(cold.p99)} ms`,
    baseline: `${fmt(raw.p99)} ms raw p99`,
    ratio: rt(cold.p99),
    ratioLabel: `${fmt(rt(cold.p99), 2)} rt`,
    target: '',
    verdict: 'info',
  });
  rows.push({
    id: 'load.fallback.p50',
    measure: '   fold fallback p50 / p99 (no snapshot)',
    figure: `${fmt(fb.p50)} / ${fmt(fb.p99)} ms`,
    baseline: `${fmt(raw.p50)} ms`,
    ratio: rt(fb.p50),
    ratioLabel: `${fmt(rt(fb.p50), 2)} rt`,
    target: '',
    verdict: 'info',
  });
  rows.push({
    id: 'load.warm.p50',
    measure: '   warm (cached) load p50 / p99',
    figure: `${fmt(warm.p50, 4)} / ${fmt(warm.p99, 4)} ms`,
    baseline: `${fmt(raw.p50)} ms`,
    ratio: rt(warm.p50),
    ratioLabel: `${fmt(rt(warm.p50), 3)} rt`,
    target: '',
    verdict: 'info',
  });
}

// ---------------------------------------------------------------------------------------------------------------
// 4. Projection apply rate.

async function benchProjection(js: JetStreamClient, jsm: JetStreamManager, rows: Row[], out: Record<string, unknown>) {
  progress('4. projection: preparing events and database');
  const writer = new EventStore(js, jsm);
  const fill = async (tenant: string, aggregates: number, total: number) => {
    const subjects = Array.from({ length: aggregates }, (_, i) =>
      aggregateSubject(ns, 'conversations', tenant, `p-${i}`),
    );
    const loops = Math.min(64, aggregates);
    // Loop l owns aggregates l, l+loops, ... in turn, so no two writers contend for one aggregate.
    const turns = new Array<number>(loops).fill(0);
    await timeConcurrent(
      total,
      loops,
      async (loop) => {
        const owned = Math.ceil((aggregates - loop) / loops);
        const turn = turns[loop]!;
        turns[loop] = turn + 1;
        const i = loop + loops * (turn % owned);
        await runCommand(writer, projStream, subjects[i]!, counter, INCREMENT, {
          source: '/bench',
          tenant,
          aggregateId: `p-${i}`,
          correlationid: 'c',
          causationid: 'c',
        });
      },
      Number.POSITIVE_INFINITY,
    );
  };
  await fill('warm', 20, PROJ_WARMUP_EVENTS);
  await fill('proj', PROJ_AGGREGATES, PROJ_EVENTS);

  await createDatabase(ADMIN_DB_URL, dbName);
  dbCreated = true;
  const url = adminUrlFor(dbName);
  db = await openDatabase<BenchDB>({ url, max: 4 });
  await migrateSchema(db, 'bench', {
    '001_bookkeeping': projectionBookkeepingMigration,
    '002_counters': {
      async up(d) {
        await countersTableMigration.up(d);
        await d.schema
          .createTable('raw_rows')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('total', 'integer', (c) => c.notNull())
          .addColumn('events', 'integer', (c) => c.notNull())
          .addColumn('last_seq', 'bigint', (c) => c.notNull())
          .execute();
      },
    },
  });

  const projection = (name: string, tenant: string): Projection => ({
    name,
    schema: 'bench',
    stream: projStream,
    filterSubject: tenantFilter(ns, 'conversations', tenant),
    async apply(trx, event: OrmuzEvent, seq) {
      await countIncrement(trx, 'bench', name, event, seq);
    },
    // The batch path folds the batch by aggregate and writes it with one multi-row upsert: what a projection that
    // cares about throughput implements. Per-event `apply` stays for the one-by-one path that parks bad messages.
    async applyBatch(trx, items) {
      const folded = new Map<string, { total: number; events: number; last_seq: number }>();
      for (const { event, seq } of items) {
        const prev = folded.get(event.subject);
        const { total } = event.data as { total: number };
        folded.set(event.subject, { total, events: (prev?.events ?? 0) + 1, last_seq: seq });
      }
      await trx
        .withSchema('bench')
        .insertInto('counters')
        .values([...folded].map(([id, v]) => ({ projection: name, id, ...v })))
        .onConflict((oc) =>
          oc.columns(['projection', 'id']).doUpdateSet({
            total: sql`excluded.total`,
            events: sql`counters.events + excluded.events`,
            last_seq: sql`excluded.last_seq`,
          }),
        )
        .execute();
    },
    async reset(trx) {
      await resetCounters(trx, 'bench', name);
    },
  });

  // Raw baseline: single-row autocommit inserts on one connection, sequential.
  const rawInserts = async (tag: string, max: number, ms: number) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const t0 = now();
      let n = 0;
      while (n < max && now() - t0 < ms) {
        await client.query('insert into bench.raw_rows (id, total, events, last_seq) values ($1, $2, $3, $4)', [
          `${tag}-${n}`,
          n,
          1,
          n,
        ]);
        n++;
      }
      const elapsed = now() - t0;
      return { n, ms: elapsed, rate: (n / elapsed) * 1000 };
    } finally {
      await client.end();
    }
  };

  progress('4. projection: warm-up');
  await rawInserts('warm', 300, 5_000);
  // Warm-up only needs the code paths hot, not completion (see the tail stall below), so it stops once it idles.
  const warmRunner = new ProjectionRunner(js, jsm, db, projection('bench_warm', 'warm'), { batchSize: PROJ_BATCH });
  runners.push(warmRunner);
  await warmRunner.start();
  const warmDone = await waitIdle(() => warmRunner.position, PROJ_WARMUP_EVENTS, 1000, 15_000);
  const warmStall = warmDone
    ? undefined
    : { at: warmRunner.position, pending: PROJ_WARMUP_EVENTS - warmRunner.position };
  await warmRunner.stop();

  progress('4. projection: raw inserts');
  const raw = await rawInserts('raw', PG_RAW_MAX, PG_RAW_MS);
  progress('4. projection: batched upsert diagnostics');
  const perRowTx = await batchedUpserts(url, 'diag_rows', false);
  const multiRowTx = await batchedUpserts(url, 'diag_multi', true);

  progress('4. projection: runner');
  const commits: Array<{ t: number; checkpoint: number }> = [];
  const runner = new ProjectionRunner(js, jsm, db, projection('bench_counters', 'proj'), {
    batchSize: PROJ_BATCH,
    onCommitted: (checkpoint) => commits.push({ t: now(), checkpoint }),
  });
  runners.push(runner);
  const firstSeq = PROJ_WARMUP_EVENTS + 1;
  const cpu0 = process.cpuUsage();
  const t0 = now();
  await runner.start();
  // catchUp() reads the stream's last sequence (the last 'proj' event) and waits for the checkpoint to reach it.
  // Watch for a stall beside it: if the checkpoint stops moving short of the end, the runner is holding a partial
  // batch it will only apply when another message arrives. Record that, then append one event to release it.
  const caughtUp = runner.catchUp(60_000).then(() => now());
  let stall: { at: number; pending: number; ms: number } | undefined;
  let nudges = 0;
  const lastSeq = firstSeq + PROJ_EVENTS - 1;
  for (;;) {
    const idle = await Promise.race([
      caughtUp.then(() => false),
      waitIdle(() => runner.position, lastSeq, 1500, 60_000).then((done) => !done),
    ]);
    if (!idle) break;
    if (nudges >= 3)
      throw new Error(`projection stuck at ${runner.position} of ${lastSeq} even after ${nudges} new events`);
    stall ??= { at: runner.position, pending: lastSeq - runner.position, ms: 1500 };
    nudges++;
    await runCommand(
      writer,
      projStream,
      aggregateSubject(ns, 'conversations', 'proj', `nudge-${nudges}`),
      counter,
      INCREMENT,
      {
        source: '/bench',
        tenant: 'proj',
        aggregateId: `nudge-${nudges}`,
        correlationid: 'c',
        causationid: 'c',
      },
    );
  }
  const tDone = await caughtUp;
  const cpu = process.cpuUsage(cpu0);
  const cpuUsPerEvent = (cpu.user + cpu.system) / (PROJ_EVENTS + nudges);
  await runner.stop();
  const applied = await db
    .withSchema('bench')
    .selectFrom('counters')
    .select((eb) => [eb.fn.sum<number>('events').as('events'), eb.fn.countAll<number>().as('rows')])
    .where('projection', '=', 'bench_counters')
    .executeTakeFirstOrThrow();
  if (Number(applied.events) !== PROJ_EVENTS + nudges) {
    throw new Error(`projection applied ${applied.events} events, expected ${PROJ_EVENTS + nudges}`);
  }
  // Rate over the events applied before any stall, timed from start() to the commit that applied them.
  const before = stall ? commits.filter((c) => c.checkpoint <= stall!.at) : commits;
  const lastCommit = before.at(-1);
  const appliedEvents = stall ? stall.at - firstSeq + 1 : PROJ_EVENTS;
  const ms = stall ? (lastCommit ? lastCommit.t - t0 : Number.NaN) : tDone - t0;
  const rate = (appliedEvents / ms) * 1000;
  const batches = before.length;
  const meanBatch = appliedEvents / Math.max(1, batches);
  out.projection = {
    events: PROJ_EVENTS,
    appliedTimed: appliedEvents,
    ms,
    rate,
    batchSize: PROJ_BATCH,
    batches,
    meanBatch,
    catchUpMs: tDone - t0,
    tailStall: stall ?? null,
    warmUpStall: warmStall ?? null,
    nudges,
    clientCpuUsPerEvent: cpuUsPerEvent,
    rawInsert: raw,
    pgPerRowUpsertsPerTx: perRowTx,
    pgMultiRowUpsertPerTx: multiRowTx,
  };
  rows.push({
    id: 'projection.rate',
    measure: `4. projection apply (${appliedEvents} events)`,
    figure: fmtRate(rate),
    baseline: `${fmtRate(raw.rate)} raw 1-row INSERT`,
    ratio: rate / raw.rate,
    ratioLabel: `${fmt(rate / raw.rate, 2)}×`,
    target: '≥ 5,000/s',
    verdict: rate >= 5000 ? 'PASS' : 'MISS',
  });
  rows.push({
    id: 'projection.batches',
    measure: `   batch size ${PROJ_BATCH}: ${batches} commits`,
    figure: `mean ${fmt(meanBatch, 1)}/batch`,
    baseline: `${fmt(ms / Math.max(1, batches), 2)} ms/batch`,
    ratio: meanBatch,
    ratioLabel: '',
    target: '',
    verdict: 'info',
  });
  rows.push({
    id: 'projection.cpu',
    measure: '   (diag) bench process CPU per event',
    figure: `${fmt(cpuUsPerEvent, 1)} µs`,
    baseline: `${fmt(1e6 / rate, 1)} µs wall/event`,
    ratio: cpuUsPerEvent / (1e6 / rate),
    ratioLabel: `${fmt((cpuUsPerEvent / (1e6 / rate)) * 100, 0)}%`,
    target: '',
    verdict: 'info',
  });
  rows.push({
    id: 'projection.diag.perrow',
    measure: `   (diag) pg: ${PROJ_BATCH} 1-row upserts per tx`,
    figure: fmtRate(perRowTx.rate),
    baseline: fmtRate(raw.rate),
    ratio: perRowTx.rate / raw.rate,
    ratioLabel: `${fmt(perRowTx.rate / raw.rate, 2)}×`,
    target: '',
    verdict: 'info',
  });
  rows.push({
    id: 'projection.diag.multirow',
    measure: `   (diag) pg: 1 multi-row upsert per ${PROJ_BATCH}`,
    figure: fmtRate(multiRowTx.rate),
    baseline: fmtRate(raw.rate),
    ratio: multiRowTx.rate / raw.rate,
    ratioLabel: `${fmt(multiRowTx.rate / raw.rate, 2)}×`,
    target: '',
    verdict: 'info',
  });
  const stuck = [
    warmStall && `warm-up ${warmStall.pending}/${PROJ_WARMUP_EVENTS}`,
    stall && `timed ${stall.pending}/${PROJ_EVENTS}`,
  ].filter(Boolean);
  rows.push({
    id: 'projection.tail',
    measure: '   tail applied with no new traffic',
    figure: stuck.length ? `stuck: ${stuck.join(', ')}` : 'all applied',
    baseline: stall ? `released by ${nudges} new event(s)` : `catchUp ${fmt(tDone - t0, 0)} ms`,
    ratio: (stall?.pending ?? 0) + (warmStall?.pending ?? 0),
    ratioLabel: '',
    target: 'none stuck',
    verdict: stuck.length ? 'MISS' : 'PASS',
  });
}

/**
 * Diagnostic floor for a projection's transaction: synthetic counter events (200 aggregates) applied in transactions of
 * PROJ_BATCH, with the checkpoint upsert, over one raw pg connection. `multiRow` folds the batch per aggregate and
 * writes it with one `INSERT … SELECT FROM unnest(…) ON CONFLICT` statement instead of one statement per event.
 */
async function batchedUpserts(
  url: string,
  name: string,
  multiRow: boolean,
): Promise<{ n: number; ms: number; rate: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const upsertOne =
    'insert into bench.counters (projection, id, total, events, last_seq) values ($1, $2, $3, 1, $4) ' +
    'on conflict (projection, id) do update set total = excluded.total, events = counters.events + 1, last_seq = excluded.last_seq';
  const upsertMany =
    'insert into bench.counters (projection, id, total, events, last_seq) ' +
    'select $1, * from unnest($2::text[], $3::int[], $4::int[], $5::bigint[]) ' +
    'on conflict (projection, id) do update set total = excluded.total, events = counters.events + excluded.events, last_seq = excluded.last_seq';
  const checkpoint =
    'insert into bench.projection_checkpoints (projection, stream, seq) values ($1, $2, $3) ' +
    'on conflict (projection, stream) do update set seq = greatest(projection_checkpoints.seq, excluded.seq), updated_at = now()';
  let seq = 0;
  const batch = async () => {
    const events = Array.from({ length: PROJ_BATCH }, () => {
      seq++;
      return { id: `p-${seq % PROJ_AGGREGATES}`, total: seq, seq };
    });
    await client.query('begin');
    if (multiRow) {
      const byId = new Map<string, { total: number; events: number; seq: number }>();
      for (const e of events) {
        const cur = byId.get(e.id);
        byId.set(e.id, { total: e.total, events: (cur?.events ?? 0) + 1, seq: e.seq });
      }
      const ids = [...byId.keys()];
      const vals = [...byId.values()];
      await client.query(upsertMany, [
        name,
        ids,
        vals.map((v) => v.total),
        vals.map((v) => v.events),
        vals.map((v) => v.seq),
      ]);
    } else {
      for (const e of events) await client.query(upsertOne, [name, e.id, e.total, e.seq]);
    }
    await client.query(checkpoint, [name, 'bench', seq]);
    await client.query('commit');
  };
  try {
    for (let i = 0; i < 2; i++) await batch(); // warm-up
    const t0 = now();
    let n = 0;
    while (n < PROJ_EVENTS && now() - t0 < 1500) {
      await batch();
      n += PROJ_BATCH;
    }
    const ms = now() - t0;
    return { n, ms, rate: (n / ms) * 1000 };
  } finally {
    await client.end();
  }
}

/**
 * Resolves true when `position()` reaches `target`, false when it has not moved for `idleMs` (or `capMs` passed).
 */
async function waitIdle(position: () => number, target: number, idleMs: number, capMs: number): Promise<boolean> {
  const end = now() + capMs;
  let last = position();
  let since = now();
  while (now() < end) {
    const p = position();
    if (p >= target) return true;
    if (p !== last) {
      last = p;
      since = now();
    } else if (now() - since >= idleMs) {
      return false;
    }
    await sleep(5);
  }
  return false;
}

// ---------------------------------------------------------------------------------------------------------------

let failed = false;

async function main() {
  const watchdog = startWatchdog(WATCHDOG_MS, cleanup);

  const started = now();
  const load0 = loadavg()[0]!;
  nc = await connectNats({ url: NATS_URL, name: 'ormuz-bench-log' });
  const js = jetstream(nc);
  const jsm = await jetstreamManager(nc);
  jsmRef = jsm;
  await ensureStreams(jsm, ns, contexts);
  const store = new EventStore(js, jsm);

  const rows: Row[] = [];
  const out: Record<string, unknown> = {};
  const sections: Array<[string, string, () => Promise<void>]> = [
    ['sequential', 'append.sequential', () => benchSequential(js, store, rows, out)],
    ['concurrent', 'append.concurrent64', () => benchConcurrent(js, store, rows, out)],
    ['load', 'load', () => benchLoad(js, jsm, rows, out)],
    ['projection', 'projection', () => benchProjection(js, jsm, rows, out)],
  ];
  for (const [key, id, run] of sections) {
    if (ONLY && !ONLY.includes(key)) continue;
    try {
      await run();
    } catch (err) {
      failed = true;
      console.error(`section ${id} failed:`, err);
      rows.push(errorRow(id, err));
    }
  }
  const seconds = (now() - started) / 1000;
  const load1 = loadavg()[0]!;

  log('');
  log(
    `event-log bench — node ${process.version}, NATS ${nc.info?.version ?? '?'}, namespace ${ns}, ` +
      `${fmt(seconds, 1)} s, loadavg(1m) ${fmt(load0, 2)} → ${fmt(load1, 2)}`,
  );
  printTable(rows);
  printVerdicts(rows);
  if (JSON_OUT) {
    // Last line of stdout; teardown below writes only to stderr.
    printJson(
      {
        bench: 'event-log',
        node: process.version,
        nats: nc.info?.version,
        namespace: ns,
        seconds,
        loadavg: [load0, load1],
      },
      rows,
      out,
    );
  }
  await cleanup();
  clearTimeout(watchdog);
  process.exit(failed ? 1 : 0);
}

main().catch(async (err: unknown) => {
  console.error('bench failed:', err);
  await cleanup();
  process.exit(1);
});
