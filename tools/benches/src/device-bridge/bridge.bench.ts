/**
 * Device-bridge benchmark: every figure beside a raw baseline measured in the same run.
 *
 *   npm run bench:bridge               # table
 *   npm run bench:bridge -- --json     # table, then one JSON object on the last line
 *   npm run bench:bridge -- --only=memory|latency  --connections=10000 --devices=1000 --rate=500 --seconds=10
 *   (every option is also accepted as `--name value`)
 *
 * Env: NATS_URL (default nats://127.0.0.1:4222), DATABASE_URL (an admin database the user may CREATE DATABASE from,
 * default postgres://postgres@127.0.0.1:5432/postgres). Everything the run creates — the calls stream under a random
 * namespace, one database, a tmp dir of device journals, child processes — is removed at the end, also on failure
 * or Ctrl-C.
 *
 * Measured (bridge | raw baseline):
 *  1. memory per connection: 10,000 connections that each sent a valid hello and were welcomed by the bridge's
 *     DeviceGateway (real credential check, the service's handler shape) | the same 10,000 connections to a bare
 *     `ws` server. Each server runs alone in a child process (started with --expose-gc) and reports
 *     process.memoryUsage() over IPC after a forced GC, before and after the connections; the clients (raw `ws`
 *     sockets, no journals) live in this process.
 *  2. latency: the whole bridge (startService + DeviceBridgeModule) alone in this process, as deployed; everything
 *     around it in child processes, so that none of it runs on the bridge's event loop:
 *     - `--fleet=N`: 1,000 simulated devices (runSimulatedFleet, one timer wheel, journals in a tmp dir), remote as
 *       real devices are (a fleet in the bridge's process stalled the bridge on every journal fsync);
 *     - `--load`: the clients. Calls for `device.screen_observe` are submitted and authorized at a fixed rate,
 *       round-robin over the devices, through a ToolCalls of their own (own NATS connection and aggregate cache, as
 *       the policy service would: the bridge gets no warm cache from the load); every event of the calls stream is
 *       seen as it is stored by a core NATS subscription on the stream's subjects, on another connection. Both
 *       clocks are this child's.
 *     Measured: the time from the authorize append to the `succeeded` event | a WebSocket echo round trip between
 *     the bridge's process and the fleet's (server here, where the gateway is; 1,000 clients in the fleet child,
 *     which times them) at the same rate, after the fleet connected and before the first call. Stage times
 *     (authorized → dispatched → started → succeeded) show where the time goes; the CPU of the three processes
 *     while the calls run shows which one is saturated.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { canonicalPayload, DeviceFrameCodec, type DeviceFrameDraft } from '@ormuz/contracts';
import { runSimulatedFleet } from '@ormuz/device-sdk';
import { connectNats, EventStore, streamName } from '@ormuz/event-log';
import { startService, ToolCalls, type RunningService } from '@ormuz/service-kit';
import { deriveCallId } from '@ormuz/tool-call';
import {
  DEVICE_BRIDGE_SCHEMA,
  DeviceBridgeModule,
  DeviceCredentials,
  DeviceGateway,
  DeviceLinkHost,
  deviceBridgeMigrations,
  loadDeviceBridgeConfig,
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
  natsUrl,
  now,
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
// Command line and sizes. Bounded so the whole run stays under 120 s on two busy cores.

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
const RATE = positive('rate', 500); // calls (and echoes) per second
const SECONDS = positive('seconds', 10); // measured window of the bridge
const WARMUP_SECONDS = 2;
const RAW_SECONDS = 5;
const DRAIN_MS = 15_000; // wait for the last outcomes after the window
const WATCHDOG_MS = 120_000;
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
// Child: the simulated fleet of the latency measurement. `--fleet=N --url=<gateway> --journals=<dir>`.
// Replies `{ ready: { connectMs } }` once every device is welcomed, then answers `{ echo: url }` with `{ echo: Lat }`.

async function fleetChild(count: number): Promise<void> {
  const url = optionValue('url');
  const journalRoot = optionValue('journals');
  if (!url || !journalRoot) throw new Error('the fleet child needs --url and --journals');
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
      echoClients(String(m.echo), count).then(
        (echo) => reply({ echo }),
        (err: unknown) => reply({ failed: `echo: ${(err as Error).message}` }),
      );
    }
  });
  reply({ ready: { connectMs: now() - t0 } });
}

/** Raw baseline, client side: echo round trips over `count` ws connections to `url` at `RATE`/s. */
async function echoClients(url: string, count: number): Promise<Lat> {
  const clients: WebSocket[] = [];
  const sent = new Map<string, number>();
  const samples: number[] = [];
  let measuring = false;
  for (let i = 0; i < count; i += 100) {
    await Promise.all(
      Array.from({ length: Math.min(100, count - i) }, async () => {
        const ws = new WebSocket(url, { perMessageDeflate: false });
        clients.push(ws);
        ws.on('message', (d: Buffer) => {
          const id = JSON.parse(d.toString('utf8')).request_id as string;
          const t = sent.get(id);
          sent.delete(id);
          if (t !== undefined && measuring) samples.push(now() - t);
        });
        await new Promise((r, j) => ws.once('open', r).once('error', j));
      }),
    );
  }
  // A frame about the size of a submit, so the baseline moves the same bytes.
  const body = JSON.stringify({ type: 'submit', tool: 'device.screen_observe', payload: '{}', pad: 'x'.repeat(300) });
  const fire = (i: number) => {
    const id = `e-${i}`;
    sent.set(id, now());
    clients[i % clients.length]!.send(`{"request_id":"${id}",${body.slice(1)}`);
  };
  await paced(RATE, 1, fire); // warm-up
  await sleep(100);
  measuring = true;
  const n = await paced(RATE, RAW_SECONDS, (i) => fire(i + 1_000_000));
  await until('the last echoes', () => samples.length >= n, 5_000).catch(() => undefined);
  measuring = false;
  for (const ws of clients) ws.terminate();
  return lat(samples);
}

// ---------------------------------------------------------------------------------------------------------------
// Child: the clients of the latency measurement. `--load --namespace=<ns>`. Replies `{ ready: true }` once it
// observes the calls stream, then answers `'run'` (warm-up, measured window, drain) with `{ figures: LoadFigures }`.

interface Tracked {
  submitted: number;
  authorized?: number; // authorize append acknowledged
  seenAuthorized?: number;
  dispatched?: number;
  started?: number;
  succeeded?: number;
  measured: boolean;
}

/**
 * Every event on the calls stream as it is stored, on a connection of its own: the first time each lifecycle event
 * of a tracked call is seen.
 */
async function observeCalls(tracked: ReadonlyMap<string, Tracked>, onSucceeded: (c: Tracked) => void): Promise<void> {
  const nc = await benchConnection('observer');
  nc.subscribe(`${ns}.calls.>`, {
    callback: (_err, msg) => {
      const t = now();
      const c = tracked.get(msg.subject.slice(msg.subject.lastIndexOf('.') + 1));
      if (!c) return;
      const type = /"type":"ormuz\.toolcall\.([a-z_]+)\./.exec(msg.string())?.[1];
      if (type === 'authorized') c.seenAuthorized ??= t;
      else if (type === 'dispatched') c.dispatched ??= t;
      else if (type === 'started') c.started ??= t;
      else if (type === 'succeeded' && c.succeeded === undefined) {
        c.succeeded = t;
        onSucceeded(c);
      }
    },
  });
  await nc.flush(); // subscribed on the server before the first call
}

/** Submits and authorizes calls as the policy service would: its own connection, its own aggregate cache. */
async function callSubmitter(tracked: Map<string, Tracked>) {
  const nc = await benchConnection('load');
  const calls = new ToolCalls(new EventStore(jetstream(nc), await jetstreamManager(nc)), ns, '/bench/policy');
  const { payload, sha256 } = canonicalPayload({});
  const cause = { correlationid: 'bench', causationid: 'bench' };
  /** Calls whose submit or authorize failed (`measured`: of the window); they are no longer tracked. */
  const errors = { count: 0, measured: 0, first: undefined as string | undefined };
  const fire = (i: number, measured: boolean) => {
    const operation = `op-${ns}-${measured ? 'm' : 'w'}-${i}`;
    const callId = deriveCallId(TENANT, { kind: 'operation', operation_id: operation });
    const c: Tracked = { submitted: now(), measured };
    tracked.set(callId, c);
    void (async () => {
      await calls.execute(
        TENANT,
        callId,
        {
          type: 'SubmitCall',
          data: {
            call_id: callId,
            tool: 'device.screen_observe',
            contract_version: '1',
            payload,
            payload_sha256: sha256,
            origin: { kind: 'operation', operation_id: operation },
            agent_id: 'bench-agent',
            target: { device_id: deviceIdOf(i % DEVICES) },
          },
        },
        cause,
      );
      await calls.execute(
        TENANT,
        callId,
        { type: 'AuthorizeCall', data: { call_id: callId, verdict: { level: 'low', reasons: ['bench'] } } },
        cause,
      );
      c.authorized = now();
    })().catch((err: unknown) => {
      errors.count++;
      if (measured) errors.measured++;
      errors.first ??= (err as Error).message;
      tracked.delete(callId);
    });
  };
  return { fire, errors };
}

const cpuPercent = (used: NodeJS.CpuUsage, since: NodeJS.CpuUsage, ms: number): number =>
  ((used.user - since.user + used.system - since.system) / 1000 / ms) * 100;

interface LoadFigures {
  e2e: Lat;
  fromSubmit: Lat;
  stages: Record<string, Lat>;
  done: number;
  issued: number;
  failed: number;
  firstError?: string;
  /** Measured calls that succeeded per second, from the start of the window to the last success. */
  callsPerSecond: number;
}

async function loadChild(): Promise<void> {
  const tracked = new Map<string, Tracked>();
  let measuredDone = 0;
  let lastSuccess = 0;
  await observeCalls(tracked, (c) => {
    if (!c.measured) return;
    measuredDone++;
    lastSuccess = c.succeeded!;
  });
  const load = await callSubmitter(tracked);
  const run = async (): Promise<LoadFigures> => {
    progress(`2. bridge: ${WARMUP_SECONDS} s warm-up, then ${SECONDS} s at ${RATE} calls/s`);
    await paced(RATE, WARMUP_SECONDS, (i) => load.fire(i, false));
    const w0 = now();
    const issued = await paced(RATE, SECONDS, (i) => load.fire(i + 100_000, true));
    await until('the measured calls to succeed', () => measuredDone + load.errors.measured >= issued, DRAIN_MS).catch(
      (err: unknown) => progress(`2. ${(err as Error).message}; reporting what finished`),
    );
    const done = [...tracked.values()].filter((c) => c.measured && c.succeeded !== undefined && c.authorized !== undefined);
    const d = (f: (c: Tracked) => number | undefined) => lat(done.map(f).filter((v): v is number => v !== undefined && v >= 0));
    return {
      e2e: d((c) => c.succeeded! - c.authorized!),
      fromSubmit: d((c) => c.succeeded! - c.submitted),
      stages: {
        'submit→authorize acked': d((c) => c.authorized! - c.submitted),
        'authorized→dispatched': d((c) => (c.dispatched && c.seenAuthorized ? c.dispatched - c.seenAuthorized : undefined)),
        'dispatched→started': d((c) => (c.started && c.dispatched ? c.started - c.dispatched : undefined)),
        'started→succeeded': d((c) => (c.started ? c.succeeded! - c.started : undefined)),
      },
      done: done.length,
      issued,
      failed: load.errors.count,
      ...(load.errors.first ? { firstError: load.errors.first } : {}),
      callsPerSecond: done.length / Math.max(1e-3, (lastSuccess - w0) / 1000),
    };
  };
  process.on('message', (m) => {
    if (m === 'run') run().then((figures) => reply({ figures }), (err: unknown) => reply({ failed: (err as Error).message }));
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
    if (streamCreated) await bounded('deleting the calls stream', deleteStream());
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
    for (const context of ['calls', 'devices'] as const) await jsm.streams.delete(streamName(ns, context)).catch(() => undefined);
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
    if (ready < CONNECTIONS) throw new Error(`${kind}: only ${ready} of ${CONNECTIONS} connections ready (${failed} closed)`);
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
// 2. Latency.

/** Raw baseline, server side: echoes every message; the fleet child's clients time the round trips. */
async function echoServer(): Promise<{ server: WebSocketServer; url: string }> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false, clientTracking: false });
  servers.add(server);
  await new Promise((r) => server.once('listening', r));
  server.on('connection', (ws: WebSocket) => ws.on('message', (d: RawData) => ws.send(d as Buffer)));
  return { server, url: `ws://127.0.0.1:${(server.address() as { port: number }).port}` };
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
  svc = await startService({
    service: 'device-bridge',
    config,
    streams: ['calls', 'devices'],
    schema: DEVICE_BRIDGE_SCHEMA,
    migrations: deviceBridgeMigrations,
    module: (infra) => DeviceBridgeModule.with(infra, config),
  });
  return svc;
}

interface LatencyFigures extends LoadFigures {
  raw: Lat;
  /** CPU while the calls ran (warm-up, window, drain), in % of one core, per process. */
  cpu: { bridge: number; fleet: number; load: number };
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

async function bridgeLatency(out: Record<string, unknown>): Promise<LatencyFigures> {
  const bridge = await startBridge();
  journalRoot = mkdtempSync(join(tmpdir(), 'ormuz-bridge-bench-'));
  progress(`2. connecting ${DEVICES} simulated devices (fleet child process)`);
  const gatewayUrl = bridge.app.get(DeviceLinkHost).gateway.url();
  const fleet = forkSelf('fleet child', [`--fleet=${DEVICES}`, `--rate=${RATE}`, `--url=${gatewayUrl}`, `--journals=${journalRoot}`]);
  out.fleetConnectMs = (await fleet.next<{ connectMs: number }>('ready', 45_000)).connectMs;
  await sleep(1000); // the connect-time dispatch passes settle

  // Baseline while the fleet is connected and the bridge idle, between the same two processes.
  progress(`2. raw ws echo: ${RAW_SECONDS} s at ${RATE}/s over ${DEVICES} connections (fleet child → this process)`);
  const echo = await echoServer();
  fleet.send({ echo: echo.url });
  const raw = await fleet.next<Lat>('echo', (RAW_SECONDS + 20) * 1000);
  await closeServer(echo.server);

  const load = forkSelf('load child', ['--load', `--namespace=${ns}`, `--devices=${DEVICES}`, `--rate=${RATE}`, `--seconds=${SECONDS}`]);
  await load.next('ready');
  const cpu = await cpuMeter({ fleet, load });
  load.send('run');
  const figures = await load.next<LoadFigures>('figures', (WARMUP_SECONDS + SECONDS) * 1000 + DRAIN_MS + 20_000);
  const used = await cpu();
  return { ...figures, raw, cpu: { bridge: used.bridge!, fleet: used.fleet!, load: used.load! } };
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
      const raw = r.raw;
      out.latency = { bridge: r, raw };
      const ratio = r.e2e.p50 / raw.p50;
      const info = (id: string, measure: string, figure: string, baseline = ''): Row => ({
        id,
        measure,
        figure,
        baseline,
        ratio: Number.NaN,
        target: '',
        verdict: 'info',
      });
      rows.push({
        id: 'latency.authorized_to_outcome.p50',
        measure: `2. authorize→outcome p50 (${r.done}/${r.issued} calls, ${RATE}/s, ${DEVICES} devices)`,
        figure: `${fmt(r.e2e.p50)} ms`,
        baseline: `${fmt(raw.p50)} ms ws echo`,
        ratio,
        target: '≤ 3×',
        verdict: ratio <= 3 && r.done === r.issued ? 'PASS' : 'MISS',
      });
      rows.push({
        id: 'latency.authorized_to_outcome.p99',
        measure: '   authorize→outcome p99',
        figure: `${fmt(r.e2e.p99)} ms`,
        baseline: `${fmt(raw.p99)} ms`,
        ratio: r.e2e.p99 / raw.p99,
        target: '',
        verdict: 'info',
      });
      rows.push(info('latency.submit_to_outcome.p50', '   submit→outcome p50 / p99', `${fmt(r.fromSubmit.p50)} / ${fmt(r.fromSubmit.p99)} ms`));
      for (const [stage, l] of Object.entries(r.stages)) {
        rows.push(info(`latency.stage.${stage}`, `   stage ${stage} p50 / p99`, `${fmt(l.p50)} / ${fmt(l.p99)} ms`));
      }
      rows.push(info('latency.throughput', '   calls completed per second', `${fmt(r.callsPerSecond, 0)}/s`, `${RATE}/s offered`));
      rows.push(
        info(
          'latency.cpu',
          '   CPU, % of one core: bridge / fleet / load',
          `${fmt(r.cpu.bridge, 0)}% / ${fmt(r.cpu.fleet, 0)}% / ${fmt(r.cpu.load, 0)}%`,
          'while the calls ran',
        ),
      );
      if (r.failed > 0) failed = true;
    });
  }

  const seconds = (now() - started) / 1000;
  const load1 = loadavg()[0]!;
  log('');
  log(`device-bridge bench — node ${process.version}, namespace ${ns}, ${fmt(seconds, 1)} s, loadavg(1m) ${fmt(load0, 2)} → ${fmt(load1, 2)}`);
  printTable(rows);
  printVerdicts(rows);
  if (JSON_OUT) {
    printJson({ bench: 'device-bridge', node: process.version, namespace: ns, seconds, loadavg: [load0, load1] }, rows, out);
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
