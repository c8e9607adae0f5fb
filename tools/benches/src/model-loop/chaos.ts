/**
 * kill -9 of model-loop at random points while conversations run, then the verdict from the log.
 *
 * Policy, approvals and the device-bridge run as processes with one simulated phone connected; model-loop runs as a
 * child process of its own, the only one killed. Each trial starts a few conversations (alternately `scripted:demo`,
 * two device calls in one turn, one of them staged, and `scripted:directory`, four calls over four turns through the
 * platform's own tools, one staged), lets them run for a random moment from a seeded generator, kills model-loop
 * with SIGKILL and starts it again; an owner approves every staged call as it appears. After the last restart every
 * conversation must complete within a bounded time, and the calls and conversations streams must show:
 *
 * - duplicates: no call id requested twice, no (conversation, turn, index) given two call ids, no call started twice
 *   on the log, and no call run twice by the phone;
 * - lost: every conversation whose start was acknowledged is on the log, and every tool request of every
 *   conversation reached policy;
 * - stuck: every conversation completed (none left running, or paused with nothing to wait for);
 * - mismatched: each conversation's last word on each call is the call's real final outcome on the calls stream, and
 *   the phone ran exactly the device calls the log says started;
 * - miscounted: the tenant's day as model-loop serves it equals a fold of the usage stream, which counts each
 *   recorded reply once (its turn, tokens and tool requests; `usage-verdict.ts`). The tenant has daily limits far
 *   above what the run uses, so every claim is decided against them.
 *
 * With `replicas` ≥ 2, model-loop and audit each run as that many processes (decision 0033): each trial kills the
 * holder of each one's lease instead (a standby takes over), measures the hand-over, and starts a new standby; the
 * verdict then also requires audit's archive to hold exactly the events of every stream (`unarchived`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readdirSync, readFileSync, closeSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jetstream } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { DevIssuer, devIssuerDir } from '@ormuz/auth';
import {
  contextFilter,
  CONTEXTS,
  type ContextName,
  ConversationEventType,
  ToolCallEventType,
  type CallRequestedV1,
  type MessageAddedV1,
  type RpcName,
  type RpcRequestOf,
} from '@ormuz/contracts';
import { runSimulatedDevice, type SimulatedDeviceHandle } from '@ormuz/device-sdk';
import { replay, streamName } from '@ormuz/event-log';
import { leaseHolder } from '@ormuz/postgres';
import { callRpc, waitUntilServing, type ServiceHealth } from '@ormuz/service-kit';
import pg from 'pg';
import { CountingDevice } from '../chaos/counting-device.js';
import { usageVerdict } from './usage-verdict.js';

/** What a chaos run is given. */
export interface ModelLoopChaosOptions {
  readonly natsUrl: string;
  /** A database of the run's own (the services migrate it); dropped by the caller. */
  readonly databaseUrl: string;
  /** Kill points: one kill -9 and restart of model-loop each. */
  readonly trials: number;
  /** Seed of the kill moments; the same seed gives the same schedule. */
  readonly seed: number;
  /** Conversations started per trial; default 2. */
  readonly conversationsPerTrial?: number;
  /**
   * Ends the run early (Ctrl-C, SIGTERM): the processes it started are killed at once, no trial or restart follows,
   * and the run rejects after its teardown.
   */
  readonly signal?: AbortSignal;
  /** Longest random moment between a trial's starts and its kill, in ms; default 600. */
  readonly maxKillDelayMs?: number;
  /** How long every conversation has to complete after the last restart, in ms; default 60,000. */
  readonly settleMs?: number;
  /**
   * Processes of model-loop and of audit; default 1 (model-loop alone, killed and restarted). With 2 or more, each
   * trial kills the lease holder of both and a standby takes over.
   */
  readonly replicas?: number;
  /** Progress lines. */
  readonly progress?: (line: string) => void;
}

/** One kill -9 of a lease holder: how long until a standby held the lease, and until its consumers answered. */
export interface Handover {
  readonly service: string;
  /** From the SIGKILL until another process holds the lease (Postgres released it, the standby's next try took it). */
  readonly leaseMs: number;
  /** From the SIGKILL until the new leader answers `consumers.status` with every consumer running. */
  readonly resumedMs: number;
}

/** The verdict: every count must be 0. `problems` names each one found. */
export interface ModelLoopChaosReport {
  readonly seed: number;
  readonly trials: number;
  readonly conversations: number;
  readonly toolCalls: number;
  readonly duplicates: number;
  readonly lost: number;
  readonly stuck: number;
  readonly mismatched: number;
  /** Tenant-day figures that are not what the log says, counted twice or missing. */
  readonly miscounted: number;
  /** Events of a stream missing from audit's archive, or archived but not in the stream (replicas ≥ 2 only). */
  readonly unarchived: number;
  /** The hand-overs of the lease holders killed (replicas ≥ 2 only). */
  readonly handovers: readonly Handover[];
  readonly problems: readonly string[];
}

const TENANT = 'chaos';
const AGENT = 'chaos-agent';
const DEVICE = 'phone-1';
const MODELS = ['scripted:demo', 'scripted:directory'] as const;
const FINAL_CALL_EVENTS: Readonly<Record<string, string>> = {
  [ToolCallEventType.Succeeded]: 'succeeded',
  [ToolCallEventType.Failed]: 'failed',
  [ToolCallEventType.OutcomeUnknown]: 'outcome_unknown',
  [ToolCallEventType.Refused]: 'refused',
  [ToolCallEventType.Denied]: 'denied',
  [ToolCallEventType.Expired]: 'expired',
  [ToolCallEventType.Sealed]: 'sealed',
};
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

/** mulberry32: a small seeded generator, so a run's kill schedule can be replayed from its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

interface Child {
  readonly name: string;
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
}

/** Runs the trials and returns the verdict. Starts and stops every process it needs. */
export async function runModelLoopChaos(opts: ModelLoopChaosOptions): Promise<ModelLoopChaosReport> {
  const t0 = Date.now();
  const progress = opts.progress ?? (() => undefined);
  const say = (line: string) => progress(`${((Date.now() - t0) / 1000).toFixed(1)} s: ${line}`);
  const perTrial = opts.conversationsPerTrial ?? 2;
  const maxDelay = opts.maxKillDelayMs ?? 600;
  const random = seededRandom(opts.seed);
  const namespace = `chaos${opts.seed.toString(16).padStart(8, '0').slice(-8)}${Math.floor(Math.random() * 1e6)}`;
  const logDir = mkdtempSync(join(tmpdir(), 'ormuz-chaos-logs-'));
  const journal = mkdtempSync(join(tmpdir(), 'ormuz-chaos-journal-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NATS_URL: opts.natsUrl,
    DATABASE_URL: opts.databaseUrl,
    ORMUZ_NAMESPACE: namespace,
    APPROVALS_PORT: '0',
    DEVICE_BRIDGE_PORT: String(await freePort()),
    DEVICE_TOKENS: `${TENANT}:${DEVICE}:chaos-${DEVICE}`,
    LOG_LEVEL: 'warn',
  };
  const nc = await connect({ servers: opts.natsUrl, name: 'ormuz-model-loop-chaos' });
  const issuer = await DevIssuer.open(devIssuerDir(process.env));
  const admin = { bearer: await issuer.sign({ tenant: TENANT, roles: ['admin'], subject: 'chaos@chaos' }) };
  const operator = { bearer: await issuer.sign({ tenant: '*', roles: ['admin'], subject: 'ops@chaos' }) };
  const replicas = Math.max(1, opts.replicas ?? 1);
  const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: 2 });
  const handovers: Handover[] = [];
  const call = <N extends RpcName>(name: N, body: NoInfer<RpcRequestOf<N>>, timeoutMs = 2000) =>
    callRpc(nc, namespace, name, body, { credential: admin, timeoutMs });

  const children = new Map<string, Child>();
  const killAll = () => {
    for (const c of children.values()) c.child.kill('SIGKILL');
  };
  opts.signal?.addEventListener('abort', killAll, { once: true });
  /** Starts service `name` as process `key` (`model-loop#2` for a replica). */
  const start = async (name: string, key = name): Promise<ServiceHealth> => {
    opts.signal?.throwIfAborted();
    const log = openSync(join(logDir, `${name}.log`), 'a');
    const child = spawn(process.execPath, [join(ROOT, 'services', name, 'dist', 'main.js')], {
      env,
      stdio: ['ignore', log, log],
    });
    closeSync(log);
    const exited = new Promise<void>((resolve) =>
      child.once('exit', (code, signal) => {
        if (signal !== 'SIGKILL') say(`${key} exited by itself (code ${code}, signal ${signal})`);
        resolve();
      }),
    );
    children.set(key, { name, child, exited });
    let gone = false;
    void exited.then(() => (gone = true));
    try {
      return await waitUntilServing(nc, namespace, name, { timeoutMs: 120_000, stillStarting: () => !gone });
    } catch (err) {
      const tail = readFileSync(join(logDir, `${name}.log`), 'utf8')
        .split('\n')
        .slice(-20)
        .join('\n');
      throw new Error(`${key} did not start: ${(err as Error).message}\n${tail}`);
    }
  };
  let started = 0;
  /** Starts replica `n` of `name` and waits until its lease session is open (it leads or stands by). */
  const startReplica = async (name: string): Promise<void> => {
    const key = `${name}#${++started}`;
    await start(name, key);
    const pid = children.get(key)!.child.pid;
    await until(
      async () =>
        (await pool.query(`select 1 from pg_stat_activity where application_name like $1`, [`${pid} ormuz-lease %`]))
          .rowCount === 1,
      120_000,
      `${key}'s lease session`,
    );
  };
  /** Kills the holder of `service`'s lease with SIGKILL, measures the hand-over, and starts a new standby. */
  const killLeader = async (service: 'model-loop' | 'audit'): Promise<void> => {
    const lease = `${namespace}:${service}`;
    const holder = await leaseHolder(pool, lease);
    const key = [...children.entries()].find(([, c]) => c.child.pid === holder?.pid)?.[0];
    if (!holder || !key) throw new Error(`no process of this run holds ${lease} (holder: ${JSON.stringify(holder)})`);
    const killed = Date.now();
    const gone = kill9(key);
    await until(
      async () => ((await leaseHolder(pool, lease))?.pid ?? holder.pid) !== holder.pid,
      60_000,
      `${lease} taken`,
    );
    const leaseMs = Date.now() - killed;
    await until(
      async () => {
        const status = await callRpc(
          nc,
          namespace,
          `${service}.consumers.status`,
          {},
          {
            credential: operator,
            // Counted when the answer arrives: a leader busy catching up answers late, not never.
            timeoutMs: 2000,
          },
        );
        return status.consumers.length > 0 && status.consumers.every((c) => c.running);
      },
      60_000,
      `${service}'s consumers to run again`,
    );
    handovers.push({ service, leaseMs, resumedMs: Date.now() - killed });
    await gone;
    children.delete(key);
    await startReplica(service);
  };
  const kill9 = async (name: string): Promise<void> => {
    const c = children.get(name)!;
    c.child.kill('SIGKILL');
    const timer = setTimeout(() => say(`${name} (pid ${c.child.pid}) has not exited 15 s after SIGKILL`), 15_000);
    await c.exited;
    clearTimeout(timer);
  };

  /**
   * Starts a killed service again as an orchestrator would: a start that fails (model-loop sometimes exits with
   * `cannot start: timeout` right after a kill -9 on a loaded machine) is retried, at most five times.
   */
  const restart = async (name: string): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      try {
        await start(name);
        return;
      } catch (err) {
        if (attempt >= 5 || opts.signal?.aborted) throw err;
        say(
          `restart ${attempt} of ${name} failed, starting it again: ${(err as Error).message.split('\n').slice(-1)[0]}`,
        );
      }
    }
  };

  let phone: SimulatedDeviceHandle | undefined;
  const device = new CountingDevice();
  const stopping = new AbortController();
  try {
    await start('policy');
    await start('approvals');
    const bridge = await start('device-bridge');
    if (replicas === 1) await start('model-loop');
    else {
      for (let r = 0; r < replicas; r++) await startReplica('model-loop');
      for (let r = 0; r < replicas; r++) await startReplica('audit');
    }
    say(
      `namespace ${namespace}: policy, approvals, device-bridge and model-loop serve` +
        (replicas > 1 ? ` (model-loop and audit in ${replicas} replicas each)` : ''),
    );
    // A service that has just reported healthy may still be busy warming up on a loaded machine: the setup calls
    // (idempotent) get the patience of a start, not the 2 s of the calls made while services are killed.
    await call('policy.grants.set', { tenant: TENANT, agent_id: AGENT, allow: ['ormuz', 'device'] }, 30_000);
    await call(
      'model-loop.tenant.limits.set',
      { tenant: TENANT, day_steps: 1_000_000, day_tool_calls: 1_000_000, day_tokens: 1_000_000_000 },
      30_000,
    );
    say(`agent ${AGENT} may use the ormuz and device tools; connecting ${DEVICE}`);
    phone = runSimulatedDevice({
      url: bridge.endpoints.devices ?? `ws://127.0.0.1:${env.DEVICE_BRIDGE_PORT}/v1/devices`,
      tenant: TENANT,
      deviceId: DEVICE,
      token: `chaos-${DEVICE}`,
      journalDir: journal,
      device,
      backoff: { initialDelayMs: 50, maxDelayMs: 500 },
    });
    await until(
      async () => (await call('device-bridge.devices', { tenant: TENANT }, 10_000)).devices.length === 1,
      20_000,
      'the phone to connect',
    );
    say(`${DEVICE} connected`);

    // The owner: approves every staged call as soon as the inbox lists it.
    const owner = (async () => {
      while (!stopping.signal.aborted) {
        const pending = await call('approvals.list', { tenant: TENANT }).catch(() => ({ approvals: [] }));
        for (const a of pending.approvals) {
          await call('approvals.approve', { tenant: TENANT, approval_id: a.approval_id }).catch(() => undefined);
        }
        await pause(100);
      }
    })();

    // Conversations are started again with the same id until model-loop acknowledges (it may be down).
    const acknowledged = new Set<string>();
    const starting: Promise<void>[] = [];
    const refusedStarts: string[] = [];
    const startConversation = (id: string, model: string) =>
      starting.push(
        (async () => {
          while (!stopping.signal.aborted) {
            try {
              await call('model-loop.start', {
                tenant: TENANT,
                agent_id: AGENT,
                task: 'Tell Alice I am running ten minutes late.',
                device_id: DEVICE,
                model,
                conversation_id: id,
              });
              acknowledged.add(id);
              return;
            } catch (err) {
              const code = (err as { code?: string }).code;
              if (code !== 'service_unavailable' && code !== 'timeout') {
                refusedStarts.push(`${id}: ${(err as Error).message}`);
                return;
              }
              await pause(100);
            }
          }
        })(),
      );

    let n = 0;
    for (let trial = 0; trial < opts.trials; trial++) {
      opts.signal?.throwIfAborted();
      for (let k = 0; k < perTrial; k++, n++) startConversation(`chaos-${trial}-${k}`, MODELS[n % MODELS.length]!);
      const delay = Math.floor(random() * maxDelay);
      await pause(delay);
      if (replicas > 1) {
        await Promise.all([killLeader('model-loop'), killLeader('audit')]);
        const [m, a] = handovers.slice(-2);
        say(
          `trial ${trial + 1}/${opts.trials}: the leaders of model-loop and audit killed ${delay} ms after the ` +
            `trial's starts; hand-over ${m?.service} ${m?.leaseMs}/${m?.resumedMs} ms, ${a?.service} ` +
            `${a?.leaseMs}/${a?.resumedMs} ms (lease/consumers)`,
        );
        continue;
      }
      await kill9('model-loop');
      await restart('model-loop');
      say(`trial ${trial + 1}/${opts.trials}: model-loop killed ${delay} ms after the trial's starts, and restarted`);
    }
    await Promise.all(starting);
    if (refusedStarts.length > 0) throw new Error(`starts were refused: ${refusedStarts.join('; ')}`);
    say('every start acknowledged');

    // Every conversation completes within the settle time, or it is stuck.
    const ids = [...acknowledged];
    const status = new Map<string, string>();
    const deadline = Date.now() + (opts.settleMs ?? 60_000);
    while (Date.now() < deadline) {
      await Promise.all(
        ids
          .filter((id) => status.get(id) !== 'completed')
          .map(async (id) => {
            const v = await call('model-loop.get', { tenant: TENANT, conversation_id: id }).catch(() => undefined);
            if (v) status.set(id, v.status);
          }),
      );
      if (ids.every((id) => status.get(id) === 'completed')) break;
      await pause(200);
    }
    say(`${ids.filter((id) => status.get(id) === 'completed').length}/${ids.length} conversations completed`);
    stopping.abort();
    await owner;
    // The phone's outcomes reach the log before the verdict reads it.
    await until(
      async () => (await call('device-bridge.devices', { tenant: TENANT }, 10_000)).devices.length === 1,
      10_000,
      'the phone to stay connected',
    );
    const outcome = await verdict(nc, namespace, ids, status, device);
    const miscounted = await usageVerdict(nc, namespace, TENANT, (day) =>
      call('model-loop.tenant.usage', { tenant: TENANT, day }, 10_000),
    );
    const unarchived = replicas > 1 ? await archiveVerdict(nc, pool, namespace) : [];
    if (outcome.problems.length + miscounted.length + unarchived.length > 0) reportServiceWarnings(logDir, say);
    return {
      ...outcome,
      miscounted: miscounted.length,
      problems: [...outcome.problems, ...miscounted, ...unarchived],
      unarchived: unarchived.length,
      handovers,
      seed: opts.seed,
      trials: opts.trials,
    };
  } finally {
    // Each step of the teardown is bounded, so a failure above is reported rather than hidden by a hang here.
    stopping.abort();
    opts.signal?.removeEventListener('abort', killAll);
    await Promise.race([phone?.close().catch(() => undefined), pause(5000)]);
    for (const c of children.values()) {
      c.child.kill('SIGKILL');
      await Promise.race([c.exited, pause(5000)]);
    }
    const jsm = await jetstream(nc).jetstreamManager();
    for (const context of Object.keys(CONTEXTS) as ContextName[]) {
      await Promise.race([jsm.streams.delete(streamName(namespace, context)).catch(() => undefined), pause(5000)]);
    }
    await Promise.race([nc.close(), pause(5000)]);
    await Promise.race([pool.end(), pause(5000)]);
    rmSync(logDir, { recursive: true, force: true });
    rmSync(journal, { recursive: true, force: true });
  }
}

/** Reads both streams from sequence 1 and counts what went wrong. */
async function verdict(
  nc: NatsConnection,
  namespace: string,
  ids: readonly string[],
  status: ReadonlyMap<string, string>,
  device: CountingDevice,
): Promise<Omit<ModelLoopChaosReport, 'seed' | 'trials' | 'miscounted' | 'unarchived' | 'handovers'>> {
  const js = jetstream(nc);
  const problems: string[] = [];
  const requested = new Map<string, number>();
  const byOrigin = new Map<string, Set<string>>();
  const started = new Map<string, number>();
  const final = new Map<string, string>();
  const tools = new Map<string, string>();
  for await (const item of replay(js, {
    stream: streamName(namespace, 'calls'),
    filterSubject: contextFilter(namespace, 'calls'),
  })) {
    if (!item.event) {
      problems.push(`unreadable calls message at ${item.seq}: ${item.error}`);
      continue;
    }
    const e = item.event;
    const callId = e.subject;
    if (e.type === ToolCallEventType.Requested) {
      const d = e.data as CallRequestedV1;
      requested.set(callId, (requested.get(callId) ?? 0) + 1);
      tools.set(callId, d.tool);
      if (d.origin.kind === 'conversation') {
        const key = `${d.origin.conversation_id}/${d.origin.turn}/${d.origin.index}`;
        byOrigin.set(key, (byOrigin.get(key) ?? new Set()).add(callId));
      }
    } else if (e.type === ToolCallEventType.Started) {
      started.set(callId, (started.get(callId) ?? 0) + 1);
    } else if (FINAL_CALL_EVENTS[e.type]) {
      final.set(callId, FINAL_CALL_EVENTS[e.type]!);
    }
  }
  const onLog = new Set<string>();
  const asked = new Map<string, string>(); // call id → conversation
  const lastWord = new Map<string, string>(); // call id → the conversation's latest result status
  for await (const item of replay(js, {
    stream: streamName(namespace, 'conversations'),
    filterSubject: contextFilter(namespace, 'conversations'),
  })) {
    if (!item.event) {
      problems.push(`unreadable conversations message at ${item.seq}: ${item.error}`);
      continue;
    }
    const e = item.event;
    if (e.type === ConversationEventType.Started) onLog.add(e.subject);
    if (e.type !== ConversationEventType.MessageAdded) continue;
    const m = (e.data as MessageAddedV1).message;
    for (const c of m.tool_calls ?? []) asked.set(c.call_id, e.subject);
    if (m.role === 'tool' && m.provenance) lastWord.set(m.provenance.call_id, m.provenance.status);
  }

  const duplicates: string[] = [];
  const lost: string[] = [];
  const mismatched: string[] = [];
  for (const [callId, count] of requested)
    if (count > 1) duplicates.push(`call ${callId} was requested ${count} times`);
  for (const [origin, calls] of byOrigin)
    if (calls.size > 1) duplicates.push(`${origin} was given ${calls.size} call ids: ${[...calls].join(', ')}`);
  for (const [callId, count] of started)
    if (count > 1) duplicates.push(`call ${callId} started ${count} times on the log`);
  for (const [callId, count] of device.runs)
    if (count > 1) duplicates.push(`the phone ran call ${callId} ${count} times`);

  for (const id of ids) if (!onLog.has(id)) lost.push(`conversation ${id} was acknowledged but is not on the log`);
  for (const [callId, conversation] of asked) {
    const word = lastWord.get(callId);
    // A request the loop answered itself (`rejected`) never reaches policy, by design.
    if (word === 'rejected') continue;
    if (!requested.has(callId)) {
      lost.push(`call ${callId} of ${conversation} never reached policy`);
      continue;
    }
    const real = final.get(callId);
    if (real !== undefined && word !== real) {
      mismatched.push(`${conversation} was told ${word ?? 'nothing'} for call ${callId}, whose outcome is ${real}`);
    }
  }
  // The phone's own record against the log: it ran exactly the device calls that won their start claim.
  for (const [callId, tool] of tools) {
    if (!tool.startsWith('device.') || device.runs.has(callId) === started.has(callId)) continue;
    mismatched.push(
      `call ${callId}: the phone ${device.runs.has(callId) ? 'ran' : 'did not run'} it, the log says it ` +
        (started.has(callId) ? 'started' : 'never started'),
    );
  }
  const stuck = ids
    .filter((id) => status.get(id) !== 'completed')
    .map((id) => `conversation ${id} is still ${status.get(id) ?? 'unreadable'}`);
  problems.push(...duplicates, ...lost, ...stuck, ...mismatched);
  return {
    conversations: ids.length,
    toolCalls: requested.size,
    duplicates: duplicates.length,
    lost: lost.length,
    stuck: stuck.length,
    mismatched: mismatched.length,
    problems,
  };
}

/**
 * Audit's archive against the log, once every archive projection has caught up: each stream's events, by id, are
 * exactly the archived ones (none missing, none extra; the archive's unique id rules out an event archived twice).
 */
async function archiveVerdict(nc: NatsConnection, pool: pg.Pool, namespace: string): Promise<string[]> {
  const js = jetstream(nc);
  const jsm = await js.jetstreamManager();
  const contexts = Object.keys(CONTEXTS) as ContextName[];
  const archived = async (stream: string) =>
    (
      await pool.query<{ n: number }>(`select count(distinct seq)::int as n from audit.events where stream = $1`, [
        stream,
      ])
    ).rows[0]!.n;
  const problems: string[] = [];
  try {
    await until(
      async () => {
        for (const context of contexts) {
          const stream = streamName(namespace, context);
          const info = await jsm.streams.info(stream).catch(() => undefined);
          if ((info?.state.messages ?? 0) !== (await archived(stream))) return false;
        }
        return true;
      },
      60_000,
      "audit's archive to hold every message",
    );
  } catch {
    // Counted below, stream by stream.
  }
  for (const context of contexts) {
    const stream = streamName(namespace, context);
    if (!(await jsm.streams.info(stream).catch(() => undefined))) continue;
    const onLog = new Set<string>();
    for await (const item of replay(js, { stream, filterSubject: contextFilter(namespace, context) })) {
      if (item.event) onLog.add(item.event.id);
    }
    const { rows } = await pool.query<{ id: string }>(`select id from audit.events where stream = $1`, [stream]);
    const inArchive = new Set(rows.map((r) => r.id));
    for (const id of onLog) if (!inArchive.has(id)) problems.push(`event ${id} of ${stream} is not archived`);
    for (const id of inArchive) if (!onLog.has(id)) problems.push(`archived event ${id} is not in ${stream}`);
  }
  return problems;
}

/**
 * A failed verdict is read with the services' own account of the run: their warnings and errors (the services log at
 * `warn`), at most the last 30 lines of each log, go to the progress output.
 */
function reportServiceWarnings(logDir: string, say: (line: string) => void): void {
  for (const file of readdirSync(logDir).sort()) {
    const lines = readFileSync(join(logDir, file), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('{'));
    if (lines.length === 0) continue;
    say(`${file}: ${lines.length} warning or error lines, the last ${Math.min(lines.length, 30)}:`);
    for (const line of lines.slice(-30)) say(`  ${line.slice(0, 600)}`);
  }
}

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await pause(100);
  }
}

/** Waits `ms`; the timer never keeps the process alive on its own (teardown races use it too). */
const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
