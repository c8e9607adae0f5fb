/**
 * MCP gateway bench: a low-risk device call through MCP (SDK client → gateway → policy → bridge → simulated device →
 * result) against the same call submitted to policy directly, measured in the same run, call after call.
 *
 *   npm run bench:mcp                  # table
 *   npm run bench:mcp -- --json        # table, then one JSON object on the last line
 *   npm run bench:mcp -- --calls=200 --warmup=20 --profile=<dir>
 *   (every option is also accepted as `--name value`)
 *
 * Env: NATS_URL (default nats://127.0.0.1:4222), DATABASE_URL (an admin database the user may CREATE DATABASE from,
 * default postgres://postgres@127.0.0.1:5432/postgres). Everything the run creates (the streams of a random
 * namespace, one database, the device's journal, the services' logs, child processes) is removed at the end, also on
 * failure or Ctrl-C; a failed run keeps the services' logs and prints where.
 *
 * The platform as deployed: policy, device-bridge and mcp-gateway, each a process of its own
 * (`services/<name>/dist/main.js`) on a fresh namespace and database; one simulated phone (runSimulatedFleet, its
 * journal in /dev/shm where there is one) in a child process; agent `bench-agent` granted the device tools, with an
 * API key. Both paths call `device.screen_observe` (low risk: authorized and run) on that phone, each call under an
 * operation id of its own, and time it from the request to the outcome in hand:
 * - through MCP: `tools/call` by the SDK's Client over Streamable HTTP, one session for the run, until its answer;
 * - directly: what a client of policy does with the agent's API key: `policy.submit`, then a core NATS subscription
 *   to the call's subject and `policy.status` read at once and again at each append heard (at the latest every
 *   second), until the call has settled — the waiting the gateway's CallRunner does for an MCP client.
 * The two alternate, the order swapped every pair, so that what else loads the machine falls on both alike.
 * `--warmup` pairs go first, unrecorded.
 *
 * `--profile=<dir>` starts the gateway with `--cpu-prof --cpu-prof-dir=<dir>` and stops it with SIGTERM at the end, so
 * that its CPU profile is written there (open it in Chrome's DevTools or any .cpuprofile viewer).
 */
import { mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { NatsConnection } from '@nats-io/transport-node';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { DevIssuer, devIssuerDir } from '@ormuz/auth';
import { aggregateSubject, type RpcName, type RpcReplyOf, type RpcRequestOf } from '@ormuz/contracts';
import { runSimulatedFleet } from '@ormuz/device-sdk';
import { callRpc, type Credential } from '@ormuz/service-kit';
import {
  adminDbUrl,
  cleanUpOnSignals,
  flag,
  fmt,
  forkChild,
  freePort,
  natsUrl,
  now,
  option,
  positiveOption,
  PlatformRun,
  progress,
  sleep,
  startWatchdog,
  summarize,
  until,
  type AskChild,
  type BenchRow,
  type LatencySummary,
} from '../kit/index.js';

// ---------------------------------------------------------------------------------------------------------------
// Command line and sizes: the default run stays within about a minute and a half on two busy cores.

const JSON_OUT = flag('json');
const CALLS = Math.round(positiveOption('calls', 200)); // measured pairs: one call through MCP, one direct
const WARMUP = Math.round(positiveOption('warmup', 20)); // unrecorded pairs first
const PROFILE_DIR = option('profile');
/** The gateway's p50 and p99 against the direct path's. */
const TARGET_RATIO = 1.5;
/** How long a direct client goes at most without reading the status (the gateway's MCP_CALL_POLL_MS default). */
const DIRECT_POLL_MS = 1_000;
const CALL_TIMEOUT_MS = 30_000;
const WATCHDOG_MS = 300_000;
const TENANT = 'bench';
const AGENT = 'bench-agent';
const DEVICE = 'sim-0';
const TOKEN = 'tok-0';
const TOOL = 'device.screen_observe';
const ARGUMENTS = {};
/** A call has settled: nothing more happens to it (the gateway's SETTLED, less `staged`, which a low-risk call never is). */
const SETTLED = new Set(['refused', 'denied', 'expired', 'succeeded', 'failed', 'outcome_unknown', 'sealed']);
const NATS_URL = natsUrl();
const ADMIN_DB_URL = adminDbUrl();
const script = fileURLToPath(import.meta.url);

// ---------------------------------------------------------------------------------------------------------------
// Child: the simulated phone, `--phone --url=<bridge> --journal-root=<dir>`; replies `{ ready }` once it is connected.

const send = (m: Record<string, unknown>): void => void process.send!(m);

async function phoneChild(): Promise<void> {
  const url = option('url');
  const journalRoot = option('journal-root');
  if (!url || !journalRoot) throw new Error('the phone child needs --url and --journal-root');
  process.on('disconnect', () => process.exit(0)); // the parent went away: never linger
  const fleet = runSimulatedFleet({
    url,
    tenant: TENANT,
    count: 1,
    tokenFor: () => TOKEN,
    journalRoot,
    backoff: { initialDelayMs: 100, maxDelayMs: 2_000 },
  });
  await until('the phone to connect', () => fleet.connectedCount() === 1, 60_000);
  send({ ready: true });
}

// ---------------------------------------------------------------------------------------------------------------
// Environment and its teardown.

let mcp: Client | undefined;
const run = new PlatformRun(
  'mcp',
  'm',
  { nats: NATS_URL, adminDb: ADMIN_DB_URL },
  {
    // A profiled gateway writes its profile as it exits, which SIGTERM lets it do.
    stopSignal: (service) => (PROFILE_DIR && service === 'mcp-gateway' ? 'SIGTERM' : 'SIGKILL'),
    beforeCleanup: async () => {
      await mcp?.close();
    },
  },
);
const ns = run.namespace;
const cleanup = (): Promise<void> =>
  run.cleanup().then(() => {
    if (PROFILE_DIR) progress(`the gateway's CPU profile is in ${resolve(PROFILE_DIR)}`);
  });

// ---------------------------------------------------------------------------------------------------------------
// The platform, the phone, the agent's key.

type Call = <N extends RpcName>(
  name: N,
  body: NoInfer<RpcRequestOf<N>>,
  credential: Credential,
  timeoutMs?: number,
) => Promise<NoInfer<RpcReplyOf<N>>>;

interface Platform {
  call: Call;
  apiKey: string;
  mcpUrl: URL;
}

async function startPlatform(nc: NatsConnection): Promise<Platform> {
  const databaseUrl = await run.createDatabase();
  const bridgePort = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NATS_URL,
    DATABASE_URL: databaseUrl,
    ORMUZ_NAMESPACE: ns,
    DEVICE_BRIDGE_PORT: String(bridgePort),
    DEVICE_TOKENS: `${TENANT}:${DEVICE}:${TOKEN}`,
    MCP_GATEWAY_PORT: String(await freePort()),
    MCP_GATEWAY_HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
  };
  if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });
  const profiled = PROFILE_DIR
    ? { NODE_OPTIONS: `${env.NODE_OPTIONS ?? ''} --cpu-prof --cpu-prof-dir=${resolve(PROFILE_DIR)}`.trim() }
    : {};
  // One at a time: policy claims the database for the namespace and migrates the API keys' schema first.
  await run.startService(nc, 'policy', env);
  const bridge = await run.startService(nc, 'device-bridge', env);
  const gateway = await run.startService(nc, 'mcp-gateway', { ...env, ...profiled });
  const issuer = await DevIssuer.open(devIssuerDir(process.env));
  const admin = { bearer: await issuer.sign({ tenant: TENANT, roles: ['admin'], subject: 'bench@bench' }) };
  const call: Call = (name, body, credential, timeoutMs = 10_000) =>
    callRpc(nc, ns, name, body, { credential, timeoutMs });
  await call('policy.grants.set', { tenant: TENANT, agent_id: AGENT, allow: ['device'] }, admin, 30_000);
  const { api_key: apiKey } = await call('policy.keys.issue', { tenant: TENANT, agent_id: AGENT }, admin);

  const journalRoot = run.createJournalRoot();
  progress('connecting the simulated phone (child process)');
  const devicesUrl = bridge.health.endpoints.devices ?? `ws://127.0.0.1:${bridgePort}/v1/devices`;
  const ask: AskChild = forkChild(
    script,
    'phone child',
    ['--phone', `--url=${devicesUrl}`, `--journal-root=${journalRoot}`],
    run.children,
  );
  await ask('ready', undefined, 90_000);
  const deadline = now() + 30_000;
  while ((await call('device-bridge.devices', { tenant: TENANT }, admin)).devices.length < 1) {
    if (now() > deadline) throw new Error(`the bridge does not list ${DEVICE}`);
    await sleep(100);
  }
  return { call, apiKey, mcpUrl: new URL(`${gateway.health.endpoints.http!}/mcp`) };
}

// ---------------------------------------------------------------------------------------------------------------
// The two paths. Each returns the call's milliseconds and its final status.

interface Timed {
  ms: number;
  status: string;
}

async function connectMcp(p: Platform): Promise<Client> {
  const client = new Client({ name: 'ormuz-bench', version: '1.0.0' });
  const headers = { authorization: `Bearer ${p.apiKey}`, 'ormuz-device': DEVICE };
  await client.connect(new StreamableHTTPClientTransport(p.mcpUrl, { requestInit: { headers } }));
  return client;
}

async function throughMcp(client: Client, operationId: string): Promise<Timed> {
  const t0 = now();
  const result = await client.callTool(
    { name: TOOL, arguments: ARGUMENTS, _meta: { 'ormuz/operation_id': operationId } },
    undefined,
    { timeout: CALL_TIMEOUT_MS },
  );
  const ms = now() - t0;
  const status = (result.structuredContent as { status?: string } | undefined)?.status ?? 'unknown';
  return { ms, status };
}

async function direct(nc: NatsConnection, p: Platform, operationId: string): Promise<Timed> {
  const key = { bearer: p.apiKey };
  const t0 = now();
  const reply = await p.call(
    'policy.submit',
    {
      tenant: TENANT,
      agent_id: AGENT,
      tool: TOOL,
      arguments: ARGUMENTS,
      origin: { kind: 'operation', operation_id: operationId },
      device_id: DEVICE,
      correlation_id: operationId,
    },
    key,
  );
  // Subscribed before the first status read, so no append falls between the two.
  let heard = 0;
  let wake: (() => void) | undefined;
  const sub = nc.subscribe(aggregateSubject(ns, 'calls', TENANT, reply.call_id), {
    callback: () => {
      heard++;
      wake?.();
    },
  });
  try {
    let seen = 0;
    for (;;) {
      const view = await p.call('policy.status', { tenant: TENANT, call_id: reply.call_id }, key);
      const status = view.status.status;
      if (SETTLED.has(status)) return { ms: now() - t0, status };
      if (now() - t0 > CALL_TIMEOUT_MS) throw new Error(`direct call ${reply.call_id} still ${status}`);
      if (heard === seen) {
        await new Promise<void>((done) => {
          const timer = setTimeout(() => {
            wake = undefined;
            done();
          }, DIRECT_POLL_MS);
          wake = () => {
            clearTimeout(timer);
            wake = undefined;
            done();
          };
        });
      }
      seen = heard;
    }
  } finally {
    sub.unsubscribe();
  }
}

interface Paths {
  mcp: LatencySummary;
  direct: LatencySummary;
  /** Calls that did not end `succeeded`, by path. */
  failed: { mcp: number; direct: number };
  firstFailure?: string;
}

/** WARMUP pairs unrecorded, then CALLS pairs; the pair's order alternates. */
async function alternate(nc: NatsConnection, p: Platform, client: Client): Promise<Paths> {
  const samples = { mcp: [] as number[], direct: [] as number[] };
  const failed = { mcp: 0, direct: 0 };
  let firstFailure: string | undefined;
  const run = async (path: 'mcp' | 'direct', i: number, recorded: boolean) => {
    const operationId = `bench-${path}-${i}`;
    const t = path === 'mcp' ? await throughMcp(client, operationId) : await direct(nc, p, operationId);
    if (t.status !== 'succeeded') {
      failed[path]++;
      firstFailure ??= `${path} call ${operationId} ended ${t.status}`;
    }
    if (recorded) samples[path].push(t.ms);
  };
  for (let i = 0; i < WARMUP + CALLS; i++) {
    const recorded = i >= WARMUP;
    if (i === WARMUP) progress(`measuring: ${CALLS} pairs`);
    const order: ('mcp' | 'direct')[] = i % 2 === 0 ? ['mcp', 'direct'] : ['direct', 'mcp'];
    for (const path of order) await run(path, i, recorded);
  }
  return { mcp: summarize(samples.mcp), direct: summarize(samples.direct), failed, firstFailure };
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
    const nc = await run.connection('driver');
    const platform = await startPlatform(nc);
    mcp = await connectMcp(platform);
    progress(`warming up: ${WARMUP} pairs (${TOOL} through MCP, then directly, and the other way round)`);
    const paths = await alternate(await run.connection('direct'), platform, mcp);
    out.paths = paths;
    const row = (p: 'p50' | 'p99'): BenchRow => {
      const ratio = paths.mcp[p] / paths.direct[p];
      return {
        id: `mcp.call.${p}`,
        measure: `low-risk device call through MCP ${p} (${paths.mcp.n} calls)`,
        figure: `${fmt(paths.mcp[p])} ms`,
        baseline: `${fmt(paths.direct[p])} ms direct (policy.submit + status)`,
        ratio,
        target: `≤ ${TARGET_RATIO}×`,
        verdict: ratio <= TARGET_RATIO && paths.failed.mcp + paths.failed.direct === 0 ? 'PASS' : 'MISS',
      };
    };
    rows.push(row('p50'), row('p99'), {
      id: 'mcp.call.overhead.p50',
      measure: "   the gateway's share: MCP p50 − direct p50",
      figure: `${fmt(paths.mcp.p50 - paths.direct.p50)} ms`,
      baseline: '',
      ratio: Number.NaN,
      target: '',
      verdict: 'info',
    });
    if (paths.failed.mcp + paths.failed.direct > 0) {
      failed = true;
      out.errors = paths.failed;
    }
  } catch (err) {
    failed = true;
    run.failedWith('mcp', err, rows);
  }

  await run.finish(
    { bench: 'mcp', title: 'MCP gateway bench', namespace: ns, startedMs: started, load0 },
    { rows, detail: out, json: JSON_OUT, failed },
    watchdog,
  );
}

if (flag('phone')) {
  phoneChild().catch((err: unknown) => {
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
