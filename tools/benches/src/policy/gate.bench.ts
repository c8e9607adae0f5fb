/**
 * Gate benchmark (issue 3, item 9): every figure beside a baseline measured in the same run, because the machines
 * are shared and figures drift from run to run.
 *
 *   npm run bench:gate               # table
 *   npm run bench:gate -- --json     # table, then one JSON object on the last line
 *   npm run bench:gate -- --only=inproc   # a subset (inproc, nats)
 *
 * Env: NATS_URL (default nats://127.0.0.1:4222), DATABASE_URL (an admin database the user may CREATE DATABASE from,
 * default postgres://postgres@127.0.0.1:5432/postgres). Everything the run creates — one stream under a random
 * namespace and one database — is deleted at the end, also on failure, Ctrl-C or the watchdog.
 *
 * Measured:
 *  1. In-process decisions (`decideGate`: catalog + grant + normalise + validate + risk + canonical bytes) on one core,
 *     over a 204-tool catalog and a seeded mix of 4,000 distinct requests (see MIX in synthetic-catalog.ts): rate
 *     without timers, then per-call latency with hrtime; the breakdown times prepareCall, classifyRisk and
 *     canonicalPayload alone on exactly the inputs decideGate gives them, and decideGate with a fresh grant object per
 *     call, as SubmitCallHandler has (grants are read from Postgres per request).
 *  2. `policy.submit` over NATS, sequential, distinct operation ids, a low-risk call, against policy started in this
 *     process with startService | a raw NATS request/reply (trivial responder on the service's own connection, same
 *     request and reply sizes); plus raw request/reply + a JetStream publish-ack of each message a submit appends (one:
 *     the request and the gate's decision are one message, docs/decisions/0015), with its bytes, and the full I/O
 *     floor of a submit (that, with the grant SELECT, the direct get that finds no call yet, and the library's
 *     msgID/expected-sequence/snapshot headers). Kinds run in interleaved, rotating blocks.
 *     Policy runs as a deployment would that answers submits without projection work on its event loop
 *     (docs/decisions/0021-policy-roles.md): the commands role in this process, the read-models role (call status,
 *     device screens) in a child process that consumes every submitted message meanwhile. `--read-models=here` runs
 *     both roles in this process instead, as `npm start` does.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { jetstream, jetstreamManager, type JetStreamManager, type StoredMsg } from '@nats-io/jetstream';
import { headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import pg from 'pg';
import { Catalog, pinGrant, prepareCall, type Grant } from '@ormuz/catalog';
import { aggregateSubject, canonicalPayload, commandSubject, type SubmitCallReplyV1 } from '@ormuz/contracts';
import {
  connectNats,
  CONTENT_TYPE_HEADER,
  ensureStreams,
  SNAPSHOT_HEADER,
  SNAPSHOT_VERSION_HEADER,
  streamName,
} from '@ormuz/event-log';
import { classifyRisk, type RiskInput } from '@ormuz/risk';
import { DevIssuer, devIssuerDir, serviceIdentity } from '@ormuz/auth';
import { callService, startService, type Credential, type RunningService } from '@ormuz/service-kit';
import { decideGate, loadPolicyConfig, POLICY_SCHEMA, type GateContext, policyService } from '@ormuz/policy';
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
  fmtUs,
  log,
  natsUrl,
  now,
  option,
  printJson,
  printTable,
  printVerdicts,
  progress,
  startWatchdog,
  summarize,
  type BenchRow,
} from '../kit/index.js';
import { benchCatalogInput, MIX, requestMix, type BenchRequest, type Category } from './synthetic-catalog.js';

// ---------------------------------------------------------------------------------------------------------------
// Sizes. Bounded so the whole run stays under 60 s on two busy cores; every timed loop also has a time cap.

const POOL = 4_000; // distinct requests in the in-process mix
const IN_WARMUP = 40_000; // calls, or ...
const IN_WARMUP_MS = 3_000; // ... this long
const IN_RATE_N = 400_000; // throughput pass, or ...
const IN_RATE_MS = 4_000; // ... this long, whichever comes first
const IN_LAT_N = 100_000; // per-call latency samples, or ...
const IN_LAT_MS = 6_000; // ... this long
const IN_PART_MS = 1_200; // each breakdown pass
const RT_N = 1_500; // NATS round trips per kind
const RT_WARMUP = 200;
const RT_BLOCK = 150;
const NATS_CAP_MS = 20_000;
const WATCHDOG_MS = 58_000;

const TARGET_RATE = 50_000;
const TARGET_P99_US = 200;
const TARGET_RATIO = 3;

const JSON_OUT = flag('json');
const READ_MODELS = option('read-models') ?? 'apart';
if (READ_MODELS !== 'apart' && READ_MODELS !== 'here') {
  process.stderr.write(`--read-models must be apart (default) or here, not ${READ_MODELS}\n`);
  process.exit(2);
}
const ONLY = option('only')?.split(',');
const NATS_URL = natsUrl();
const ADMIN_DB_URL = adminDbUrl();

// ---------------------------------------------------------------------------------------------------------------
// Helpers.

interface Lat {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}
function lat(samples: readonly number[] | Float64Array): Lat {
  const { n, p50, p90, p99, max, mean } = summarize(samples);
  return { n, p50, p90, p99, max, mean };
}

type Row = BenchRow & { ratioLabel: string };

// ---------------------------------------------------------------------------------------------------------------
// Environment and teardown.

const ns = `bg${randomBytes(4).toString('hex')}`;
const dbName = benchDbName();
const stream = streamName(ns, 'calls');
/**
 * The raw baselines publish into a stream of their own with the very same configuration (the `conversations`
 * context's, which policy neither reads nor writes), so policy's call-status projection does not consume them.
 */
const rawStream = streamName(ns, 'conversations');
let svc: RunningService | undefined;
/** Policy's read-models role, when it runs apart. */
let readModels: ChildProcess | undefined;
let client: NatsConnection | undefined;
let jsmRef: JetStreamManager | undefined;
let pgClient: pg.Client | undefined;
let dbCreated = false;
let cleaning: Promise<void> | undefined;

const dbUrl = (name: string): string => databaseUrl(ADMIN_DB_URL, name);

function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await bounded('closing the bench pg client', pgClient?.end() ?? Promise.resolve());
    await bounded('stopping policy', svc?.close() ?? Promise.resolve(), 10_000);
    await bounded('stopping policy read models', stopChild(readModels), 10_000);
    if (jsmRef) for (const s of [stream, rawStream]) await bounded(`deleting stream ${s}`, jsmRef.streams.delete(s));
    await bounded('closing the NATS connection', client?.close() ?? Promise.resolve());
    if (dbCreated) await bounded(`dropping ${dbName}`, dropDatabase(ADMIN_DB_URL, dbName));
  })();
  return cleaning;
}

cleanUpOnSignals(cleanup);

/** SIGTERM, then the exit; SIGKILL if it has not exited within 8 s. */
async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 8_000);
  await exited;
  clearTimeout(timer);
}

/** Starts policy's read-models role as its own process (the built `main.js` beside the package's entry). */
function startReadModels(env: Record<string, string>): ChildProcess {
  const main = new URL('./main.js', import.meta.resolve('@ormuz/policy'));
  const child = spawn(process.execPath, [main.pathname], {
    env: { ...process.env, ...env, POLICY_ROLES: 'read-models' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  child.once('exit', (code, signal) => {
    if (!cleaning) progress(`policy read models exited early (${signal ?? code})`);
  });
  return child;
}

// ---------------------------------------------------------------------------------------------------------------
// 1. In-process decisions.

/** Calls `fn(i)` for i = 0.. until `n` calls or `ms` elapsed; returns calls per second. */
function rate(n: number, ms: number, fn: (i: number) => number): { n: number; ms: number; rate: number; sink: number } {
  let sink = 0;
  const t0 = now();
  const end = t0 + ms;
  let i = 0;
  for (; i < n; i++) {
    sink += fn(i);
    if ((i & 1023) === 1023 && now() > end) {
      i++;
      break;
    }
  }
  const elapsed = now() - t0;
  return { n: i, ms: elapsed, rate: (i / elapsed) * 1000, sink };
}

function benchInProcess(rows: Row[], out: Record<string, unknown>) {
  progress('1. in-process: loading the 204-tool catalog');
  const t0 = now();
  const input = benchCatalogInput();
  const catalog = Catalog.load(input.manifests, input.options);
  const loadMs = now() - t0;
  const toolCount = catalog.toolNames().length;
  const denied = [
    input.tools[22]!.name,
    input.tools[45]!.name,
    input.tools[103]!.name,
    'device.delete_contacts_verified',
  ];
  const grant: Grant = pinGrant(catalog, {
    tenant: 'acme',
    agent_id: 'bench',
    allow: ['ormuz', 'device', ...catalog.extensions.filter((e) => /^ext\d+$/.test(e.name)).map((e) => e.name)],
    // One tool by version, the rest by name.
    deny: [`${denied[0]}@1`, ...denied.slice(1)],
  });
  const ctx: GateContext = { catalog, grant, approvalTtlMs: 15 * 60_000 };
  const mix = requestMix(input.tools, denied, POOL);
  const at = new Date();
  const decide = (r: BenchRequest) => decideGate(ctx, r.request, at);

  // What the mix decides, once per distinct request (also proves no request throws).
  const outcomes: Record<string, number> = {};
  for (const r of mix) {
    const d = decide(r);
    const key = d.kind === 'refuse' ? `refuse:${d.reasonCode}` : d.kind;
    outcomes[key] = (outcomes[key] ?? 0) + 1;
  }
  const outcomeShares = Object.fromEntries(
    Object.entries(outcomes)
      .sort(([, a], [, b]) => b - a)
      .map(([k, v]) => [k, Math.round((v / mix.length) * 1000) / 10]),
  );

  progress('1. in-process: warm-up');
  const len = mix.length;
  rate(IN_WARMUP, IN_WARMUP_MS, (i) => decide(mix[i % len]!).kind.length);

  progress('1. in-process: decisions per second');
  const cpu0 = process.cpuUsage();
  const gate = rate(IN_RATE_N, IN_RATE_MS, (i) => decide(mix[i % len]!).kind.length);
  const cpu = process.cpuUsage(cpu0);
  const cpuShare = (cpu.user + cpu.system) / 1000 / gate.ms;

  progress('1. in-process: per-call latency');
  const latEnd = now() + IN_LAT_MS;
  const taken = new Float64Array(IN_LAT_N);
  const byCategory = new Map<Category, number[]>();
  let sink = 0;
  let n = 0;
  for (let i = 0; i < IN_LAT_N; i++, n++) {
    if ((i & 1023) === 1023 && now() > latEnd) break;
    const r = mix[i % len]!;
    const s = process.hrtime.bigint();
    sink += decide(r).kind.length;
    const us = Number(process.hrtime.bigint() - s) / 1000;
    taken[i] = us;
    let list = byCategory.get(r.category);
    if (!list) byCategory.set(r.category, (list = []));
    list.push(us);
  }
  const all = lat(taken.subarray(0, n));
  // The cost of the two hrtime calls themselves, to read the percentiles against.
  const timer = new Float64Array(20_000);
  for (let i = 0; i < timer.length; i++) {
    const s = process.hrtime.bigint();
    timer[i] = Number(process.hrtime.bigint() - s) / 1000;
  }
  const timerLat = lat(timer);

  progress('1. in-process: breakdown');
  const prepare = rate(IN_RATE_N, IN_PART_MS, (i) => {
    const { request } = mix[i % len]!;
    return prepareCall(catalog, grant, { tool: request.tool, arguments: request.arguments }).ok ? 1 : 0;
  });
  // Exactly what decideGate hands the classifier and the canonicaliser.
  const riskInputs: RiskInput[] = [];
  const payloads: unknown[] = [];
  for (const { request } of mix) {
    const p = prepareCall(catalog, grant, { tool: request.tool, arguments: request.arguments });
    payloads.push(p.ok ? p.args : (request.arguments ?? {}));
    if (!p.ok || p.definition.risk_level !== 'classify') continue;
    if (p.entry.executor === 'device' && !request.deviceId) continue;
    riskInputs.push({
      tool: p.definition.name,
      args: p.args,
      target_text: typeof p.args.target_text === 'string' ? p.args.target_text : null,
      foreground_package: typeof p.args.foreground_package === 'string' ? p.args.foreground_package : null,
    });
  }
  const risk = rate(IN_RATE_N, IN_PART_MS, (i) => classifyRisk(riskInputs[i % riskInputs.length]!).reasons.length);
  const canon = rate(IN_RATE_N, IN_PART_MS, (i) => canonicalPayload(payloads[i % len]).sha256.length);
  // SubmitCallHandler reads the grant from Postgres per request: a new object each time, so the grant's parsed rules
  // (cached per object) are rebuilt on every call. A shallow copy reproduces that.
  const fresh = rate(
    IN_RATE_N,
    IN_PART_MS,
    (i) => decideGate({ ...ctx, grant: { ...grant } }, mix[i % len]!.request, at).kind.length,
  );
  const unknownOnly = mix.filter((r) => r.category === 'unknown');
  const unknownRate = rate(20_000, 500, (i) => decide(unknownOnly[i % unknownOnly.length]!).kind.length);

  const gateUs = 1e6 / gate.rate;
  const prepareUs = 1e6 / prepare.rate;
  const riskUs = 1e6 / risk.rate;
  const riskShare = riskInputs.length / len; // fraction of decisions that reach the classifier
  const canonUs = 1e6 / canon.rate;
  const freshUs = 1e6 / fresh.rate;

  out.inproc = {
    tools: toolCount,
    catalogLoadMs: loadMs,
    grant: { allow: grant.allow.length, deny: grant.deny, pins: Object.keys(grant.pins ?? {}).length },
    distinctRequests: len,
    mix: MIX,
    outcomes: outcomeShares,
    rate: { calls: gate.n, ms: gate.ms, perSecond: gate.rate, cpuShare },
    latencyUs: all,
    timerOverheadUs: { p50: timerLat.p50, p99: timerLat.p99 },
    byCategoryUs: Object.fromEntries(
      [...byCategory].map(([c, s]) => {
        const l = lat(s);
        return [c, { n: l.n, p50: l.p50, p99: l.p99, mean: l.mean }];
      }),
    ),
    breakdownUsPerCall: {
      decideGate: gateUs,
      prepareCall: prepareUs,
      classifyRisk: riskUs,
      classifyRiskReachedBy: riskShare,
      canonicalPayload: canonUs,
      decideGateFreshGrant: freshUs,
      unknownToolDecision: 1e6 / unknownRate.rate,
      unknownReachedBy: unknownOnly.length / len,
    },
    sink: sink + gate.sink + prepare.sink + risk.sink + canon.sink + fresh.sink + unknownRate.sink,
  };

  rows.push({
    id: 'inproc.rate',
    measure: `1. decideGate, ${toolCount} tools, ${len} distinct requests`,
    figure: fmtRate(gate.rate),
    baseline: `prepareCall alone ${fmtRate(prepare.rate)}`,
    ratio: gate.rate / TARGET_RATE,
    ratioLabel: `${fmt(gate.rate / TARGET_RATE, 2)}× target`,
    target: `≥ ${TARGET_RATE.toLocaleString('en-US')}/s`,
    verdict: gate.rate >= TARGET_RATE ? 'PASS' : 'MISS',
  });
  rows.push({
    id: 'inproc.p50',
    measure: `   per call p50 (N=${all.n}, hrtime)`,
    figure: fmtUs(all.p50),
    baseline: `timer ${fmtUs(timerLat.p50)}`,
    ratio: Number.NaN,
    ratioLabel: '',
    target: '',
    verdict: 'info',
  });
  rows.push({
    id: 'inproc.p99',
    measure: '   per call p99',
    figure: fmtUs(all.p99),
    baseline: `p90 ${fmtUs(all.p90)}, max ${fmt(all.max / 1000, 1)} ms`,
    ratio: all.p99 / TARGET_P99_US,
    ratioLabel: `${fmt(all.p99 / TARGET_P99_US, 2)}× target`,
    target: `≤ ${TARGET_P99_US} µs`,
    verdict: all.p99 <= TARGET_P99_US ? 'PASS' : 'MISS',
  });
  const part = (id: string, measure: string, us: number, share: number, note: string) =>
    rows.push({
      id,
      measure,
      figure: `${fmtUs(us)}/call`,
      baseline: note,
      ratio: share,
      ratioLabel: Number.isFinite(share) ? `${fmt(share * 100, 0)}%` : '',
      target: '',
      verdict: 'info',
    });
  part('inproc.part.gate', '   (diag) decideGate mean', gateUs, 1, `bench CPU ${fmt(cpuShare * 100, 0)}% of wall`);
  part('inproc.part.prepare', '   (diag) prepareCall alone', prepareUs, prepareUs / gateUs, 'share of decideGate');
  part(
    'inproc.part.risk',
    `   (diag) classifyRisk alone (${fmt(riskShare * 100, 0)}% of calls)`,
    riskUs,
    (riskUs * riskShare) / gateUs,
    'weighted share',
  );
  part('inproc.part.canonical', '   (diag) canonicalPayload alone', canonUs, canonUs / gateUs, 'share of decideGate');
  const unknownUs = 1e6 / unknownRate.rate;
  const unknownShare = unknownOnly.length / len;
  part(
    'inproc.part.unknown',
    `   (diag) unknown-name decision (${fmt(unknownShare * 100, 0)}% of calls)`,
    unknownUs,
    (unknownUs * unknownShare) / gateUs,
    'weighted share',
  );
  part(
    'inproc.part.freshgrant',
    '   (diag) decideGate, new grant object per call',
    freshUs,
    freshUs / gateUs,
    `${fmtRate(fresh.rate)}, ×decideGate`,
  );
  const cats = [...byCategory.keys()].sort((a, b) => MIX[b] - MIX[a]);
  for (const c of cats) {
    const l = lat(byCategory.get(c)!);
    rows.push({
      id: `inproc.cat.${c}`,
      measure: `   ${c} (${MIX[c]}% of mix) p50 / p99`,
      figure: `${fmtUs(l.p50)} / ${fmtUs(l.p99)}`,
      baseline: '',
      ratio: Number.NaN,
      ratioLabel: '',
      target: '',
      verdict: 'info',
    });
  }
  progress(`1. in-process: outcomes ${JSON.stringify(outcomeShares)}`);
}

// ---------------------------------------------------------------------------------------------------------------
// 2. Submit → decision over NATS.

async function benchNats(rows: Row[], out: Record<string, unknown>) {
  progress(`2. nats: database ${dbName}, namespace ${ns}`);
  await createDatabase(ADMIN_DB_URL, dbName);
  dbCreated = true;
  client = await connectNats({ url: NATS_URL, name: 'ormuz-bench-gate' });
  const js = jetstream(client);
  const jsm = await jetstreamManager(client);
  jsmRef = jsm;
  await ensureStreams(jsm, ns, ['conversations']);
  const env = { NATS_URL, DATABASE_URL: dbUrl(dbName), ORMUZ_NAMESPACE: ns, LOG_LEVEL: 'silent' };
  const apart = READ_MODELS === 'apart';
  const config = loadPolicyConfig({ ...env, POLICY_ROLES: apart ? 'commands' : 'commands,read-models' });
  const tStart = now();
  svc = await startService(policyService(config));
  const startMs = now() - tStart;
  const nc = client;
  const tenant = 'acme';
  const agent = 'bench';
  // The grant is set by the tenant's administrator (a development-issuer token); submits come the way an agent's
  // conversation sends them, from model-loop on the internal subject, which is the governed call's hot path.
  const issuer = await DevIssuer.open(config.auth.devIssuerDir ?? devIssuerDir(process.env));
  const admin: Credential = { bearer: await issuer.sign({ tenant, roles: ['admin'], subject: 'bench@acme' }) };
  if (apart) {
    readModels = startReadModels(env);
    // Ready once its two projections run (only the read-models role answers `consumers.status` with any).
    const platform: Credential = { bearer: await issuer.sign({ tenant: '*', roles: ['admin'], subject: 'bench' }) };
    for (const until = now() + 30_000; ;) {
      const status = await callService<{ consumers: { running: boolean }[] }>(
        nc,
        ns,
        'policy',
        'consumers.status',
        {},
        {
          credential: platform,
          timeoutMs: 500,
        },
      ).catch(() => undefined);
      if (status && status.consumers.length === 2 && status.consumers.every((c) => c.running)) break;
      if (now() > until) throw new Error('policy read models did not start within 30 s');
      if (readModels.exitCode !== null) throw new Error(`policy read models exited (${readModels.exitCode})`);
    }
  }
  out.readModels = READ_MODELS;
  const modelLoop: Credential = { service: serviceIdentity('model-loop', tenant, agent) };
  const call = <T>(name: string, body: unknown, credential: Credential = modelLoop) =>
    callService<T>(nc, ns, 'policy', name, body, { credential });

  await call(
    'grants.set',
    {
      tenant,
      agent_id: agent,
      allow: ['ormuz', 'device'],
      deny: ['device.delete_contacts_verified'],
    },
    admin,
  );
  const run = randomBytes(3).toString('hex');
  let seq = 0;
  const nextOp = () => `op-${run}-${String(seq++).padStart(7, '0')}`;
  const submitBody = (op: string) => ({
    tenant,
    agent_id: agent,
    tool: 'device.screen_observe',
    arguments: { max_elements: 40 },
    origin: { kind: 'operation', operation_id: op },
    device_id: 'phone-1',
    correlation_id: op,
  });
  const submit = async () => {
    const r = await call<SubmitCallReplyV1>('submit', submitBody(nextOp()));
    if (r.status !== 'authorized' || r.duplicate) throw new Error(`submit answered ${JSON.stringify(r)}`);
    return r;
  };

  // One submit to learn the sizes the baselines must match: request, reply, and the messages as stored.
  const firstOp = nextOp();
  const first = await call<SubmitCallReplyV1>('submit', submitBody(firstOp));
  if (first.status !== 'authorized') throw new Error(`the bench call was not authorized: ${JSON.stringify(first)}`);
  const subject = aggregateSubject(ns, 'calls', tenant, first.call_id);
  const events: StoredMsg[] = [];
  for (let next = 1; ;) {
    const msg = await jsm.direct.getMessage(stream, { seq: next, next_by_subj: subject }).catch(() => null);
    if (!msg) break;
    events.push(msg);
    next = msg.seq + 1;
  }
  if (events.length === 0) throw new Error(`could not read the messages of ${first.call_id}`);
  const requestBytes = JSON.stringify(submitBody(firstOp)).length;
  const replyText = JSON.stringify({ ok: true, data: first });

  // The raw responder: on the service's own connection, answering a same-sized reply.
  const echoSubject = commandSubject(ns, 'benchraw', 'echo');
  svc.infra.nc.subscribe(echoSubject, { callback: (_err, msg) => void msg.respond(replyText) });
  await svc.infra.nc.flush();
  const raw = async () => {
    const reply = await nc.request(echoSubject, JSON.stringify(submitBody(nextOp())), { timeout: 5000 });
    return JSON.parse(reply.string()) as unknown;
  };
  let rawSubjectSeq = 0;
  const rawSubject = () => aggregateSubject(ns, 'conversations', 'rawbench', `r-${run}-${rawSubjectSeq++}`);
  const rawAcks = async () => {
    await raw();
    const s = rawSubject();
    for (const e of events) await js.publish(s, e.data);
  };
  pgClient = new pg.Client({ connectionString: dbUrl(dbName) });
  await pgClient.connect();
  const pgc = pgClient;
  const floor = async () => {
    await raw();
    await pgc.query(`select allow, deny, pins from ${POLICY_SCHEMA}.grants where tenant = $1 and agent_id = $2`, [
      tenant,
      agent,
    ]);
    const s = rawSubject();
    try {
      // On policy's own stream, as the first load of a new call does.
      await jsm.direct.getMessage(stream, {
        last_by_subj: aggregateSubject(ns, 'calls', tenant, `miss-${run}-${rawSubjectSeq}`),
      });
    } catch {
      // not found: the expected answer for a new call
    }
    let expected = 0;
    for (const e of events) {
      // The library's own headers only (the stored message also carries the server's Nats-* headers).
      const h = natsHeaders();
      h.set(SNAPSHOT_HEADER, e.header?.get(SNAPSHOT_HEADER) ?? '{}');
      h.set(SNAPSHOT_VERSION_HEADER, e.header?.get(SNAPSHOT_VERSION_HEADER) ?? '1');
      if (e.header?.get(CONTENT_TYPE_HEADER)) h.set(CONTENT_TYPE_HEADER, e.header.get(CONTENT_TYPE_HEADER));
      const ack = await js.publish(s, e.data, {
        msgID: randomBytes(16).toString('hex'),
        expect: { lastSubjectSequence: expected },
        headers: h,
      });
      expected = ack.seq;
    }
  };

  type Kind = 'raw' | 'submit' | 'rawAcks' | 'floor';
  const fns: Record<Kind, () => Promise<unknown>> = { raw, submit, rawAcks, floor };
  const kinds = Object.keys(fns) as Kind[];
  progress('2. nats: warm-up');
  for (let i = 0; i < RT_WARMUP; i++) for (const k of kinds) await fns[k]();

  progress(`2. nats: ${RT_N} round trips per kind, interleaved`);
  const samples: Record<Kind, number[]> = { raw: [], submit: [], rawAcks: [], floor: [] };
  const cpuUs: Record<Kind, number> = { raw: 0, submit: 0, rawAcks: 0, floor: 0 };
  const cap = now() + NATS_CAP_MS;
  for (let b = 0; b * RT_BLOCK < RT_N && now() < cap; b++) {
    const n = Math.min(RT_BLOCK, RT_N - b * RT_BLOCK);
    for (let j = 0; j < kinds.length; j++) {
      const k = kinds[(b + j) % kinds.length]!; // rotate the order between blocks
      const fn = fns[k];
      const c0 = process.cpuUsage();
      for (let i = 0; i < n && now() < cap; i++) {
        const t0 = now();
        await fn();
        samples[k].push(now() - t0);
      }
      const c = process.cpuUsage(c0);
      cpuUs[k] += c.user + c.system;
    }
  }
  const L = Object.fromEntries(kinds.map((k) => [k, lat(samples[k])])) as Record<Kind, Lat>;
  const cpuPer = Object.fromEntries(kinds.map((k) => [k, cpuUs[k] / Math.max(1, samples[k].length)])) as Record<
    Kind,
    number
  >;

  out.nats = {
    serviceStartMs: startMs,
    requestBytes,
    replyBytes: replyText.length,
    eventBytes: events.map((e) => e.data.length),
    snapshotHeaderBytes: events.map((e) => e.header?.get(SNAPSHOT_HEADER).length ?? 0),
    latencyMs: L,
    processCpuUsPerOp: cpuPer,
  };
  const ratio = L.submit.p50 / L.raw.p50;
  rows.push({
    id: 'nats.submit.p50',
    measure: `2. policy.submit round trip p50 (N=${L.submit.n})`,
    figure: `${fmt(L.submit.p50)} ms`,
    baseline: `${fmt(L.raw.p50)} ms raw req/reply`,
    ratio,
    ratioLabel: `${fmt(ratio, 2)}×`,
    target: `≤ ${TARGET_RATIO}×`,
    verdict: ratio <= TARGET_RATIO ? 'PASS' : 'MISS',
  });
  rows.push({
    id: 'nats.submit.p99',
    measure: '   policy.submit round trip p99',
    figure: `${fmt(L.submit.p99)} ms`,
    baseline: `${fmt(L.raw.p99)} ms raw req/reply`,
    ratio: L.submit.p99 / L.raw.p99,
    ratioLabel: `${fmt(L.submit.p99 / L.raw.p99, 2)}×`,
    target: '',
    verdict: 'info',
  });
  rows.push({
    id: 'nats.rawacks.p50',
    measure: `   raw req/reply + ${events.length} publish-ack${events.length === 1 ? '' : 's'} p50`,
    figure: `${fmt(L.rawAcks.p50)} ms`,
    baseline: `${fmt(L.raw.p50)} ms raw req/reply`,
    ratio: L.rawAcks.p50 / L.raw.p50,
    ratioLabel: `${fmt(L.rawAcks.p50 / L.raw.p50, 2)}×`,
    target: '',
    verdict: 'info',
  });
  rows.push({
    id: 'nats.submit.vs.rawacks',
    measure: `   submit p50 vs raw req/reply + ${events.length} ack${events.length === 1 ? '' : 's'}`,
    figure: `${fmt(L.submit.p50)} ms`,
    baseline: `${fmt(L.rawAcks.p50)} ms`,
    ratio: L.submit.p50 / L.rawAcks.p50,
    ratioLabel: `${fmt(L.submit.p50 / L.rawAcks.p50, 2)}×`,
    target: '',
    verdict: 'info',
  });
  rows.push({
    id: 'nats.floor.p50',
    measure: '   (diag) I/O floor: + grant SELECT, direct get, acks w/ headers',
    figure: `${fmt(L.floor.p50)} ms`,
    baseline: `submit ${fmt(L.submit.p50)} ms`,
    ratio: L.submit.p50 / L.floor.p50,
    ratioLabel: `${fmt(L.submit.p50 / L.floor.p50, 2)}× (submit/floor)`,
    target: '',
    verdict: 'info',
  });
  rows.push({
    id: 'nats.cpu',
    measure: '   (diag) process CPU per op: submit | raw | floor',
    figure: `${fmt(cpuPer.submit, 0)} µs`,
    baseline: `${fmt(cpuPer.raw, 0)} µs | ${fmt(cpuPer.floor, 0)} µs`,
    ratio: cpuPer.submit / cpuPer.raw,
    ratioLabel: `${fmt(cpuPer.submit / cpuPer.raw, 1)}×`,
    target: '',
    verdict: 'info',
  });
}

// ---------------------------------------------------------------------------------------------------------------

async function main() {
  const watchdog = startWatchdog(WATCHDOG_MS, cleanup);
  const started = now();
  const load0 = loadavg()[0]!;
  const rows: Row[] = [];
  const out: Record<string, unknown> = {};
  let failed = false;
  const sections: Array<[string, () => unknown]> = [
    ['inproc', () => benchInProcess(rows, out)],
    ['nats', () => benchNats(rows, out)],
  ];
  for (const [id, run] of sections) {
    if (ONLY && !ONLY.includes(id)) continue;
    try {
      await run();
    } catch (err) {
      if (cleaning) return; // interrupted: the signal handler cleans up and exits
      failed = true;
      console.error(`section ${id} failed:`, err);
      rows.push(errorRow(id, err));
    }
  }
  const natsVersion = client?.info?.version;
  await cleanup();
  const seconds = (now() - started) / 1000;
  const load1 = loadavg()[0]!;

  log('');
  log(
    `gate bench — node ${process.version}, NATS ${natsVersion ?? '?'}, namespace ${ns}, ${fmt(seconds, 1)} s, ` +
      `loadavg(1m) ${fmt(load0, 2)} → ${fmt(load1, 2)}`,
  );
  printTable(rows);
  printVerdicts(rows);
  if (JSON_OUT) {
    printJson(
      { bench: 'gate', node: process.version, nats: natsVersion, namespace: ns, seconds, loadavg: [load0, load1] },
      rows,
      out,
    );
  }
  clearTimeout(watchdog);
  process.exit(failed ? 1 : 0);
}

main().catch(async (err: unknown) => {
  console.error('bench failed:', err);
  await cleanup();
  process.exit(1);
});
