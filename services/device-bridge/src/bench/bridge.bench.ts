/**
 * Device-bridge benchmark: every figure beside a raw baseline measured in the same run.
 *
 *   npm run bench:bridge               # table
 *   npm run bench:bridge -- --json     # table, then one JSON object on the last line
 *   npm run bench:bridge -- --only=memory|latency  --connections=10000 --devices=1000 --rate=500 --seconds=10
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
 *  2. latency: the whole bridge (startService + DeviceBridgeModule, in this process) with 1,000 simulated devices
 *     (runSimulatedFleet, one timer wheel, journals in a tmp dir). Calls for `device.screen_observe` are submitted and
 *     authorized through ToolCalls at a fixed rate spread round-robin over the devices; the time from the authorize
 *     append to the `succeeded` event on the calls stream (a core NATS subscription on the stream's subjects sees
 *     each event as it is stored) | a WebSocket echo round trip over 1,000 `ws` connections at the same rate,
 *     measured in this process after the fleet connected and before the first call (bridge idle, fleet open).
 *     Stage times (authorized → dispatched → started → succeeded) show where the time goes.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
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
  option,
  printJson,
  printTable,
  printVerdicts,
  progress,
  sleep,
  startWatchdog,
  summarize,
  type BenchRow,
} from '@ormuz/bench-kit';
import { canonicalPayload, DeviceFrameCodec, type DeviceFrameDraft } from '@ormuz/contracts';
import { runSimulatedFleet, type SimulatedFleet } from '@ormuz/device-sdk';
import { streamName } from '@ormuz/event-log';
import { startService, ToolCalls, type RunningService } from '@ormuz/service-kit';
import { deriveCallId } from '@ormuz/tool-call';
import { DeviceBridgeModule } from '../app.module.js';
import { ExecutionsRepository } from '../persistence/executions.repository.js';
import { loadDeviceBridgeConfig } from '../config.js';
import { DeviceCredentials } from '../domain/device-credentials.js';
import { DEVICE_BRIDGE_SCHEMA, deviceBridgeMigrations } from '../persistence/migrations.js';
import { DeviceGateway } from '../transport/device-gateway.js';
import { DeviceLinkHost } from '../transport/device-link.host.js';

// ---------------------------------------------------------------------------------------------------------------
// Sizes. Bounded so the whole run stays under 120 s on two busy cores.

const argv = process.argv.slice(2);
const arg = (name: string, fallback: number): number => {
  const hit = argv.find((a) => a.startsWith(`--${name}=`));
  const v = hit ? Number(hit.slice(name.length + 3)) : fallback;
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} must be a positive number`);
  return v;
};
const JSON_OUT = flag('json', argv);
const ONLY = option('only', argv);
const CONNECTIONS = arg('connections', 10_000); // 1.
const CONNECT_CONCURRENCY = 256; // connection attempts in flight (listen backlog is 511)
const DEVICES = arg('devices', 1_000); // 2.
const RATE = arg('rate', 500); // calls (and echoes) per second
const SECONDS = arg('seconds', 10); // measured window of the bridge
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

// ---------------------------------------------------------------------------------------------------------------
// Child: a server measured for memory. `--server=bare` (a bare ws server) or `--server=gateway` (the DeviceGateway).

type ServerMsg = { port: number } | { memory: NodeJS.MemoryUsage };

function settle(): NodeJS.MemoryUsage {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('the server child needs --expose-gc');
  for (let i = 0; i < 4; i++) gc();
  return process.memoryUsage();
}

async function serverChild(kind: string): Promise<void> {
  process.on('disconnect', () => process.exit(0)); // the parent went away: never linger
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
    if (m === 'measure') process.send!({ memory: settle() } satisfies ServerMsg);
  });
  settle();
  process.send!({ port } satisfies ServerMsg);
}

// ---------------------------------------------------------------------------------------------------------------
// Environment and its teardown.

const ns = `b${randomBytes(4).toString('hex')}`;
const dbName = benchDbName();
let dbCreated = false;
let svc: RunningService | undefined;
let fleet: SimulatedFleet | undefined;
let journalRoot: string | undefined;
const children = new Set<ChildProcess>();
const sockets = new Set<WebSocket>();
const servers: WebSocketServer[] = [];
let cleaning: Promise<void> | undefined;

const adminUrlFor = (name: string): string => databaseUrl(ADMIN_DB_URL, name);

/** Resolves with `p`, or after `ms` regardless (a teardown step must never hang the run). */
const bounded = (what: string, p: Promise<unknown>, ms = 8000): Promise<void> => boundedStep(what, p, ms);

function dropSockets(): void {
  for (const ws of sockets) ws.terminate();
  sockets.clear();
}

function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    for (const c of children) c.kill('SIGKILL');
    children.clear();
    dropSockets();
    for (const s of servers.splice(0)) await bounded('closing a ws server', new Promise((r) => s.close(r)));
    await bounded('closing the fleet', fleet?.close() ?? Promise.resolve());
    if (svc) {
      const jsm = svc.infra.jsm;
      await bounded('closing the bridge', svc.close(), 10_000);
      // The service closed its own connection; delete the stream through a fresh one.
      await bounded('deleting the calls stream', deleteStream(jsm));
    }
    if (dbCreated) await bounded(`dropping ${dbName}`, dropDatabase(ADMIN_DB_URL, dbName));
    if (journalRoot) rmSync(journalRoot, { recursive: true, force: true });
  })();
  return cleaning;
}

async function deleteStream(closedJsm: unknown): Promise<void> {
  void closedJsm;
  const { connect } = await import('@nats-io/transport-node');
  const { jetstreamManager } = await import('@nats-io/jetstream');
  const nc = await connect({ servers: NATS_URL.split(','), timeout: 3000 });
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.delete(streamName(ns, 'calls')).catch(() => undefined);
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
  const child = fork(script, [`--server=${kind}`, `--connections=${CONNECTIONS}`], {
    execArgv: ['--expose-gc'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.add(child);
  const replies: ServerMsg[] = [];
  child.on('message', (m) => replies.push(m as ServerMsg));
  const next = async <T extends ServerMsg>(key: string): Promise<T> => {
    await until(`the ${kind} server's ${key}`, () => replies.some((r) => key in r), 20_000);
    const i = replies.findIndex((r) => key in r);
    return replies.splice(i, 1)[0] as T;
  };
  try {
    const { port } = await next<{ port: number }>('port');
    const url = `ws://127.0.0.1:${port}/v1/devices`;
    child.send('measure');
    const before = (await next<{ memory: NodeJS.MemoryUsage }>('memory')).memory;
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
    child.send('measure');
    const after = (await next<{ memory: NodeJS.MemoryUsage }>('memory')).memory;
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
    child.kill('SIGKILL');
    children.delete(child);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// 2. Latency.

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

/** Raw baseline: echo round trips over `DEVICES` ws connections at `RATE`/s. */
async function rawEcho(seconds: number): Promise<Lat> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false, clientTracking: false });
  servers.push(server);
  await new Promise((r) => server.once('listening', r));
  server.on('connection', (ws: WebSocket) => ws.on('message', (d: RawData) => ws.send(d as Buffer)));
  const url = `ws://127.0.0.1:${(server.address() as { port: number }).port}`;
  const clients: WebSocket[] = [];
  const sent = new Map<string, number>();
  const samples: number[] = [];
  let measuring = false;
  for (let i = 0; i < DEVICES; i += 100) {
    await Promise.all(
      Array.from({ length: Math.min(100, DEVICES - i) }, async () => {
        const ws = new WebSocket(url, { perMessageDeflate: false });
        sockets.add(ws);
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
  const n = await paced(RATE, seconds, (i) => fire(i + 1_000_000));
  await until('the last echoes', () => samples.length >= n, 5_000).catch(() => undefined);
  measuring = false;
  for (const ws of clients) {
    ws.terminate();
    sockets.delete(ws);
  }
  await new Promise((r) => server.close(r));
  servers.splice(servers.indexOf(server), 1);
  return lat(samples);
}

interface Tracked {
  submitted: number;
  authorized?: number; // authorize append acknowledged
  seenAuthorized?: number;
  dispatched?: number;
  started?: number;
  succeeded?: number;
  measured: boolean;
}

async function bridgeLatency(out: Record<string, unknown>): Promise<{ e2e: Lat; fromSubmit: Lat; stages: Record<string, Lat>; done: number; issued: number; failed: number; raw: Lat; dispatch: { count: number; empty: number; meanMs: number; perSecond: number } }> {
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
  svc = await startService({
    service: 'device-bridge',
    config,
    streams: ['calls'],
    schema: DEVICE_BRIDGE_SCHEMA,
    migrations: deviceBridgeMigrations,
    module: (infra) => DeviceBridgeModule.with(infra, config),
  });
  const calls = new ToolCalls(svc.infra.store, ns, '/bench/policy');
  const url = svc.app.get(DeviceLinkHost).gateway.url();
  journalRoot = mkdtempSync(join(tmpdir(), 'ormuz-bridge-bench-'));
  progress(`2. connecting ${DEVICES} simulated devices`);
  const t0 = now();
  fleet = runSimulatedFleet({
    url,
    tenant: TENANT,
    count: DEVICES,
    tokenFor: (i) => tokenOf(i),
    journalRoot,
    backoff: { initialDelayMs: 100, maxDelayMs: 2_000 },
  });
  const f = fleet;
  await until('every device to connect', () => f.connectedCount() === DEVICES, 40_000);
  out.fleetConnectMs = now() - t0;
  await sleep(1000); // the connect-time dispatch passes settle
  // Baseline while the fleet is connected and the bridge idle, so both sides share the process and its load.
  progress(`2. raw ws echo: ${RAW_SECONDS} s at ${RATE}/s over ${DEVICES} connections`);
  const raw = await rawEcho(RAW_SECONDS);
  // Diagnostic: how many per-device dispatch queries the bridge runs, and what they cost.
  const repo = svc.app.get(ExecutionsRepository);
  const sendable = repo.sendable.bind(repo);
  const q = { n: 0, empty: 0, ms: 0 };
  repo.sendable = async (...a: Parameters<typeof sendable>) => {
    const t = now();
    const rows = await sendable(...a);
    q.n++;
    q.ms += now() - t;
    if (rows.length === 0) q.empty++;
    return rows;
  };

  // Every event on the calls stream, as it is stored.
  const tracked = new Map<string, Tracked>();
  const sub = svc.infra.nc.subscribe(`${ns}.calls.>`, {
    callback: (_err, msg) => {
      const t = now();
      const callId = msg.subject.slice(msg.subject.lastIndexOf('.') + 1);
      const c = tracked.get(callId);
      if (!c) return;
      const type = /"type":"ormuz\.toolcall\.([a-z_]+)\./.exec(msg.string())?.[1];
      if (type === 'authorized') c.seenAuthorized ??= t;
      else if (type === 'dispatched') c.dispatched ??= t;
      else if (type === 'started') c.started ??= t;
      else if (type === 'succeeded') c.succeeded ??= t;
    },
  });
  const { payload, sha256 } = canonicalPayload({});
  const cause = { correlationid: 'bench', causationid: 'bench' };
  let failed = 0;
  let firstError: string | undefined;
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
      failed++;
      firstError ??= (err as Error).message;
      tracked.delete(callId);
    });
  };
  progress(`2. bridge: ${WARMUP_SECONDS} s warm-up, then ${SECONDS} s at ${RATE} calls/s`);
  await paced(RATE, WARMUP_SECONDS, (i) => fire(i, false));
  const cpu0 = process.cpuUsage();
  const w0 = now();
  const issued = await paced(RATE, SECONDS, (i) => fire(i + 100_000, true));
  const measuredList = () => [...tracked.values()].filter((c) => c.measured);
  await until('the measured calls to succeed', () => measuredList().every((c) => c.succeeded !== undefined), DRAIN_MS).catch(
    (err: unknown) => progress(`2. ${(err as Error).message}; reporting what finished`),
  );
  const cpu = process.cpuUsage(cpu0);
  const windowMs = now() - w0;
  out.dispatchQueries = { count: q.n, empty: q.empty, meanMs: q.ms / Math.max(1, q.n), perSecond: (q.n / windowMs) * 1000 };
  out.bridgeCpuPercentOfOneCore = ((cpu.user + cpu.system) / 1000 / (now() - w0)) * 100;
  sub.unsubscribe();
  if (firstError) out.firstError = firstError;
  const m = measuredList();
  const done = m.filter((c) => c.succeeded !== undefined && c.authorized !== undefined);
  const d = (f2: (c: Tracked) => number | undefined) => lat(done.map(f2).filter((v): v is number => v !== undefined && v >= 0));
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
    failed,
    raw,
    dispatch: out.dispatchQueries as { count: number; empty: number; meanMs: number; perSecond: number },
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
      const raw = r.raw;
      out.latency = { bridge: r, raw };
      const ratio = r.e2e.p50 / raw.p50;
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
      rows.push({
        id: 'latency.submit_to_outcome.p50',
        measure: '   submit→outcome p50 / p99',
        figure: `${fmt(r.fromSubmit.p50)} / ${fmt(r.fromSubmit.p99)} ms`,
        baseline: '',
        ratio: Number.NaN,
        target: '',
        verdict: 'info',
      });
      for (const [stage, l] of Object.entries(r.stages)) {
        rows.push({
          id: `latency.stage.${stage}`,
          measure: `   stage ${stage} p50 / p99`,
          figure: `${fmt(l.p50)} / ${fmt(l.p99)} ms`,
          baseline: '',
          ratio: Number.NaN,
          target: '',
          verdict: 'info',
        });
      }
      rows.push({
        id: 'latency.dispatch_queries',
        measure: '   (diag) per-device sendable queries',
        figure: `${r.dispatch.count} (${Math.round(r.dispatch.perSecond)}/s, ${fmt((100 * r.dispatch.empty) / Math.max(1, r.dispatch.count), 1)}% empty)`,
        baseline: `mean ${fmt(r.dispatch.meanMs)} ms each`,
        ratio: Number.NaN,
        target: '',
        verdict: 'info',
      });
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

const serverKind = argv.find((a) => a.startsWith('--server='))?.slice('--server='.length);
if (serverKind) {
  await serverChild(serverKind);
} else {
  main().catch(async (err: unknown) => {
    console.error('bench failed:', err);
    await cleanup();
    process.exit(1);
  });
}
