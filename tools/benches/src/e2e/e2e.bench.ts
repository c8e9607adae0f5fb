/**
 * End-to-end bench: governed low-risk calls from the model loop's step 3 to their result in the conversation, against
 * the sum of the raw hops that path takes, measured in the same run.
 *
 *   npm run bench:e2e                  # table
 *   npm run bench:e2e -- --json        # table, then one JSON object on the last line
 *   npm run bench:e2e -- --seconds=5 --devices=100 --looks=5 --start-rate=50 --max-rate=2000 --unloaded=10
 *   (every option is also accepted as `--name value`)
 *
 * Env: NATS_URL (default nats://127.0.0.1:4222), DATABASE_URL (an admin database the user may CREATE DATABASE from,
 * default postgres://postgres@127.0.0.1:5432/postgres). Everything the run creates (the streams of a random
 * namespace, one database, the devices' journals, the services' logs, child processes) is removed at the end, also on
 * failure or Ctrl-C; a failed run keeps the services' logs and prints where.
 *
 * The platform as deployed: policy, approvals, device-bridge and model-loop, each a process of its own
 * (`services/<name>/dist/main.js`) on a fresh namespace and database; `--devices` simulated phones (runSimulatedFleet,
 * journals in /dev/shm where there is one) in a child process; agent `bench-agent` granted the device tools. Each
 * conversation runs `scripted:observer`, which asks for one `device.screen_observe` (low risk: authorized and run)
 * per turn, `--looks` turns. This process starts the conversations (`model-loop.start`) and sees every event of the
 * conversations stream as it is stored (a core NATS subscription on its subjects); a call is timed from its request
 * recorded in the conversation (the model's reply, which step 3 hands to policy) to its result recorded there.
 *
 * The floor, measured in the same run, is the path's raw hops on its critical path, each part's p50 printed:
 * - 1 NATS request/reply (model-loop → policy.submit; this process ↔ the fleet's);
 * - 3 JetStream deliveries of a stored event to a consumer (the request → model-loop's driver, the call's decision →
 *   the bridge's projection, its outcome → model-loop's outcome reaction), each a publish from this process to an
 *   ordered consumer on another connection;
 * - 3 publish-acks one after another, each with an expected subject sequence, to a file stream like the calls stream
 *   (the bridge's `dispatched` and `started`, and model-loop's result in the conversation: each is awaited before the
 *   next step; policy's decision and the device's outcome are followed by their deliveries instead);
 * - 2 WebSocket round trips (submit → start claim, grant → outcome; the fleet's process ↔ an echo server here).
 *
 * Then: the calls' p50/p99 unloaded (`--unloaded` conversations, one after another: one call at a time), against the
 * floor; and the maximum sustained rate: offered rates of calls (conversations started at rate ÷ looks a second),
 * doubled from --start-rate until a step falls behind, then bisected. A step warms up for a second, then offers its
 * rate for --seconds; it is sustained when the results recorded in its window reach 90% of the offered rate, the
 * p99 of the calls requested in the window stays under a second, and every conversation of the step completes.
 */
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { DevIssuer, devIssuerDir } from '@ormuz/auth';
import {
  ConversationEventType,
  type ConversationCompletedV1,
  type MessageAddedV1,
  type RpcName,
  type RpcReplyOf,
  type RpcRequestOf,
} from '@ormuz/contracts';
import { runSimulatedFleet } from '@ormuz/device-sdk';
import { connectNats, decodeEvents, streamConfig } from '@ormuz/event-log';
import { callRpc } from '@ormuz/service-kit';
import {
  adminDbUrl,
  cleanUpOnSignals,
  echoResponder,
  flag,
  fmt,
  forkChild,
  freePort,
  jetStreamDeliveries,
  natsUrl,
  now,
  option,
  positiveOption,
  PlatformRun,
  progress,
  publishAckChains,
  requestReplyRoundTrips,
  sleep,
  startCpuMeter,
  startWatchdog,
  summarize,
  webSocketEchoServer,
  webSocketRoundTrips,
  until,
  type AskChild,
  type BenchRow,
  type CpuUsed,
  type LatencySummary,
} from '../kit/index.js';

// ---------------------------------------------------------------------------------------------------------------
// Command line and sizes: the default run stays within about three minutes on two busy cores.

const JSON_OUT = flag('json');
const SECONDS = positiveOption('seconds', 5); // measured window of each search step
const DEVICES = Math.round(positiveOption('devices', 100));
const LOOKS = Math.min(11, Math.round(positiveOption('looks', 5))); // calls per conversation (scripted:observer)
const START_RATE = positiveOption('start-rate', 50);
const MAX_RATE = positiveOption('max-rate', 2_000);
const UNLOADED = Math.round(positiveOption('unloaded', 10)); // conversations one after another
const STEP_WARMUP_SECONDS = 1;
/** A step is sustained when its results reach this share of the offered rate, ... */
const STEP_KEPT_UP = 0.9;
/** ... the p99 of its calls stays under this, ... */
const STEP_P99_MS = 1_000;
/** ... and its conversations all complete within this long after its window. */
const STEP_DRAIN_MS = 8_000;
/** A step stops offering as soon as this many seconds of its calls are outstanding: it has fallen behind. */
const BACKLOG_SECONDS = 2;
const MAX_STEPS = 7;
/** The bisection stops when the sustained and the failed rate are this close (fraction of the failed one). */
const SEARCH_RESOLUTION = 0.1;
const FLOOR_SAMPLES = 300;
/** The governed path's raw hops (see the header). */
const HOPS = { requestReply: 1, deliveries: 3, publishAcks: 3, webSocket: 2 } as const;
const WATCHDOG_MS = 420_000;
const TENANT = 'bench';
const AGENT = 'bench-agent';
const NATS_URL = natsUrl();
const ADMIN_DB_URL = adminDbUrl();
const script = fileURLToPath(import.meta.url);

const tokenOf = (i: number) => `tok-${i}`;
const deviceIdOf = (i: number) => `sim-${i}`;

// ---------------------------------------------------------------------------------------------------------------
// Child: the simulated fleet, `--fleet=N --url=<gateway> --journal-root=<dir>`. Replies `{ ready }` once every device
// is connected; answers `{ respond: subject }` (the floor's request/reply responder) with `{ responding }` and
// `{ echo: url }` (the floor's WebSocket round trips, timed here) with `{ echo: samples }`.

const send = (m: Record<string, unknown>): void => void process.send!(m);

async function fleetChild(count: number): Promise<void> {
  const url = option('url');
  const journalRoot = option('journal-root');
  if (!url || !journalRoot) throw new Error('the fleet child needs --url and --journal-root');
  process.on('disconnect', () => process.exit(0)); // the parent went away: never linger
  const fleet = runSimulatedFleet({
    url,
    tenant: TENANT,
    count,
    tokenFor: (i) => tokenOf(i),
    journalRoot,
    backoff: { initialDelayMs: 100, maxDelayMs: 2_000 },
  });
  await until('every device to connect', () => fleet.connectedCount() === count, 60_000);
  process.on('message', (m: Record<string, unknown>) => {
    const answer = (key: string, p: Promise<unknown>) =>
      p.then(
        (value) => send({ [key]: value ?? true }), // undefined would not cross IPC
        (err: unknown) => send({ failed: `${key}: ${(err as Error).message}` }),
      );
    if (typeof m.respond === 'string') {
      const subject = m.respond;
      void answer(
        'responding',
        connectNats({ url: NATS_URL, name: 'ormuz-bench-e2e-responder' }).then((nc) => echoResponder(nc, subject)),
      );
    }
    if (typeof m.echo === 'string') void answer('echo', webSocketRoundTrips(m.echo, FLOOR_SAMPLES));
  });
  send({ ready: true });
}

/** The fleet child as the parent sees it: `ask` sends a message and waits for the reply holding `key`. */
const forkFleet = (url: string, journalRoot: string): AskChild =>
  forkChild(
    script,
    'fleet child',
    [`--fleet=${DEVICES}`, `--url=${url}`, `--journal-root=${journalRoot}`],
    run.children,
  );

// ---------------------------------------------------------------------------------------------------------------
// What the conversations stream shows: each call's request and result, and each conversation's completion.

interface CallTimes {
  /** The conversation that asked. */
  conversation: string;
  requested: number;
  result?: number;
  status?: string;
  /** When this process saw each of the call's lifecycle events on the calls stream, first seen. */
  seen: Partial<Record<string, number>>;
}

const calls = new Map<string, CallTimes>();
/** The calls of each run (`u`, `s0`, `s1`, ...: a conversation's id up to its `-`), and how many have no result yet. */
const runs = new Map<string, { calls: CallTimes[]; outstanding: number }>();
const runOf = (conversation: string) => {
  const tag = conversation.slice(0, conversation.indexOf('-'));
  let run = runs.get(tag);
  if (!run) runs.set(tag, (run = { calls: [], outstanding: 0 }));
  return run;
};
const completed = new Map<string, { at: number; reason: string }>();
let unreadable = 0;

async function observeConversations(nc: NatsConnection): Promise<void> {
  nc.subscribe(`${ns}.conversations.>`, {
    callback: (_err, msg) => {
      const t = now();
      try {
        for (const e of decodeEvents(msg.subject, 0, msg.data)) {
          if (e.type === ConversationEventType.Completed) {
            completed.set(e.subject, { at: t, reason: (e.data as ConversationCompletedV1).reason });
            continue;
          }
          if (e.type !== ConversationEventType.MessageAdded) continue;
          const m = (e.data as MessageAddedV1).message;
          for (const r of m.tool_calls ?? []) {
            const c: CallTimes = { conversation: e.subject, requested: t, seen: lifecycle.get(r.call_id) ?? {} };
            lifecycle.delete(r.call_id);
            calls.set(r.call_id, c);
            const run = runOf(e.subject);
            run.calls.push(c);
            run.outstanding++;
          }
          const c = m.role === 'tool' && m.tool_call_id ? calls.get(m.tool_call_id) : undefined;
          if (c && c.result === undefined) {
            c.result = t;
            c.status = m.provenance?.status;
            runOf(c.conversation).outstanding--;
          }
        }
      } catch {
        unreadable++;
      }
    },
  });
  await nc.flush(); // subscribed on the server before the first conversation
}

/** Lifecycle events seen before the request that asked for the call (policy may append before model-loop's event is seen). */
const lifecycle = new Map<string, Partial<Record<string, number>>>();
/** The lifecycle step of each event in a stored calls message, in order. */
const EVENT_TYPE = /"type":"ormuz\.toolcall\.([a-z_]+)\./g;

/** Every event of the calls stream as it is stored: the first time each lifecycle event of a call is seen. */
async function observeCalls(nc: NatsConnection): Promise<void> {
  nc.subscribe(`${ns}.calls.>`, {
    callback: (_err, msg) => {
      const t = now();
      const callId = msg.subject.slice(msg.subject.lastIndexOf('.') + 1);
      let seen = calls.get(callId)?.seen ?? lifecycle.get(callId);
      if (!seen) lifecycle.set(callId, (seen = {}));
      // Read by pattern, not parsed, to keep the observer's clock cheap; one decision's events are one message.
      for (const [, type] of msg.string().matchAll(EVENT_TYPE)) seen[type!] ??= t;
    },
  });
  await nc.flush();
}

/** The stages of a call, from the events seen: [name, from, to]. */
const STAGES: readonly (readonly [string, string, string])[] = [
  ['request → authorized (model-loop driver, policy)', 'request', 'authorized'],
  ['authorized → dispatched (bridge)', 'authorized', 'dispatched'],
  ['dispatched → started (device claim)', 'dispatched', 'started'],
  ['started → succeeded (device run, outcome)', 'started', 'succeeded'],
  ['succeeded → result (model-loop outcome reaction)', 'succeeded', 'result'],
];

function stages(cs: readonly CallTimes[]): Record<string, LatencySummary> {
  const at = (c: CallTimes, step: string) =>
    step === 'request' ? c.requested : step === 'result' ? c.result : c.seen[step];
  return Object.fromEntries(
    STAGES.map(([, from, to]) => [
      `${from}_to_${to}`,
      summarize(
        cs.flatMap((c) => {
          const a = at(c, from);
          const b = at(c, to);
          return a === undefined || b === undefined ? [] : [b - a];
        }),
      ),
    ]),
  );
}

/** The calls of run `tag`. */
const callsOf = (tag: string): readonly CallTimes[] => runs.get(tag)?.calls ?? [];

const latencies = (cs: readonly CallTimes[]): LatencySummary =>
  summarize(cs.flatMap((c) => (c.result === undefined ? [] : [c.result - c.requested])));

// ---------------------------------------------------------------------------------------------------------------
// Environment and its teardown.

const run = new PlatformRun('e2e', 'e', { nats: NATS_URL, adminDb: ADMIN_DB_URL });
const ns = run.namespace;
const cleanup = (): Promise<void> => run.cleanup();
const benchConnection = (name: string): Promise<NatsConnection> => run.connection(name);

// ---------------------------------------------------------------------------------------------------------------
// The platform, the fleet, the floor.

type Call = <N extends RpcName>(
  name: N,
  body: NoInfer<RpcRequestOf<N>>,
  timeoutMs?: number,
) => Promise<NoInfer<RpcReplyOf<N>>>;

async function startPlatform(nc: NatsConnection): Promise<{ call: Call; ask: AskChild }> {
  const databaseUrl = await run.createDatabase();
  const bridgePort = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NATS_URL,
    DATABASE_URL: databaseUrl,
    ORMUZ_NAMESPACE: ns,
    APPROVALS_PORT: '0',
    DEVICE_BRIDGE_PORT: String(bridgePort),
    DEVICE_TOKENS: Array.from({ length: DEVICES }, (_, i) => `${TENANT}:${deviceIdOf(i)}:${tokenOf(i)}`).join(','),
    LOG_LEVEL: 'warn',
  };
  for (const name of ['policy', 'approvals', 'device-bridge', 'model-loop']) await run.startService(nc, name, env);
  const issuer = await DevIssuer.open(devIssuerDir(process.env));
  const admin = { bearer: await issuer.sign({ tenant: TENANT, roles: ['admin'], subject: 'bench@bench' }) };
  const call: Call = (name, body, timeoutMs = 10_000) => callRpc(nc, ns, name, body, { credential: admin, timeoutMs });
  await call('policy.grants.set', { tenant: TENANT, agent_id: AGENT, allow: ['device'] }, 30_000);

  const journalRoot = run.createJournalRoot();
  progress(`connecting ${DEVICES} simulated devices (fleet child process)`);
  const bridge = run.services.find((s) => s.name === 'device-bridge')!;
  const ask = forkFleet(bridge.health.endpoints.devices ?? `ws://127.0.0.1:${bridgePort}/v1/devices`, journalRoot);
  await ask('ready', undefined, 90_000);
  const deadline = now() + 30_000;
  while ((await call('device-bridge.devices', { tenant: TENANT })).devices.length < DEVICES) {
    if (now() > deadline) throw new Error(`the bridge does not list all ${DEVICES} devices`);
    await sleep(200);
  }
  return { call, ask };
}

interface Floor {
  requestReply: LatencySummary;
  publishAcks: LatencySummary;
  deliveries: LatencySummary;
  webSocket: LatencySummary;
  totalMs: number;
}

async function measureFloor(nc: NatsConnection, ask: AskChild): Promise<Floor> {
  const responder = `${ns}.bench.floor`;
  await ask('responding', { respond: responder });
  const requestReply = summarize(await requestReplyRoundTrips(nc, responder, FLOOR_SAMPLES));

  const jsm = await jetstreamManager(nc);
  const stream = `${ns.toUpperCase()}_FLOOR`;
  run.extraStreams.add(stream);
  const like = streamConfig(ns, 'calls');
  await jsm.streams.add({ ...like, name: stream, subjects: [`${ns}.floor.>`], deny_delete: false, deny_purge: false });
  progress('floor: publish-acks and deliveries');
  const acks = await publishAckChains(jetstream(nc), `${ns}.floor.a`, HOPS.publishAcks, FLOOR_SAMPLES / 3);
  const consumer = await benchConnection('floor-consumer');
  const deliveries = summarize(
    await jetStreamDeliveries(nc, jetstream(consumer), stream, `${ns}.floor.d`, FLOOR_SAMPLES),
  );

  progress('floor: WebSocket round trips');
  const echo = await webSocketEchoServer();
  const webSocket = summarize(await ask<number[]>('echo', { echo: echo.url }));
  await echo.close();
  const publishAcks = summarize(acks.chained);
  return {
    requestReply,
    publishAcks,
    deliveries,
    webSocket,
    totalMs:
      HOPS.requestReply * requestReply.p50 +
      publishAcks.p50 +
      HOPS.deliveries * deliveries.p50 +
      HOPS.webSocket * webSocket.p50,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The conversations.

let startErrors = 0;
let firstStartError: string | undefined;

function startConversation(call: Call, id: string, device: number): Promise<void> {
  return call('model-loop.start', {
    tenant: TENANT,
    agent_id: AGENT,
    task: `Look at the screen ${LOOKS} times.`,
    device_id: deviceIdOf(device % DEVICES),
    model: 'scripted:observer',
    conversation_id: id,
  }).then(
    () => undefined,
    (err: unknown) => {
      startErrors++;
      firstStartError ??= (err as Error).message;
    },
  );
}

/** One call at a time: `UNLOADED` conversations one after another. */
async function unloaded(
  call: Call,
): Promise<{ latency: LatencySummary; stages: Record<string, LatencySummary>; calls: number; failed: number }> {
  for (let i = 0; i < UNLOADED; i++) {
    const id = `u-${i}`;
    await startConversation(call, id, i);
    await until(`conversation ${id} to complete`, () => completed.has(id), 30_000);
  }
  const cs = callsOf('u');
  return {
    latency: latencies(cs),
    stages: stages(cs),
    calls: cs.length,
    failed: cs.filter((c) => c.status !== 'succeeded').length,
  };
}

interface Step {
  rate: number;
  sustained: boolean;
  /** Results recorded in the window, per second. */
  completedPerSecond: number;
  latency: LatencySummary;
  /** Calls requested in the window, and those of them still without a result at the end. */
  requested: number;
  missing: number;
  conversations: number;
  unfinished: number;
  /** The step stopped offering early: too many calls outstanding. */
  stoppedEarly: boolean;
  /**
   * CPU used in the window per result recorded in it, in ms: each process, Postgres, NATS, the whole machine; and
   * `commits`, the Postgres transactions committed per result.
   */
  cpuPerResult: Record<string, number | undefined>;
  /** How busy the machine's cores were in the window (0–1). */
  machineBusy: number | undefined;
}

/** Starts measuring the CPU of every process of the run: the services, the fleet, Postgres's backends, NATS. */
function startRunCpuMeter(): Promise<() => Promise<CpuUsed>> {
  const processes: Record<string, number | undefined> = { bench: process.pid };
  for (const s of run.services) processes[s.name] = s.child.pid;
  for (const c of run.children) processes.fleet = c.pid;
  return startCpuMeter(processes, { adminUrl: ADMIN_DB_URL, name: run.dbName });
}

/** CPU used per result, in ms, by each part of what {@link startRunCpuMeter} measured. */
function perResult(used: CpuUsed, results: number): Record<string, number | undefined> {
  const per = (ms: number | undefined) => (ms === undefined || results === 0 ? undefined : ms / results);
  return {
    ...Object.fromEntries(Object.entries(used.processes).map(([name, ms]) => [name, per(ms)])),
    postgres: per(used.postgres),
    commits: used.commits === undefined || results === 0 ? undefined : used.commits / results,
    nats: per(used.nats),
    machine: per(used.machineBusy),
  };
}

/** Offers `rate` calls a second (conversations at rate ÷ LOOKS) for a warm-up, then a window of SECONDS. */
async function step(call: Call, tag: string, rate: number): Promise<Step> {
  const prefix = `${tag}-`;
  const perSecond = rate / LOOKS;
  const total = Math.round(perSecond * (STEP_WARMUP_SECONDS + SECONDS));
  const t0 = now();
  const w0 = t0 + STEP_WARMUP_SECONDS * 1000;
  const w1 = w0 + SECONDS * 1000;
  let started = 0;
  let stoppedEarly = false;
  const starts: Promise<void>[] = [];
  // The CPU of the window, from its start to its end, as the results counted are the window's.
  const used = (async () => {
    await sleep(w0 - now());
    const read = await startRunCpuMeter();
    await sleep(w1 - now());
    return read();
  })();
  while (started < total) {
    const due = Math.min(total, Math.floor(((now() - t0) / 1000) * perSecond) + 1);
    for (; started < due; started++) starts.push(startConversation(call, `${prefix}${started}`, started));
    await sleep(5);
    if ((runs.get(tag)?.outstanding ?? 0) > rate * BACKLOG_SECONDS) {
      stoppedEarly = true;
      break;
    }
  }
  await Promise.all(starts);
  const ids = Array.from({ length: started }, (_, i) => `${prefix}${i}`);
  await until('the step to finish', () => ids.every((id) => completed.has(id)), STEP_DRAIN_MS).catch(() => undefined);
  const cpu = await used;
  const cs = callsOf(tag);
  const inWindow = cs.filter((c) => c.requested >= w0 && c.requested < w1);
  const results = cs.filter((c) => c.result !== undefined && c.result >= w0 && c.result < w1).length;
  const latency = latencies(inWindow);
  const missing = inWindow.filter((c) => c.result === undefined).length;
  const unfinished = ids.filter((id) => !completed.has(id)).length;
  const completedPerSecond = results / SECONDS;
  return {
    rate,
    sustained:
      !stoppedEarly &&
      unfinished === 0 &&
      missing === 0 &&
      completedPerSecond >= STEP_KEPT_UP * rate &&
      latency.p99 <= STEP_P99_MS,
    completedPerSecond,
    latency,
    requested: inWindow.length,
    missing,
    conversations: started,
    unfinished,
    stoppedEarly,
    cpuPerResult: perResult(cpu, results),
    machineBusy: cpu.machineBusy !== undefined && cpu.machineTotal ? cpu.machineBusy / cpu.machineTotal : undefined,
  };
}

/** Doubles from START_RATE while sustained, then bisects between the last sustained and the first failed rate. */
async function searchMaxRate(call: Call): Promise<{ steps: Step[]; best: Step | undefined; capped: boolean }> {
  const steps: Step[] = [];
  let best: Step | undefined;
  let bad = Number.POSITIVE_INFINITY;
  let rate = START_RATE;
  for (let i = 0; i < MAX_STEPS; i++) {
    progress(`search step ${i + 1}: ${Math.round(rate)} calls/s for ${SECONDS} s`);
    const s = await step(call, `s${i}`, rate);
    steps.push(s);
    progress(
      `   ${s.sustained ? 'sustained' : 'fell behind'}: ${fmt(s.completedPerSecond, 0)} results/s, p50 ${fmt(s.latency.p50)} ms, p99 ${fmt(s.latency.p99)} ms` +
        `${s.stoppedEarly ? ', stopped early' : ''}, ${s.unfinished}/${s.conversations} conversations unfinished`,
    );
    if (s.sustained && (!best || s.rate > best.rate)) best = s;
    if (!s.sustained) {
      bad = Math.min(bad, rate);
      // What a failed step left behind finishes before the next one starts.
      const left = Array.from({ length: s.conversations }, (_, k) => `s${i}-${k}`);
      await until('the backlog to drain', () => left.every((id) => completed.has(id)), 15_000).catch(() => undefined);
    }
    const good = best?.rate ?? 0;
    if (good >= MAX_RATE) return { steps, best, capped: true };
    if (Number.isFinite(bad) && bad - good <= SEARCH_RESOLUTION * bad) break;
    rate = bad === Number.POSITIVE_INFINITY ? Math.min(MAX_RATE, rate * 2) : (good + bad) / 2;
  }
  return { steps, best, capped: false };
}

// ---------------------------------------------------------------------------------------------------------------

async function main() {
  cleanUpOnSignals(cleanup);
  const watchdog = startWatchdog(WATCHDOG_MS, cleanup);
  const started = now();
  const load0 = loadavg()[0]!;
  const rows: BenchRow[] = [];
  const out: Record<string, unknown> = {};
  let failed = false;
  try {
    const nc = await benchConnection('driver');
    await observeConversations(await benchConnection('observer'));
    await observeCalls(await benchConnection('calls-observer'));
    const { call, ask } = await startPlatform(nc);

    progress('floor: request/reply, publish-acks, deliveries, WebSocket round trips');
    const floor = await measureFloor(nc, ask);
    out.floor = floor;
    const info = (id: string, measure: string, figure: string, baseline = ''): BenchRow => ({
      id,
      measure,
      figure,
      baseline,
      ratio: Number.NaN,
      target: '',
      verdict: 'info',
    });
    rows.push(
      info(
        'floor.request_reply',
        `floor: ${HOPS.requestReply} NATS request/reply p50`,
        `${fmt(floor.requestReply.p50)} ms`,
        'model-loop → policy.submit',
      ),
      info(
        'floor.deliveries',
        `floor: ${HOPS.deliveries} JetStream deliveries, p50 each`,
        `${fmt(floor.deliveries.p50)} ms`,
        'request → driver, decision → bridge, outcome → model-loop',
      ),
      info(
        'floor.publish_acks',
        `floor: ${HOPS.publishAcks} publish-acks one after another p50`,
        `${fmt(floor.publishAcks.p50)} ms`,
        'dispatched, started, the result in the conversation',
      ),
      info(
        'floor.websocket_round_trips',
        `floor: ${HOPS.webSocket} WebSocket round trips, p50 each`,
        `${fmt(floor.webSocket.p50)} ms`,
        'submit → claim, grant → outcome',
      ),
      info('floor.total', 'floor: the sum', `${fmt(floor.totalMs)} ms`),
    );

    progress(`unloaded: ${UNLOADED} conversations of ${LOOKS} calls, one after another`);
    const u = await unloaded(call);
    out.unloaded = u;
    const ratio = u.latency.p50 / floor.totalMs;
    rows.push(
      {
        id: 'latency.unloaded.request_to_result.p50',
        measure: `unloaded request→result p50 (${u.calls} calls, one at a time)`,
        figure: `${fmt(u.latency.p50)} ms`,
        baseline: `${fmt(floor.totalMs)} ms floor`,
        ratio,
        target: '≤ 4×',
        verdict: ratio <= 4 && u.failed === 0 && u.calls === UNLOADED * LOOKS ? 'PASS' : 'MISS',
      },
      {
        id: 'latency.unloaded.request_to_result.p99',
        measure: 'unloaded request→result p99',
        figure: `${fmt(u.latency.p99)} ms`,
        baseline: `${fmt(floor.totalMs)} ms floor`,
        ratio: u.latency.p99 / floor.totalMs,
        target: '',
        verdict: 'info',
      },
    );

    for (const [name, from, to] of STAGES) {
      const l = u.stages[`${from}_to_${to}`]!;
      rows.push(
        info(`latency.unloaded.stage.${from}_to_${to}`, `   ${name} p50 / p99`, `${fmt(l.p50)} / ${fmt(l.p99)} ms`),
      );
    }

    const search = await searchMaxRate(call);
    out.search = search;
    const best = search.best;
    const max = best?.rate ?? 0;
    rows.push({
      id: 'throughput.max_sustained',
      measure: `maximum sustained rate (offered; ${LOOKS} calls a conversation, ${DEVICES} devices)`,
      figure: `${search.capped ? '≥ ' : ''}${fmt(max, 0)}/s`,
      baseline: search.steps.map((s) => `${Math.round(s.rate)}${s.sustained ? '✓' : '✗'}`).join(' '),
      ratio: max / 1000,
      ratioLabel: '',
      target: '≥ 1,000/s',
      verdict: max >= 1000 ? 'PASS' : 'MISS',
    });
    if (best) {
      rows.push(
        info(
          'throughput.max_sustained.completed_per_second',
          '   at that rate: results recorded per second',
          `${fmt(best.completedPerSecond, 0)}/s`,
          `${best.requested} calls in ${SECONDS} s`,
        ),
        info(
          'throughput.max_sustained.request_to_result',
          '   at that rate: request→result p50 / p99',
          `${fmt(best.latency.p50)} / ${fmt(best.latency.p99)} ms`,
          `${fmt(floor.totalMs)} ms floor`,
        ),
      );
      // What bounds the rate: the CPU each result cost, per process, and how busy the machine was.
      const costs = Object.entries(best.cpuPerResult).filter(([name]) => name !== 'machine' && name !== 'commits');
      rows.push(
        info(
          'throughput.max_sustained.cpu_per_result',
          '   at that rate: CPU per result (ms), per process',
          `${fmt(best.cpuPerResult.machine ?? Number.NaN, 1)} ms machine`,
          costs.map(([name, ms]) => `${name} ${fmt(ms ?? Number.NaN, 1)}`).join(', '),
        ),
        info(
          'throughput.max_sustained.commits_per_result',
          '   at that rate: Postgres commits per result',
          fmt(best.cpuPerResult.commits ?? Number.NaN, 1),
          'every service, every statement outside a transaction counted as one',
        ),
        info(
          'throughput.max_sustained.machine_busy',
          '   at that rate: the machine busy',
          best.machineBusy === undefined ? 'n/a' : `${fmt(best.machineBusy * 100, 0)} %`,
          `${cpus().length} cores`,
        ),
      );
    }
    if (u.failed > 0 || startErrors > 0 || unreadable > 0) {
      failed = true;
      out.errors = { failedCalls: u.failed, startErrors, firstStartError, unreadable };
    }
  } catch (err) {
    failed = true;
    run.failedWith('e2e', err, rows);
  }

  await run.finish(
    { bench: 'e2e', title: 'end-to-end bench', namespace: ns, startedMs: started, load0 },
    { rows, detail: out, json: JSON_OUT, failed },
    watchdog,
  );
}

const fleetSize = option('fleet');
if (fleetSize) {
  fleetChild(Number(fleetSize)).catch((err: unknown) => {
    send({ failed: err instanceof Error ? err.message : String(err) });
    process.exit(1);
  });
} else {
  main().catch(async (err: unknown) => {
    console.error('bench failed:', err);
    await cleanup();
    process.exit(1);
  });
}
