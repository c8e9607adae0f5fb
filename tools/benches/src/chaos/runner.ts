/**
 * One chaos run: the platform up (its own three-node NATS cluster with the streams at replicas 3; policy, approvals,
 * the device-bridge, audit and model-loop as two replicas each, the gateway once), the devices connected, then for
 * `seconds` the load and the owner run while the nemesis breaks things; then the nemesis mends everything, the load
 * stops, the platform is given time to recover, and the checker reads the log, the journals, every stream's append
 * headers (the sequence check) and rebuilds of the read models.
 */
import { DevIssuer, devIssuerDir, type Role } from '@ormuz/auth';
import { callRpc, type Credential } from '@ormuz/service-kit';
import { seededRandom } from '../model-loop/chaos.js';
import { checkHistory, unsettledCalls, type ChaosVerdict } from './checker.js';
import { readCallEvents, readStreams, rebuildReadModels } from './collect.js';
import { ChaosDevices, deviceTargets, deviceToken } from './devices.js';
import { LoadGenerator, ScriptedOwner, type LoadTenant } from './load.js';
import { Nemesis, type NemesisTarget } from './nemesis.js';
import { ChaosPlatform } from './platform.js';

export interface ChaosOptions {
  /** A database of the run's own (the services migrate it); dropped by the caller. */
  readonly databaseUrl: string;
  /** How long the load and the nemesis run. */
  readonly seconds: number;
  readonly devices: number;
  readonly seed: number;
  /** Submits per second; default 10. */
  readonly rate?: number;
  /** Recovery a call gets past its deadline before it counts as stuck, in ms; default 30 000. */
  readonly graceMs?: number;
  readonly progress?: (line: string) => void;
}

export interface ChaosReport {
  readonly seed: number;
  readonly seconds: number;
  readonly devices: number;
  readonly verdict: ChaosVerdict;
  /** Faults the nemesis caused, by target. */
  readonly faults: Readonly<Record<string, number>>;
  /** Service processes that exited by themselves (and were started again), by name. */
  readonly selfExits: Readonly<Record<string, number>>;
  readonly approved: number;
  /** Submits answered with an error (not counted as acknowledged). */
  readonly submitErrors: readonly string[];
  /** The cluster's nats-server version (`clusterNatsServer`: the fetched 2.10 when there is one). */
  readonly natsVersion: string;
}

const TENANTS = ['chaos-a', 'chaos-b'];
const AGENTS_PER_TENANT = 2;
/** How many processes of each service run. */
const REPLICAS = { policy: 2, approvals: 2, 'device-bridge': 2, audit: 2, 'model-loop': 2, 'mcp-gateway': 1 };
/**
 * Services of which one replica may die at any moment without harm: commands in queue groups, consumers of the log in
 * the holder of a Postgres lease (decision 0033; the bridge's own lease, 0007).
 */
const KILLABLE = new Set(['policy', 'approvals', 'device-bridge', 'audit', 'model-loop']);
/** Short timeouts, so that every call reaches a final state soon after the nemesis stops. */
const TIMEOUTS = {
  EXECUTION_TIMEOUT_MS: 10_000,
  OFFLINE_DEADLINE_MS: 20_000,
  APPROVAL_TTL_MS: 60_000,
  DEVICE_HEARTBEAT_MS: 2_000,
  DEVICE_SWEEP_INTERVAL_MS: 500,
};

/** Runs the load and the nemesis for `seconds`, then checks; starts and stops every process it needs. */
export async function runChaos(opts: ChaosOptions): Promise<ChaosReport> {
  const t0 = Date.now();
  const say = (line: string) => opts.progress?.(`${((Date.now() - t0) / 1000).toFixed(1)} s: ${line}`);
  // One generator each, so the seed repeats the faults and the calls whatever the machine's timing interleaves.
  const random = seededRandom(opts.seed);
  const loadRandom = seededRandom(opts.seed ^ 0x5bd1e995);
  const namespace = `chaos${opts.seed.toString(16).slice(-8)}${Math.floor(Math.random() * 1e6)}`;
  const graceMs = opts.graceMs ?? 30_000;
  const plan = ChaosDevices.plan(TENANTS, REPLICAS['device-bridge'], opts.devices);
  const deviceTokens = [...plan].flatMap(([tenant, ids]) => ids.map((id) => `${tenant}:${id}:${deviceToken(id)}`));
  const issuer = await DevIssuer.open(devIssuerDir(process.env));
  const credential = async (tenant: string, roles: Role[]): Promise<Credential> => ({
    bearer: await issuer.sign({ tenant, roles, subject: `chaos@${tenant === '*' ? 'platform' : tenant}` }),
  });
  const tenants: LoadTenant[] = [];
  for (const tenant of TENANTS) {
    tenants.push({
      tenant,
      agents: Array.from({ length: AGENTS_PER_TENANT }, (_, i) => `agent-${i}`),
      devices: plan.get(tenant)!,
      credential: await credential(tenant, ['operator', 'owner']),
    });
  }

  const platform = await ChaosPlatform.start({
    databaseUrl: opts.databaseUrl,
    namespace,
    replicas: REPLICAS,
    random,
    env: { ...stringValues(TIMEOUTS), DEVICE_TOKENS: deviceTokens.join(',') },
    say,
  });
  const devices = new ChaosDevices();
  const nc = () => platform.nc;
  try {
    for (const t of tenants) {
      for (const agent of t.agents) {
        // The patience of a start: a service that has just reported healthy may still be warming up.
        await callRpc(
          nc(),
          namespace,
          'policy.grants.set',
          { tenant: t.tenant, agent_id: agent, allow: ['device'] },
          {
            credential: t.credential,
            timeoutMs: 30_000,
          },
        );
      }
    }
    devices.start(plan, platform.deviceUrls);
    await until(() => devices.connectedCount() === opts.devices, 120_000, `${opts.devices} devices to connect`);
    say(`${opts.devices} devices connected over ${platform.deviceUrls.length} bridges in namespace ${namespace}`);

    const targets: NemesisTarget[] = [
      ...platform.processes.filter((p) => KILLABLE.has(p.service)),
      platform.nats,
      ...deviceTargets(devices, random),
    ];
    const nemesis = new Nemesis({ targets, random, maxPauseMs: 4000, maxOutageMs: 3000, say });
    const load = new LoadGenerator({
      nc,
      namespace,
      tenants,
      rate: opts.rate ?? 10,
      highRiskShare: 0.2,
      random: loadRandom,
    });
    const owner = new ScriptedOwner(nc, namespace, tenants);
    owner.start();
    load.start();
    nemesis.start();
    say(`load and nemesis run for ${opts.seconds} s (targets: ${targets.map((t) => t.name).join(', ')})`);
    await new Promise((resolve) => setTimeout(resolve, opts.seconds * 1000));
    await Promise.all([nemesis.stop(), load.stop()]);
    const stoppedAt = Date.now();
    say(`stopped: ${load.submitted} submitted, ${load.acknowledged.size} acknowledged; recovering`);

    // Recovery: every call reaches a final state, or its deadline and the grace pass.
    const settleMs = TIMEOUTS.OFFLINE_DEADLINE_MS + TIMEOUTS.EXECUTION_TIMEOUT_MS + graceMs;
    let open = Number.POSITIVE_INFINITY;
    while (Date.now() < stoppedAt + settleMs) {
      open = unsettledCalls(await readCallEvents(nc(), namespace).catch(() => []));
      if (open === 0 && devices.connectedCount() === opts.devices) break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    say(`${open} calls not final after ${((Date.now() - stoppedAt) / 1000).toFixed(1)} s of recovery`);
    await owner.stop();

    await devices.close();
    const journals = devices.readJournals();
    const events = await readCallEvents(nc(), namespace);
    const streams = await readStreams(nc(), namespace);
    const checkedAt = Date.now();
    // Every replica that runs a projection answers `consumers.rebuild` and would rebuild into the same schema at once:
    // one process of each service stays for the rebuilds (the nemesis is over, so this loses nothing).
    for (const p of platform.processes.filter((p) => p.replica > 1)) await p.stop();
    const rebuilds = await rebuildReadModels(nc(), namespace, await credential('*', ['admin']), say);
    const verdict = checkHistory({
      submitted: load.submitted,
      acknowledged: load.acknowledged,
      events,
      journals,
      deviceRuns: devices.runs,
      rebuilds,
      streams,
      checkedAt,
      graceMs,
      pendingDeadlineMs: TIMEOUTS.OFFLINE_DEADLINE_MS,
    });
    return {
      seed: opts.seed,
      seconds: opts.seconds,
      devices: opts.devices,
      verdict,
      faults: Object.fromEntries(nemesis.faults),
      selfExits: Object.fromEntries(
        platform.processes.filter((p) => p.selfExits > 0).map((p) => [p.name, p.selfExits]),
      ),
      approved: owner.approved,
      submitErrors: load.errors,
      natsVersion: platform.nc.info?.version ?? 'unknown',
    };
  } finally {
    await devices.close().catch(() => undefined);
    devices.remove();
    await platform.stop();
  }
}

const stringValues = (o: Record<string, number>) =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, String(v)]));

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
