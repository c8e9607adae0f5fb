/**
 * Device-bridge benchmark: every figure beside a raw baseline measured in the same run.
 *
 *   npm run bench:bridge               # table
 *   npm run bench:bridge -- --json     # table, then one JSON object on the last line
 *   npm run bench:bridge -- --only=memory|latency  --connections=10000 --devices=1000 --seconds=10
 *     --start-rate=250 --max-rate=4000 --journals=shm|disk
 *   (every option is also accepted as `--name value`; profile the bridge with
 *    `node --cpu-prof --cpu-prof-dir=prof tools/benches/dist/device-bridge/bridge.bench.js --only=latency`: the bridge
 *    runs in the bench's own process, so its profile is the one named after the parent's pid)
 *
 * Env: NATS_URL (default nats://127.0.0.1:4222), DATABASE_URL (an admin database the user may CREATE DATABASE from,
 * default postgres://postgres@127.0.0.1:5432/postgres). Everything the run creates — the calls stream and a floor
 * stream under a random namespace, one database, a dir of device journals, child processes — is removed at the end,
 * also on failure or Ctrl-C.
 *
 * Measured (bridge | raw baseline):
 *  1. memory per connection: 10,000 connections that each sent a valid hello and were welcomed by the bridge's
 *     DeviceGateway (real credential check, the service's handler shape) | the same 10,000 connections to a bare
 *     `ws` server. Each server runs alone in a child process (started with --expose-gc) and reports
 *     process.memoryUsage() over IPC after a forced GC, before and after the connections; the clients (raw `ws`
 *     sockets, no journals) live in this process.
 *  2. latency and throughput: the whole bridge (startService + DeviceBridgeModule) alone in this process, as deployed;
 *     everything around it in child processes, so that none of it runs on the bridge's event loop:
 *     - `--fleet=N`: 1,000 simulated devices (runSimulatedFleet, one timer wheel), remote as real devices are. Their
 *       journals fsync every record; a thousand phones each have their own flash, while here they share one process
 *       and one disk, whose fsyncs blocked the fleet's event loop and made it the bottleneck. So the journals live in
 *       memory-backed /dev/shm where there is one (`--journals=disk`: the tmp dir);
 *     - `--load`: the clients. Calls for `device.screen_observe` are submitted and authorized, round-robin over the
 *       devices, through a ToolCalls of their own (own NATS connection and aggregate cache, as the policy service
 *       would: the bridge gets no warm cache from the load); every event of the calls stream is seen as it is stored
 *       by a core NATS subscription on the stream's subjects, on another connection. Both clocks are this child's.
 *     The floor, measured in the same run (each part's p50, printed): one raw NATS request/reply between the load
 *     child and this process (the agent's submit RPC), the chain of five publish-acks a governed call waits for one
 *     after another (requested, authorized, dispatched, started, succeeded: each a publish with an expected subject
 *     sequence to a file stream like the calls stream, from the load child) and one WebSocket round trip between the
 *     fleet's process and this one (an echo, one at a time).
 *     Then: submit→outcome unloaded (one call at a time, paced at 20/s), against the floor; a search for the maximum
 *     sustained rate (offered rates doubled from --start-rate until a step falls behind, then bisected: a step is
 *     sustained when every call of its window succeeded within a few seconds of its end and submit→outcome p99 stayed
 *     under a second); and a run at 80% of that maximum with p50/p99, stage times (authorized → dispatched → started
 *     → succeeded) and the CPU of the three processes, which shows which one is saturated.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { sql } from 'kysely';
import { DeviceFrameCodec, type DeviceFrameDraft } from '@ormuz/contracts';
import { runSimulatedFleet } from '@ormuz/device-sdk';
import { connectNats, EventStore, streamConfig, streamName } from '@ormuz/event-log';
import { startService, ToolCalls, type RunningService } from '@ormuz/service-kit';
import { authorizeSeededCall } from '@ormuz/testing';
import { deriveCallId } from '@ormuz/tool-call';
import {
  DeviceCredentials,
  DeviceGateway,
  DeviceLinkHost,
  loadDeviceBridgeConfig,
  deviceBridgeService,
} from '@ormuz/device-bridge';
import {
  adminDbUrl,
  benchDbName,
  bounded as boundedStep,
  cleanUpOnSignals,
  createDatabase,
  databaseUrl,
  dropDatabase,
  errorRow,
  flag,
  fmt,
  log,
  machineCpuMs,
  natsServerPid,
  natsUrl,
  now,
  printJson,
  procCpuMs,
  printTable,
  printVerdicts,
  progress,
  sleep,
  startWatchdog,
  summarize,
  type BenchRow,
} from '../kit/index.js';

// ---------------------------------------------------------------------------------------------------------------
// Command line and sizes. Bounded so the whole run stays within a few minutes on two busy cores.

const argv = process.argv.slice(2);

/** The value of `--name=value` or `--name value`, or undefined when the option is absent. */
function optionValue(name: string): string | undefined {
  const i = argv.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (i < 0) return undefined;
  const hit = argv[i]!;
  if (hit !== `--${name}`) return hit.slice(name.length + 3);
  const value = argv[i + 1];
  if (value === undefined || value.startsWith('--')) throw new Error(`--${name} needs a value`);
  return value;
}

function positive(name: string, fallback: number): number {
  const given = optionValue(name);
  const v = given === undefined ? fallback : Number(given);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} must be a positive number`);
  return v;
}

const JSON_OUT = flag('json', argv);
const ONLY = optionValue('only');
const CONNECTIONS = positive('connections', 10_000); // 1.
const CONNECT_CONCURRENCY = 256; // connection attempts in flight (listen backlog is 511)
const DEVICES = positive('devices', 1_000); // 2.
const SECONDS = positive('seconds', 10); // measured window of the run at 80% of the maximum rate
const WARMUP_SECONDS = 2;
/** The first offered rate of the search, calls per second; doubled while sustained. */
const START_RATE = positive('start-rate', 250);
/** The search stops here: a rate this high is reported as "at least". */
const MAX_RATE = positive('max-rate', 4_000);
/** Measured window of each search step, and its warm-up, in seconds. */
const STEP_SECONDS = 6;
const STEP_WARMUP_SECONDS = 1;
/** A step is sustained when its calls all succeed within this long after its window, and ... */
const STEP_DRAIN_MS = 4_000;
/** ... submit→outcome p99 stays under this (beyond it the calls queue: the rate is not sustained). */
const STEP_P99_MS = 1_000;
/** Search steps at most (doublings and bisections). */
const MAX_STEPS = 8;
/** The bisection stops when the sustained and the failed rate are this close (fraction of the failed one). */
const SEARCH_RESOLUTION = 0.1;
/** Unloaded: one call at a time, at this pace, for this long. */
const UNLOADED_RATE = 20;
const UNLOADED_SECONDS = 5;
/** Round trips of each floor part. */
const FLOOR_SAMPLES = 300;
/** Events of a governed call, each a publish-ack the next waits for: requested, authorized, dispatched, started, succeeded. */
const GOVERNED_APPENDS = 5;
const DRAIN_MS = 15_000; // wait for the last outcomes after the run at 80%
const WATCHDOG_MS = 480_000;
const JOURNALS = optionValue('journals') ?? (existsSync('/dev/shm') ? 'shm' : 'disk');
const TENANT = 'bench';
const NATS_URL = natsUrl();
const ADMIN_DB_URL = adminDbUrl();
const script = fileURLToPath(import.meta.url);

const tokenOf = (i: number) => `tok-${i}`;
const deviceIdOf = (i: number) => `sim-${i}`;

interface Lat {
  n: number;
  p50: number;
  p99: number;
  mean: number;
  max: number;
}
function lat(samples: readonly number[]): Lat {
  const { n, p50, p99, mean, max } = summarize(samples);
  return { n, p50, p99, mean, max };
}

async function until(what: string, predicate: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = now() + timeoutMs;
  while (!predicate()) {
    if (now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}

/** Fires `fire(i)` at `rate` per second for `seconds`, without waiting for the previous ones. */
async function paced(rate: number, seconds: number, fire: (i: number) => void): Promise<number> {
  const total = Math.round(rate * seconds);
  const t0 = now();
  let i = 0;
  while (i < total) {
    const due = Math.min(total, Math.floor(((now() - t0) / 1000) * rate) + 1);
    for (; i < due; i++) fire(i);
    await sleep(2);
  }
  return total;
}

// ---------------------------------------------------------------------------------------------------------------
// Child processes. Each reports over IPC with objects of one key (`{ port }`, `{ ready }`, ...), or `{ failed }`.

type Reply = Record<string, unknown>;

/** Sends one reply to the parent. */
const reply = (m: Reply): void => void process.send!(m);

/**
 * Runs a child's body; a failure is reported to the parent (which stops waiting) before the child exits. Every child
 * answers `'cpu'` with `{ cpu: process.cpuUsage() }`.
 */
function childMain(body: () => Promise<void>): void {
  process.on('disconnect', () => process.exit(0)); // the parent went away: never linger
  process.on('message', (m) => {
    if (m === 'cpu') reply({ cpu: process.cpuUsage() });
  });
  body().catch((err: unknown) => {
    reply({ failed: err instanceof Error ? err.message : String(err) });
    process.exit(1);
  });
}

/** A forked child as the parent sees it. */
interface Child {
  send(message: unknown): void;
  /** The value of the oldest reply holding `key`; rejects as soon as the child reports a failure or exits instead. */
  next<T>(key: string, timeoutMs?: number): Promise<T>;
  /** Its CPU time so far. */
  cpu(): Promise<NodeJS.CpuUsage>;
  kill(): void;
}

/** Forks this script with `args`; the child is killed by the cleanup whatever happens. */
function forkSelf(name: string, args: string[], execArgv = process.execArgv): Child {
  const child = fork(script, args, { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.add(child);
  const replies: Reply[] = [];
  let failure: string | undefined;
  child.on('message', (m: Reply) => {
    if ('failed' in m) failure = `the ${name} failed: ${String(m.failed)}`;
    else replies.push(m);
  });
  child.once('exit', (code, signal) => (failure ??= `the ${name} exited (${signal ?? `code ${code}`})`));
  const next = async <T>(key: string, timeoutMs = 20_000): Promise<T> => {
    await until(`the ${name}'s ${key}`, () => failure !== undefined || replies.some((r) => key in r), timeoutMs);
    const i = replies.findIndex((r) => key in r);
    if (i < 0) throw new Error(failure);
    return replies.splice(i, 1)[0]![key] as T;
  };
  return {
    send: (message) => child.send(message as Reply),
    next,
    cpu: () => {
      child.send('cpu');
      return next<NodeJS.CpuUsage>('cpu');
    },
    kill: () => {
      child.kill('SIGKILL');
      children.delete(child);
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Child: a server measured for memory. `--server=bare` (a bare ws server) or `--server=gateway` (the DeviceGateway).

function settle(): NodeJS.MemoryUsage {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('the server child needs --expose-gc');
  for (let i = 0; i < 4; i++) gc();
  return process.memoryUsage();
}

async function serverChild(kind: string): Promise<void> {
  let port: number;
  if (kind === 'bare') {
    // The same options the gateway uses; a message handler so the hello is read (and dropped) like a frame.
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false, clientTracking: false });
    await new Promise((resolve) => server.once('listening', resolve));
    server.on('connection', (ws: WebSocket) => {
      ws.on('message', () => undefined);
      ws.on('error', () => undefined);
    });
    port = (server.address() as { port: number }).port;
  } else {
    const credentials = new DeviceCredentials(
      Array.from({ length: CONNECTIONS }, (_, i) => ({ tenant: TENANT, deviceId: deviceIdOf(i), token: tokenOf(i) })),
    );
    const gateway = new DeviceGateway({
      host: '127.0.0.1',
      port: 0,
      heartbeatIntervalMs: 600_000, // no pings inside the measurement
      authenticator: { authenticate: async (hello) => credentials.verify(hello.tenant, hello.device_id, hello.token) },
      // The service's handler does no per-connection bookkeeping for an idle device (its in-flight set is per claim).
      handler: {
        onConnected: () => undefined,
        onStartClaim: async () => ({ granted: true }),
        onOutcome: async () => undefined,
        onStatusReport: () => undefined,
        onDisconnected: () => undefined,
      },
    });
    port = (await gateway.listen()).port;
  }
  process.on('message', (m) => {
    if (m === 'measure') reply({ memory: settle() });
  });
  settle();
  reply({ port });
}

// ---------------------------------------------------------------------------------------------------------------
// Child: the simulated fleet. `--fleet=N --url=<gateway> --journals=<dir>`. Replies `{ ready: { connectMs } }` once
// every device is welcomed, then answers `{ echo: url }` with `{ echo: Lat }` (the floor's WebSocket round trip).

async function fleetChild(count: number): Promise<void> {
  const url = optionValue('url');
  const journalRoot = optionValue('journal-root');
  if (!url || !journalRoot) throw new Error('the fleet child needs --url and --journal-root');
  const t0 = now();
  const fleet = runSimulatedFleet({
    url,
    tenant: TENANT,
    count,
    tokenFor: (i) => tokenOf(i),
    journalRoot,
    backoff: { initialDelayMs: 100, maxDelayMs: 2_000 },
  });
  await until('every device to connect', () => fleet.connectedCount() === count, 40_000);
  process.on('message', (m: unknown) => {
    if (typeof m === 'object' && m !== null && 'echo' in m) {
      echoRoundTrips(String(m.echo)).then(
        (echo) => reply({ echo }),
        (err: unknown) => reply({ failed: `echo: ${(err as Error).message}` }),
      );
    }
  });
  reply({ ready: { connectMs: now() - t0 } });
}

/** The floor's WebSocket round trip, client side: echoes one at a time over 100 connections to `url`. */
async function echoRoundTrips(url: string): Promise<Lat> {
  const clients = await Promise.all(
    Array.from({ length: 100 }, async () => {
      const ws = new WebSocket(url, { perMessageDeflate: false });
      await new Promise((r, j) => ws.once('open', r).once('error', j));
      return ws;
    }),
  );
  // A frame about the size of a submit, so the baseline moves the same bytes.
  const body = JSON.stringify({ type: 'submit', tool: 'device.screen_observe', payload: '{}', pad: 'x'.repeat(300) });
  const samples: number[] = [];
  for (let i = 0; i < 50 + FLOOR_SAMPLES; i++) {
    const ws = clients[i % clients.length]!;
    const t = now();
    await new Promise<void>((resolve) => {
      ws.once('message', () => resolve());
      ws.send(`{"request_id":"e-${i}",${body.slice(1)}`);
    });
    if (i >= 50) samples.push(now() - t);
  }
  for (const ws of clients) ws.terminate();
  return lat(samples);
}

// ---------------------------------------------------------------------------------------------------------------
// Child: the clients. `--load --namespace=<ns>`. Replies `{ ready: true }` once it observes the calls stream, then
// answers `{ floor: FloorRequest }` with `{ floor: FloorFigures }` and `{ run: RunRequest }` (warm-up, measured window,
// drain) with `{ figures: LoadFigures }`.

interface Tracked {
  submitted: number;
  authorized?: number; // authorize append acknowledged
  seenAuthorized?: number;
  dispatched?: number;
  started?: number;
  succeeded?: number;
  measured: boolean;
}

/** The lifecycle step of each event in a stored message, in order. */
const EVENT_TYPE = /"type":"ormuz\.toolcall\.([a-z_]+)\./g;

/**
 * Every event on the calls stream as it is stored, on a connection of its own: the first time each lifecycle event
 * of a tracked call is seen.
 */
async function observeCalls(
  tracked: () => ReadonlyMap<string, Tracked>,
  onSucceeded: (c: Tracked) => void,
): Promise<void> {
  const nc = await benchConnection('observer');
  nc.subscribe(`${ns}.calls.>`, {
    callback: (_err, msg) => {
      const t = now();
      const c = tracked().get(msg.subject.slice(msg.subject.lastIndexOf('.') + 1));
      if (!c) return;
      // Every event of the message, in order: one decision's events are one message (a CloudEvents batch, e.g. a
      // start with its outcome, docs/decisions/0015). Read by pattern, not parsed, to keep the observer's clock cheap.
      for (const [, type] of msg.string().matchAll(EVENT_TYPE)) {
        if (type === 'authorized') c.seenAuthorized ??= t;
        else if (type === 'dispatched') c.dispatched ??= t;
        else if (type === 'started') c.started ??= t;
        else if (type === 'succeeded' && c.succeeded === undefined) {
          c.succeeded = t;
          onSucceeded(c);
        }
      }
    },
  });
  await nc.flush(); // subscribed on the server before the first call
}

/** Calls whose submit or authorize failed (`measured`: of the window); they are no longer tracked. */
interface LoadErrors {
  count: number;
  measured: number;
  first: string | undefined;
}

/** Submits and authorizes calls as the policy service would: its own connection, its own aggregate cache. */
async function callSubmitter() {
  const nc = await benchConnection('load');
  const calls = new ToolCalls(new EventStore(jetstream(nc), await jetstreamManager(nc)), ns, '/bench/policy');
  const cause = { correlationid: 'bench', causationid: 'bench' };
  return (tracked: Map<string, Tracked>, errors: LoadErrors, operation: string, device: number, measured: boolean) => {
    const origin = { kind: 'operation' as const, operation_id: operation };
    const callId = deriveCallId(TENANT, origin);
    const c: Tracked = { submitted: now(), measured };
    tracked.set(callId, c);
    void (async () => {
      const call = { tenant: TENANT, callId, tool: 'device.screen_observe', origin, agentId: 'bench-agent' };
      await authorizeSeededCall(calls, { ...call, deviceId: deviceIdOf(device % DEVICES) }, cause);
      c.authorized = now();
    })().catch((err: unknown) => {
      errors.count++;
      if (measured) errors.measured++;
      errors.first ??= (err as Error).message;
      tracked.delete(callId);
    });
  };
}

const cpuPercent = (used: NodeJS.CpuUsage, since: NodeJS.CpuUsage, ms: number): number =>
  ((used.user - since.user + used.system - since.system) / 1000 / ms) * 100;

/** One run of the load: `rate` calls per second, `warmupSeconds` unmeasured, then `seconds` measured. */
interface RunRequest {
  readonly tag: string;
  readonly rate: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
  /** How long the measured calls may take to finish after the window. */
  readonly drainMs: number;
}

interface LoadFigures {
  rate: number;
  e2e: Lat;
  fromSubmit: Lat;
  stages: Record<string, Lat>;
  done: number;
  issued: number;
  failed: number;
  firstError?: string;
  /** Measured calls that succeeded per second, from the start of the window to the last success. */
  callsPerSecond: number;
  /** Every measured call succeeded within the drain. */
  keptUp: boolean;
}

/** What the floor measures from the load child. */
interface FloorRequest {
  /** Subject of the responder in the bridge's process. */
  readonly responder: string;
  /** The floor stream, and its subject prefix. */
  readonly stream: string;
  readonly subjects: string;
}

interface FloorFigures {
  /** One core NATS request/reply to the bridge's process. */
  requestReply: Lat;
  /** One publish with an expected subject sequence, acknowledged by the file stream. */
  publishAck: Lat;
  /** The five publish-acks of a governed call, one after another. */
  governedAcks: Lat;
}

/** The floor's NATS parts, from this process: request/reply to `responder`, and publish-ack chains. */
async function measureFloor(request: FloorRequest): Promise<FloorFigures> {
  const nc = await benchConnection('floor');
  const js = jetstream(nc);
  const rr: number[] = [];
  for (let i = 0; i < 50 + FLOOR_SAMPLES; i++) {
    const t = now();
    await nc.request(request.responder, 'ping', { timeout: 5_000 });
    if (i >= 50) rr.push(now() - t);
  }
  // About an event's bytes and a snapshot header's, as an append carries.
  const event = new TextEncoder().encode(JSON.stringify({ pad: 'x'.repeat(700) }));
  const snapshot = 'y'.repeat(400);
  const single: number[] = [];
  const chains: number[] = [];
  for (let i = 0; i < 10 + FLOOR_SAMPLES / GOVERNED_APPENDS; i++) {
    const subject = `${request.subjects}.${i}`;
    const t = now();
    let last = 0;
    for (let k = 0; k < GOVERNED_APPENDS; k++) {
      const h = natsHeaders();
      h.set('Ormuz-Snapshot', snapshot);
      const t1 = now();
      const ack = await js.publish(subject, event, {
        msgID: `${subject}-${k}`,
        expect: { lastSubjectSequence: last },
        headers: h,
      });
      if (i >= 10) single.push(now() - t1);
      last = ack.seq;
    }
    if (i >= 10) chains.push(now() - t);
  }
  return { requestReply: lat(rr), publishAck: lat(single), governedAcks: lat(chains) };
}

async function loadChild(): Promise<void> {
  let tracked = new Map<string, Tracked>();
  let measuredDone = 0;
  let lastSuccess = 0;
  await observeCalls(
    () => tracked,
    (c) => {
      if (!c.measured) return;
      measuredDone++;
      lastSuccess = c.succeeded!;
    },
  );
  const fire = await callSubmitter();
  const run = async (r: RunRequest): Promise<LoadFigures> => {
    tracked = new Map();
    measuredDone = 0;
    lastSuccess = 0;
    const errors: LoadErrors = { count: 0, measured: 0, first: undefined };
    await paced(r.rate, r.warmupSeconds, (i) => fire(tracked, errors, `op-${ns}-${r.tag}-w-${i}`, i, false));
    const w0 = now();
    const issued = await paced(r.rate, r.seconds, (i) => fire(tracked, errors, `op-${ns}-${r.tag}-m-${i}`, i, true));
    const keptUp = await until(
      'the measured calls to succeed',
      () => measuredDone + errors.measured >= issued,
      r.drainMs,
    ).then(
      () => errors.measured === 0,
      () => false,
    );
    const done = [...tracked.values()].filter(
      (c) => c.measured && c.succeeded !== undefined && c.authorized !== undefined,
    );
    const d = (f: (c: Tracked) => number | undefined) =>
      lat(done.map(f).filter((v): v is number => v !== undefined && v >= 0));
    return {
      rate: r.rate,
      e2e: d((c) => c.succeeded! - c.authorized!),
      fromSubmit: d((c) => c.succeeded! - c.submitted),
      stages: {
        'submit→authorize acked': d((c) => c.authorized! - c.submitted),
        'authorized→dispatched': d((c) =>
          c.dispatched && c.seenAuthorized ? c.dispatched - c.seenAuthorized : undefined,
        ),
        'dispatched→started': d((c) => (c.started && c.dispatched ? c.started - c.dispatched : undefined)),
        'started→succeeded': d((c) => (c.started ? c.succeeded! - c.started : undefined)),
      },
      done: done.length,
      issued,
      failed: errors.count,
      ...(errors.first ? { firstError: errors.first } : {}),
      callsPerSecond: done.length / Math.max(1e-3, (lastSuccess - w0) / 1000),
      keptUp,
    };
  };
  process.on('message', (m: unknown) => {
    if (typeof m !== 'object' || m === null) return;
    if ('run' in m)
      run(m.run as RunRequest).then(
        (figures) => reply({ figures }),
        (err: unknown) => reply({ failed: (err as Error).message }),
      );
    if ('floor' in m)
      measureFloor(m.floor as FloorRequest).then(
        (floor) => reply({ floor }),
        (err: unknown) => reply({ failed: `floor: ${(err as Error).message}` }),
      );
  });
  reply({ ready: true });
}

// ---------------------------------------------------------------------------------------------------------------
// Environment and its teardown.

/** The run's namespace; the load child is given its parent's. */
const ns = optionValue('namespace') ?? `b${randomBytes(4).toString('hex')}`;
const dbName = benchDbName();
let dbCreated = false;
let svc: RunningService | undefined;
/** Set once the bridge starts: it creates the calls stream even when it fails to start afterwards. */
let streamCreated = false;
/** Set once the floor's stream is being created. */
let floorStreamCreated = false;
let journalRoot: string | undefined;
const children = new Set<ChildProcess>();
const sockets = new Set<WebSocket>();
const servers = new Set<WebSocketServer>();
const natsClients = new Set<NatsConnection>();
let cleaning: Promise<void> | undefined;

const adminUrlFor = (name: string): string => databaseUrl(ADMIN_DB_URL, name);

/** Resolves with `p`, or after `ms` regardless (a teardown step must never hang the run). */
const bounded = (what: string, p: Promise<unknown>, ms = 8000): Promise<void> => boundedStep(what, p, ms);

function dropSockets(): void {
  for (const ws of sockets) ws.terminate();
  sockets.clear();
}

async function closeServer(server: WebSocketServer): Promise<void> {
  servers.delete(server);
  await bounded('closing a ws server', new Promise((r) => server.close(r)));
}

/** A NATS connection of the bench's own (not the bridge's), closed by the cleanup. */
async function benchConnection(name: string): Promise<NatsConnection> {
  const nc = await connectNats({ url: NATS_URL, name: `ormuz-bench-${name}` });
  natsClients.add(nc);
  return nc;
}

function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    for (const c of children) c.kill('SIGKILL');
    children.clear();
    dropSockets();
    for (const s of [...servers]) await closeServer(s);
    for (const nc of natsClients) await bounded('closing a bench NATS connection', nc.close());
    natsClients.clear();
    if (svc) await bounded('closing the bridge', svc.close(), 10_000);
    if (streamCreated || floorStreamCreated) await bounded('deleting the streams', deleteStream());
    if (dbCreated) await bounded(`dropping ${dbName}`, dropDatabase(ADMIN_DB_URL, dbName));
    if (journalRoot) rmSync(journalRoot, { recursive: true, force: true });
  })();
  return cleaning;
}

/** The service closed its own connection; the stream is deleted through a fresh one. */
async function deleteStream(): Promise<void> {
  const nc = await connectNats({ url: NATS_URL, name: 'ormuz-bench-cleanup' });
  try {
    const jsm = await jetstreamManager(nc);
    for (const context of ['calls', 'devices'] as const)
      await jsm.streams.delete(streamName(ns, context)).catch(() => undefined);
    if (floorStreamCreated) await jsm.streams.delete(`${ns.toUpperCase()}_FLOOR`).catch(() => undefined);
  } finally {
    await nc.close();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// 1. Memory per connection.

interface MemoryFigures {
  connections: number;
  connectMs: number;
  heapKiB: number;
  externalKiB: number;
  rssKiB: number;
}

async function measureServer(kind: 'bare' | 'gateway'): Promise<MemoryFigures> {
  const server = forkSelf(`${kind} server`, [`--server=${kind}`, `--connections=${CONNECTIONS}`], ['--expose-gc']);
  try {
    const port = await server.next<number>('port');
    const url = `ws://127.0.0.1:${port}/v1/devices`;
    server.send('measure');
    const before = await server.next<NodeJS.MemoryUsage>('memory');
    const codec = new DeviceFrameCodec();
    let ready = 0;
    let failed = 0;
    const t0 = now();
    let started = 0;
    const open = (i: number) =>
      new Promise<void>((resolve) => {
        const ws = new WebSocket(url, { perMessageDeflate: false });
        sockets.add(ws);
        ws.on('error', () => undefined);
        ws.once('close', () => {
          sockets.delete(ws);
          failed++;
          resolve();
        });
        ws.once('open', () => {
          const hello: DeviceFrameDraft = {
            type: 'hello',
            tenant: TENANT,
            device_id: deviceIdOf(i),
            boot_id: 'boot-1',
            protocol_version: 1,
            policy_version: null,
            token: tokenOf(i),
          };
          ws.send(codec.encode(hello));
          if (kind === 'bare') {
            ready++;
            resolve();
          } else
            ws.once('message', () => {
              // The first frame the gateway sends an accepted device is its welcome.
              ready++;
              resolve();
            });
        });
      });
    await Promise.all(
      Array.from({ length: CONNECT_CONCURRENCY }, async () => {
        while (started < CONNECTIONS) await open(started++);
      }),
    );
    const connectMs = now() - t0;
    if (ready < CONNECTIONS)
      throw new Error(`${kind}: only ${ready} of ${CONNECTIONS} connections ready (${failed} closed)`);
    await sleep(300); // let the last hellos be read on the server side
    server.send('measure');
    const after = await server.next<NodeJS.MemoryUsage>('memory');
    const per = (k: keyof NodeJS.MemoryUsage) => (after[k] - before[k]) / CONNECTIONS / 1024;
    return {
      connections: CONNECTIONS,
      connectMs,
      heapKiB: per('heapUsed'),
      externalKiB: per('external'),
      rssKiB: per('rss'),
    };
  } finally {
    dropSockets();
    server.kill();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// 2. Latency and throughput.

/** The floor's WebSocket round trip, server side: echoes every message; the fleet child's clients time them. */
async function echoServer(): Promise<{ server: WebSocketServer; url: string }> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false, clientTracking: false });
  servers.add(server);
  await new Promise((r) => server.once('listening', r));
  server.on('connection', (ws: WebSocket) => ws.on('message', (d: RawData) => ws.send(d as Buffer)));
  return { server, url: `ws://127.0.0.1:${(server.address() as { port: number }).port}` };
}

/** The floor's request/reply, server side: a responder in this process, on a connection of its own. */
async function floorResponder(): Promise<string> {
  const nc = await benchConnection('responder');
  const subject = `${ns}.bench.floor`;
  nc.subscribe(subject, {
    callback: (_err, msg) => {
      msg.respond(msg.data);
    },
  });
  await nc.flush();
  return subject;
}

/** A file stream like the calls stream, for the floor's publish-acks (deleted by the cleanup). */
async function floorStream(): Promise<{ stream: string; subjects: string }> {
  const nc = await benchConnection('floor-stream');
  const jsm = await jetstreamManager(nc);
  const stream = `${ns.toUpperCase()}_FLOOR`;
  const subjects = `${ns}.floor`;
  const calls = streamConfig(ns, 'calls');
  floorStreamCreated = true;
  await jsm.streams.add({ ...calls, name: stream, subjects: [`${subjects}.>`], deny_delete: false, deny_purge: false });
  return { stream, subjects };
}

async function startBridge(): Promise<RunningService> {
  await createDatabase(ADMIN_DB_URL, dbName);
  dbCreated = true;
  const config = loadDeviceBridgeConfig({
    NATS_URL,
    DATABASE_URL: adminUrlFor(dbName),
    ORMUZ_NAMESPACE: ns,
    LOG_LEVEL: 'silent',
    DEVICE_BRIDGE_PORT: '0',
    DEVICE_TOKENS: Array.from({ length: DEVICES }, (_, i) => `${TENANT}:${deviceIdOf(i)}:${tokenOf(i)}`).join(','),
  });
  streamCreated = true;
  svc = await startService(deviceBridgeService(config));
  return svc;
}

/** The floor: its parts' p50s, and their sum. */
interface Floor extends FloorFigures {
  webSocket: Lat;
  totalMs: number;
}

/** A step of the search: the offered rate and what came of it. */
interface Step {
  rate: number;
  sustained: boolean;
  done: number;
  issued: number;
  callsPerSecond: number;
  p50: number;
  p99: number;
}

interface LatencyFigures {
  floor: Floor;
  unloaded: LoadFigures;
  steps: Step[];
  /** The highest rate a step sustained; `capped` when that is the search's upper bound. */
  maxRate: number;
  capped: boolean;
  at80: LoadFigures;
  /** CPU during the run at 80%, in % of one core, per process. */
  cpu: { bridge: number; fleet: number; load: number };
  /** CPU per call during the run at 80%, in ms, per process (Postgres: the bench database's backends). */
  cpuPerCall: { bridge: number; fleet: number; load: number; postgres: number | undefined; nats: number | undefined };
  /** Postgres commits per call during the run at 80% (the projection's statements and every query). */
  commitsPerCall: number;
  /** The machine during the run at 80%: the busy fraction of all its cores, and how many it has. */
  machine: { busy: number; cores: number } | undefined;
}

/** CPU used while the calls ran by what serves the bridge, in ms: its database backends, the NATS server, the machine. */
interface ServerCpu {
  /** The Postgres backends of the bench database. */
  postgres: number | undefined;
  /** The NATS server (shared with whatever else uses it). */
  nats: number | undefined;
  /** Transactions the bench database committed (each statement outside a transaction is one). */
  commits: number;
  /** Every process on the machine, and the time available (cores × wall time). */
  machineBusy: number | undefined;
  machineTotal: number | undefined;
}

/** Starts measuring the CPU of the bench database's backends, the NATS server and the machine. */
async function serverCpuMeter(db: RunningService['infra']['db']): Promise<() => Promise<ServerCpu>> {
  const backends = async () =>
    (
      await sql<{ pid: number }>`select pid from pg_stat_activity where datname = current_database()`.execute(db)
    ).rows.map((r) => r.pid);
  const nats = natsServerPid();
  const commits = async () =>
    Number(
      (
        await sql<{
          n: string;
        }>`select xact_commit as n from pg_stat_database where datname = current_database()`.execute(db)
      ).rows[0]?.n ?? 0,
    );
  const commits0 = await commits();
  const sum = (pids: readonly number[]) => pids.reduce((n, pid) => n + (procCpuMs(pid) ?? 0), 0);
  const pids0 = await backends();
  const pg0 = new Map(pids0.map((pid) => [pid, procCpuMs(pid) ?? 0]));
  const nats0 = nats === undefined ? undefined : procCpuMs(nats);
  const machine0 = machineCpuMs();
  return async () => {
    const pids = await backends();
    // A backend that ended meanwhile takes its time with it; one that started counts from zero.
    const postgres = sum(pids) - pids.reduce((n, pid) => n + (pg0.get(pid) ?? 0), 0);
    const nats1 = nats === undefined ? undefined : procCpuMs(nats);
    const machine1 = machineCpuMs();
    // Statistics reach pg_stat_database when a backend reports them (at most every second or so).
    await sleep(1_500);
    return {
      commits: (await commits()) - commits0,
      postgres: pids0.length > 0 ? postgres : undefined,
      nats: nats0 !== undefined && nats1 !== undefined ? nats1 - nats0 : undefined,
      machineBusy: machine0 && machine1 ? machine1.busy - machine0.busy : undefined,
      machineTotal: machine0 && machine1 ? machine1.total - machine0.total : undefined,
    };
  };
}

/** Starts measuring the CPU of this process (the bridge) and of `others`; the result is in % of one core each. */
async function cpuMeter(others: Record<string, Child>): Promise<() => Promise<Record<string, number>>> {
  const usages = async () => {
    const out: Record<string, NodeJS.CpuUsage> = { bridge: process.cpuUsage() };
    for (const [name, child] of Object.entries(others)) out[name] = await child.cpu();
    return out;
  };
  const t0 = now();
  const before = await usages();
  return async () => {
    const after = await usages();
    const ms = now() - t0;
    return Object.fromEntries(Object.entries(after).map(([name, used]) => [name, cpuPercent(used, before[name]!, ms)]));
  };
}

/** Runs the load once; resolves with its figures. */
async function runLoad(load: Child, request: RunRequest): Promise<LoadFigures> {
  load.send({ run: request });
  return load.next<LoadFigures>('figures', (request.warmupSeconds + request.seconds) * 1000 + request.drainMs + 30_000);
}

/**
 * The highest offered rate the bridge sustains: doubled from START_RATE while steps are sustained, then bisected
 * between the last sustained and the first failed rate until they are within SEARCH_RESOLUTION.
 */
async function searchMaxRate(load: Child): Promise<{ steps: Step[]; maxRate: number; capped: boolean }> {
  const steps: Step[] = [];
  let good = 0;
  let bad = Number.POSITIVE_INFINITY;
  let rate = START_RATE;
  for (let i = 0; i < MAX_STEPS; i++) {
    progress(`2. search step ${i + 1}: ${Math.round(rate)} calls/s for ${STEP_SECONDS} s`);
    const f = await runLoad(load, {
      tag: `s${i}`,
      rate,
      seconds: STEP_SECONDS,
      warmupSeconds: STEP_WARMUP_SECONDS,
      drainMs: STEP_DRAIN_MS,
    });
    const sustained = f.keptUp && f.done === f.issued && f.fromSubmit.p99 <= STEP_P99_MS;
    steps.push({
      rate,
      sustained,
      done: f.done,
      issued: f.issued,
      callsPerSecond: f.callsPerSecond,
      p50: f.fromSubmit.p50,
      p99: f.fromSubmit.p99,
    });
    progress(
      `   ${sustained ? 'sustained' : 'fell behind'}: ${f.done}/${f.issued} done, submit→outcome p50 ${fmt(f.fromSubmit.p50)} ms, p99 ${fmt(f.fromSubmit.p99)} ms`,
    );
    if (sustained) good = Math.max(good, rate);
    else bad = Math.min(bad, rate);
    // What a step left behind finishes before the next one starts.
    await sleep(sustained ? 500 : 5_000);
    if (good >= MAX_RATE) return { steps, maxRate: good, capped: true };
    if (Number.isFinite(bad) && bad - good <= SEARCH_RESOLUTION * bad) break;
    rate = bad === Number.POSITIVE_INFINITY ? Math.min(MAX_RATE, rate * 2) : (good + bad) / 2;
  }
  return { steps, maxRate: good, capped: false };
}

async function bridgeLatency(out: Record<string, unknown>): Promise<LatencyFigures> {
  const bridge = await startBridge();
  journalRoot = mkdtempSync(join(JOURNALS === 'shm' ? '/dev/shm' : tmpdir(), 'ormuz-bridge-bench-'));
  progress(`2. connecting ${DEVICES} simulated devices (fleet child process; journals in ${journalRoot})`);
  const gatewayUrl = bridge.app.get(DeviceLinkHost).gateway.url();
  const fleet = forkSelf('fleet child', [`--fleet=${DEVICES}`, `--url=${gatewayUrl}`, `--journal-root=${journalRoot}`]);
  out.fleetConnectMs = (await fleet.next<{ connectMs: number }>('ready', 45_000)).connectMs;
  out.journals = JOURNALS;
  await sleep(1000); // the connect-time reads settle

  progress('2. floor: request/reply, publish-acks, WebSocket round trip');
  const echo = await echoServer();
  fleet.send({ echo: echo.url });
  const webSocket = await fleet.next<Lat>('echo', 60_000);
  await closeServer(echo.server);
  const load = forkSelf('load child', ['--load', `--namespace=${ns}`, `--devices=${DEVICES}`]);
  await load.next('ready');
  load.send({ floor: { responder: await floorResponder(), ...(await floorStream()) } });
  const nats = await load.next<FloorFigures>('floor', 60_000);
  const floor: Floor = { ...nats, webSocket, totalMs: nats.requestReply.p50 + nats.governedAcks.p50 + webSocket.p50 };

  progress(`2. unloaded: ${UNLOADED_RATE} calls/s for ${UNLOADED_SECONDS} s`);
  const unloaded = await runLoad(load, {
    tag: 'u',
    rate: UNLOADED_RATE,
    seconds: UNLOADED_SECONDS,
    warmupSeconds: 1,
    drainMs: 5_000,
  });

  const { steps, maxRate, capped } = await searchMaxRate(load);
  const rate80 = Math.max(1, Math.round(0.8 * maxRate));
  progress(
    `2. at 80% of ${Math.round(maxRate)}/s: ${WARMUP_SECONDS} s warm-up, then ${SECONDS} s at ${rate80} calls/s`,
  );
  const cpu = await cpuMeter({ fleet, load });
  const servers = await serverCpuMeter(bridge.infra.db);
  const t80 = now();
  const at80 = await runLoad(load, {
    tag: 'r',
    rate: rate80,
    seconds: SECONDS,
    warmupSeconds: WARMUP_SECONDS,
    drainMs: DRAIN_MS,
  });
  const used = await cpu();
  const wallMs = now() - t80;
  const served = await servers();
  // Every call of the run, its warm-up's too, used the CPU measured.
  const calls = Math.round(rate80 * (WARMUP_SECONDS + SECONDS));
  const perCall = (percent: number) => (percent / 100) * (wallMs / calls);
  return {
    floor,
    unloaded,
    steps,
    maxRate,
    capped,
    at80,
    cpu: { bridge: used.bridge!, fleet: used.fleet!, load: used.load! },
    commitsPerCall: served.commits / calls,
    cpuPerCall: {
      bridge: perCall(used.bridge!),
      fleet: perCall(used.fleet!),
      load: perCall(used.load!),
      postgres: served.postgres === undefined ? undefined : served.postgres / calls,
      nats: served.nats === undefined ? undefined : served.nats / calls,
    },
    machine:
      served.machineBusy === undefined || served.machineTotal === undefined
        ? undefined
        : { busy: served.machineBusy / served.machineTotal, cores: served.machineTotal / wallMs },
  };
}

// ---------------------------------------------------------------------------------------------------------------

type Row = BenchRow;

let failed = false;

async function main() {
  cleanUpOnSignals(cleanup);
  const watchdog = startWatchdog(WATCHDOG_MS, cleanup);

  const started = now();
  const load0 = loadavg()[0]!;
  const rows: Row[] = [];
  const out: Record<string, unknown> = {};

  const section = async (id: string, run: () => Promise<void>) => {
    try {
      await run();
    } catch (err) {
      failed = true;
      console.error(`section ${id} failed:`, err);
      rows.push(errorRow(id, err, 70));
    }
  };

  if (!ONLY || ONLY === 'memory') {
    await section('memory', async () => {
      progress(`1. bare ws server: ${CONNECTIONS} connections`);
      const bare = await measureServer('bare');
      progress(`1. bridge gateway: ${CONNECTIONS} welcomed devices`);
      const bridge = await measureServer('gateway');
      out.memory = { bare, bridge };
      const ratio = bridge.heapKiB / bare.heapKiB;
      rows.push({
        id: 'memory.heap_per_connection',
        measure: `1. heap per connection (N=${CONNECTIONS})`,
        figure: `${fmt(bridge.heapKiB, 2)} KiB`,
        baseline: `${fmt(bare.heapKiB, 2)} KiB bare ws`,
        ratio,
        target: '≤ 2×',
        verdict: ratio <= 2 ? 'PASS' : 'MISS',
      });
      rows.push({
        id: 'memory.rss_per_connection',
        measure: '   RSS per connection',
        figure: `${fmt(bridge.rssKiB, 2)} KiB`,
        baseline: `${fmt(bare.rssKiB, 2)} KiB`,
        ratio: bridge.rssKiB / bare.rssKiB,
        target: '',
        verdict: 'info',
      });
      rows.push({
        id: 'memory.external_per_connection',
        measure: '   external (buffers) per connection',
        figure: `${fmt(bridge.externalKiB, 2)} KiB`,
        baseline: `${fmt(bare.externalKiB, 2)} KiB`,
        ratio: Number.NaN,
        target: '',
        verdict: 'info',
      });
      rows.push({
        id: 'memory.connect_all_ms',
        measure: '   connect (+hello/welcome) all',
        figure: `${Math.round(bridge.connectMs)} ms`,
        baseline: `${Math.round(bare.connectMs)} ms`,
        ratio: bridge.connectMs / bare.connectMs,
        target: '',
        verdict: 'info',
      });
    });
  }

  if (!ONLY || ONLY === 'latency') {
    await section('latency', async () => {
      const r = await bridgeLatency(out);
      out.latency = r;
      const info = (id: string, measure: string, figure: string, baseline = ''): Row => ({
        id,
        measure,
        figure,
        baseline,
        ratio: Number.NaN,
        target: '',
        verdict: 'info',
      });
      const f = r.floor;
      rows.push(
        info(
          'floor.request_reply',
          '2. floor: NATS request/reply p50',
          `${fmt(f.requestReply.p50)} ms`,
          'load child ↔ bridge process',
        ),
      );
      rows.push(
        info(
          'floor.publish_acks',
          `   floor: ${GOVERNED_APPENDS} publish-acks one after another p50`,
          `${fmt(f.governedAcks.p50)} ms`,
          `one: ${fmt(f.publishAck.p50)} ms`,
        ),
      );
      rows.push(
        info(
          'floor.websocket_round_trip',
          '   floor: WebSocket round trip p50',
          `${fmt(f.webSocket.p50)} ms`,
          'fleet child ↔ bridge process',
        ),
      );
      rows.push(info('floor.total', '   floor: the sum', `${fmt(f.totalMs)} ms`));
      const u = r.unloaded;
      const unloadedRatio = u.fromSubmit.p50 / f.totalMs;
      rows.push({
        id: 'latency.unloaded.submit_to_outcome.p50',
        measure: `   unloaded submit→outcome p50 (${u.done}/${u.issued} calls at ${UNLOADED_RATE}/s)`,
        figure: `${fmt(u.fromSubmit.p50)} ms`,
        baseline: `${fmt(f.totalMs)} ms floor`,
        ratio: unloadedRatio,
        target: '≤ 3×',
        verdict: unloadedRatio <= 3 && u.done === u.issued ? 'PASS' : 'MISS',
      });
      rows.push(
        info('latency.unloaded.submit_to_outcome.p99', '   unloaded submit→outcome p99', `${fmt(u.fromSubmit.p99)} ms`),
      );
      for (const [stage, l] of Object.entries(u.stages)) {
        rows.push(
          info(`latency.unloaded.stage.${stage}`, `   unloaded ${stage} p50 / p99`, `${fmt(l.p50)} / ${fmt(l.p99)} ms`),
        );
      }
      const tried = r.steps.map((s) => `${Math.round(s.rate)}${s.sustained ? '✓' : '✗'}`).join(' ');
      rows.push(
        info(
          'throughput.max_rate',
          '   maximum sustained rate (offered)',
          `${r.capped ? '≥ ' : ''}${fmt(r.maxRate, 0)}/s`,
          tried,
        ),
      );
      const a = r.at80;
      const rate80 = Math.round(a.rate);
      rows.push({
        id: 'throughput.at_80pct.completed_per_second',
        measure: `   at 80%: calls completed per second (${a.done}/${a.issued})`,
        figure: `${fmt(a.callsPerSecond, 0)}/s`,
        baseline: `${rate80}/s offered`,
        ratio: a.callsPerSecond / rate80,
        target: '≥ 1,000/s',
        verdict: a.callsPerSecond >= 1000 && a.done === a.issued ? 'PASS' : 'MISS',
      });
      rows.push({
        id: 'throughput.at_80pct.submit_to_outcome.p99',
        measure: '   at 80%: submit→outcome p99',
        figure: `${fmt(a.fromSubmit.p99)} ms`,
        baseline: `${fmt(f.totalMs)} ms floor`,
        ratio: a.fromSubmit.p99 / f.totalMs,
        target: '≤ 250 ms',
        verdict: a.fromSubmit.p99 <= 250 && a.done === a.issued ? 'PASS' : 'MISS',
      });
      rows.push(
        info(
          'throughput.at_80pct.submit_to_outcome.p50',
          '   at 80%: submit→outcome p50',
          `${fmt(a.fromSubmit.p50)} ms`,
        ),
      );
      for (const [stage, l] of Object.entries(a.stages)) {
        rows.push(
          info(
            `throughput.at_80pct.stage.${stage}`,
            `   at 80%: ${stage} p50 / p99`,
            `${fmt(l.p50)} / ${fmt(l.p99)} ms`,
          ),
        );
      }
      rows.push(
        info(
          'throughput.at_80pct.cpu',
          '   at 80%: CPU, % of one core: bridge / fleet / load',
          `${fmt(r.cpu.bridge, 0)}% / ${fmt(r.cpu.fleet, 0)}% / ${fmt(r.cpu.load, 0)}%`,
          `${cpus().length} cores, loadavg ${loadavg()
            .map((l) => fmt(l, 1))
            .join(' ')}`,
        ),
      );
      const c = r.cpuPerCall;
      const parts = [c.bridge, c.fleet, c.load, c.postgres ?? 0, c.nats ?? 0];
      const perCallMs = parts.reduce((x, y) => x + y, 0);
      const cores = r.machine?.cores ?? cpus().length;
      rows.push(
        info(
          'throughput.at_80pct.cpu_per_call',
          '   at 80%: CPU per call, ms: bridge / fleet / load / postgres / nats (shared)',
          parts.map((v) => fmt(v, 2)).join(' / '),
          `machine ${r.machine ? `${fmt(100 * r.machine.busy, 0)}% busy` : 'busy ?'} of ${fmt(cores, 0)} cores; ${fmt(r.commitsPerCall, 1)} pg commits a call`,
        ),
      );
      // What the same work would reach with the machine to itself: its cores over the CPU one call costs everywhere.
      rows.push(
        info(
          'throughput.estimate_machine_alone',
          '   estimate, the machine to itself: cores ÷ CPU per call',
          `${fmt((cores * 1000) / perCallMs, 0)}/s`,
          `${fmt(perCallMs, 2)} ms a call in all`,
        ),
      );
      if (u.failed + a.failed > 0) failed = true;
    });
  }

  const seconds = (now() - started) / 1000;
  const load1 = loadavg()[0]!;
  log('');
  log(
    `device-bridge bench — node ${process.version}, namespace ${ns}, ${fmt(seconds, 1)} s, loadavg(1m) ${fmt(load0, 2)} → ${fmt(load1, 2)}`,
  );
  printTable(rows);
  printVerdicts(rows);
  if (JSON_OUT) {
    printJson(
      { bench: 'device-bridge', node: process.version, namespace: ns, seconds, loadavg: [load0, load1] },
      rows,
      out,
    );
  }
  await cleanup();
  clearTimeout(watchdog);
  process.exit(failed ? 1 : 0);
}

const serverKind = optionValue('server');
const fleetSize = optionValue('fleet');
if (serverKind) childMain(() => serverChild(serverKind));
else if (fleetSize) childMain(() => fleetChild(Number(fleetSize)));
else if (flag('load', argv)) childMain(loadChild);
else {
  main().catch(async (err: unknown) => {
    console.error('bench failed:', err);
    await cleanup();
    process.exit(1);
  });
}
