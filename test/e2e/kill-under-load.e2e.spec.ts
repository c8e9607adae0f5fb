/**
 * kill -9 under load, as an operator would do it: the five services run as processes with four simulated phones
 * connected; a burst of calls is submitted through policy, and the bridge, policy and audit are each killed with
 * SIGKILL in the middle of it and started again. Submits that failed while policy was down are sent again with the same
 * operation id (which observes the original when it had been recorded). Afterwards every call has reached a final
 * state, policy's and the bridge's read models hold every call, the audit archive holds every event of every stream,
 * and `ormuz projections status` shows nothing behind and nothing parked. Then a corrupt message is parked, shown and
 * retried.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { sql, type Kysely } from 'kysely';
import { CONTEXTS, type ContextName, type SubmitCallReplyV1 } from '@ormuz/contracts';
import { runSimulatedDevice, type SimulatedDeviceHandle } from '@ormuz/device-sdk';
import { streamName, type ConsumerStatus } from '@ormuz/event-log';
import { openDatabase } from '@ormuz/postgres';
import { callService } from '@ormuz/service-kit';
import { createTestDatabase, freePort, randomNamespace, testEnv, waitFor, type TestDatabase } from '@ormuz/testing';
import {
  SERVICES,
  spawnService,
  stopAll,
  tailLog,
  waitHealthy,
  type ServiceName,
  type ServiceProcess,
} from '../../tools/cli/src/services.js';
import { exitWithin, killAll, ROOT, spawnTracked } from './support/processes.js';

jest.setTimeout(240_000);

const TENANT = 'acme';
const DEVICES = ['phone-1', 'phone-2', 'phone-3', 'phone-4'];
/** Calls in the burst; `ORMUZ_KILL_E2E_CALLS` raises it for a longer run by hand. */
const CALLS = Number(process.env.ORMUZ_KILL_E2E_CALLS ?? 400);
const FINAL = ['succeeded', 'failed', 'sealed', 'outcome_unknown', 'refused', 'denied', 'expired'];

describe('kill -9 of the bridge, policy and audit during a burst of calls', () => {
  const { natsUrl } = testEnv();
  const namespace = randomNamespace('k');
  const logDir = mkdtempSync(join(tmpdir(), 'ormuz-kill-e2e-logs-'));
  const journals = mkdtempSync(join(tmpdir(), 'ormuz-kill-e2e-journals-'));
  let database: TestDatabase;
  let db: Kysely<any>;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let env: NodeJS.ProcessEnv;
  const running = new Map<ServiceName, ServiceProcess>();
  const phones: SimulatedDeviceHandle[] = [];

  const start = async (service: ServiceName) => {
    const proc = spawnService(service, env, logDir);
    running.set(service, proc);
    try {
      await waitHealthy(nc, namespace, [proc], 40_000);
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${tailLog(proc, 30)}`);
    }
  };

  const kill9 = async (service: ServiceName) => {
    const proc = running.get(service)!;
    proc.child.kill('SIGKILL');
    await waitFor(() => proc.exited, { timeoutMs: 10_000, message: `${service} to die` });
  };

  async function ormuz(
    ...args: string[]
  ): Promise<{ code: number | null; json: unknown; stdout: string; stderr: string }> {
    const t = spawnTracked(process.execPath, [
      join(ROOT, 'tools/cli/bin/ormuz.js'),
      '--json',
      '--nats',
      natsUrl,
      '--namespace',
      namespace,
      ...args,
    ]);
    const { code } = await exitWithin(t, 20_000, `ormuz ${args.join(' ')}`);
    let json: unknown;
    try {
      json = JSON.parse(t.stdout());
    } catch {
      json = undefined;
    }
    return { code, json, stdout: t.stdout(), stderr: t.stderr() };
  }

  const consumers = async () => {
    const r = await ormuz('projections', 'status');
    return (r.json as { services: { service: string; consumers: ConsumerStatus[] | null }[] }).services;
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await openDatabase({ url: database.url });
    nc = await connect({ servers: natsUrl, name: 'ormuz-kill-e2e' });
    jsm = await jetstreamManager(nc);
    env = {
      NATS_URL: natsUrl,
      DATABASE_URL: database.url,
      ORMUZ_NAMESPACE: namespace,
      APPROVALS_PORT: '0',
      // A fixed port, so that the phones find the bridge again after it restarts.
      DEVICE_BRIDGE_PORT: String(await freePort()),
      DEVICE_TOKENS: DEVICES.map((d) => `${TENANT}:${d}:kill-e2e-${d}`).join(','),
      LOG_LEVEL: 'info',
    };
    for (const s of SERVICES) await start(s);
    const url = `ws://127.0.0.1:${env.DEVICE_BRIDGE_PORT}`;
    const health = await waitHealthy(nc, namespace, [...running.values()]);
    const devicesUrl = health['device-bridge']?.endpoints.devices ?? url;
    for (const d of DEVICES) {
      phones.push(
        runSimulatedDevice({
          url: devicesUrl,
          tenant: TENANT,
          deviceId: d,
          token: `kill-e2e-${d}`,
          journalDir: mkdtempSync(join(journals, `${d}-`)),
          backoff: { initialDelayMs: 50, maxDelayMs: 500 },
        }),
      );
    }
    await waitFor(
      async () => {
        const r = await callService<{ devices: { device_id: string }[] }>(
          nc,
          namespace,
          'device-bridge',
          'devices',
          { tenant: TENANT },
          2000,
        );
        return r.devices.length === DEVICES.length;
      },
      { timeoutMs: 20_000, message: 'the four phones to connect' },
    );
  }, 120_000);

  afterAll(async () => {
    await Promise.all(phones.map((p) => p.close().catch(() => undefined)));
    await stopAll([...running.values()], 5_000);
    for (const p of running.values()) if (!p.exited) p.child.kill('SIGKILL');
    await killAll();
    for (const context of Object.keys(CONTEXTS) as ContextName[]) {
      await jsm.streams.delete(streamName(namespace, context)).catch(() => undefined);
    }
    await nc.close();
    await db.destroy();
    await database.drop();
    rmSync(logDir, { recursive: true, force: true });
    rmSync(journals, { recursive: true, force: true });
  }, 60_000);

  it('brings every call to a final state and archives every event', async () => {
    const submit = async (i: number): Promise<SubmitCallReplyV1> => {
      const body = {
        tenant: TENANT,
        agent_id: 'burst',
        tool: 'device.screen_observe',
        arguments: {},
        origin: { kind: 'operation', operation_id: `burst-${i}` },
        device_id: DEVICES[i % DEVICES.length],
        correlation_id: `burst-${i}`,
      };
      // Policy may be down or restarting: send again with the same operation id until it answers.
      for (;;) {
        try {
          return await callService<SubmitCallReplyV1>(nc, namespace, 'policy', 'submit', body, 5_000);
        } catch (err) {
          if ((err as { code?: string }).code !== 'service_unavailable') throw err;
        }
      }
    };
    const replies: SubmitCallReplyV1[] = [];
    const kills: Promise<void>[] = [];
    const killAt = new Map<number, ServiceName>([
      [Math.floor(CALLS * 0.25), 'device-bridge'],
      [Math.floor(CALLS * 0.5), 'policy'],
      [Math.floor(CALLS * 0.75), 'audit'],
    ]);
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < CALLS) {
          const i = next++;
          const victim = killAt.get(i);
          if (victim) kills.push(kill9(victim).then(() => start(victim)));
          replies.push(await submit(i));
        }
      }),
    );
    await Promise.all(kills);
    expect(replies).toHaveLength(CALLS);
    expect(new Set(replies.map((r) => r.call_id)).size).toBe(CALLS);
    expect(replies.every((r) => r.status !== 'refused')).toBe(true);

    // Every call reaches a final state: the phones reconnect to the restarted bridge and drain what was waiting.
    const statuses = async () =>
      (
        await sql<{
          status: string;
          n: number;
        }>`select status, count(*)::int as n from policy.call_status group by status`.execute(db)
      ).rows;
    await waitFor(
      async () => {
        const rows = await statuses();
        return rows.reduce((n, r) => n + (FINAL.includes(r.status) ? r.n : 0), 0) === CALLS;
      },
      {
        timeoutMs: 120_000,
        intervalMs: 250,
        message: `all ${CALLS} calls in a final state (${JSON.stringify(await statuses())})`,
      },
    );
    const unknown = await sql<{
      n: number;
    }>`select count(*)::int as n from policy.call_status where status = 'outcome_unknown'`.execute(db);
    const executions = await sql<{ n: number }>`select count(*)::int as n from device_bridge.executions`.execute(db);
    expect(executions.rows[0]!.n).toBe(CALLS);

    // The archive holds every event of every stream, and a call record for every call.
    await waitFor(
      async () => {
        for (const context of Object.keys(CONTEXTS) as ContextName[]) {
          const stream = streamName(namespace, context);
          const info = await jsm.streams.info(stream).catch(() => undefined);
          const archived = await sql<{
            n: number;
          }>`select count(*)::int as n from audit.events where stream = ${stream}`.execute(db);
          if ((info?.state.messages ?? 0) !== archived.rows[0]!.n) return false;
        }
        const records = await sql<{ n: number }>`select count(*)::int as n from audit.call_records`.execute(db);
        return records.rows[0]!.n === CALLS;
      },
      { timeoutMs: 60_000, intervalMs: 250, message: 'the audit archive to hold every event and every call' },
    );

    // Nothing behind, nothing parked, everywhere.
    await waitFor(
      async () =>
        (await consumers()).every(
          (s) => s.consumers !== null && s.consumers.every((c) => c.lag === 0 && c.parked === 0),
        ),
      { timeoutMs: 30_000, intervalMs: 250, message: 'every consumer caught up with nothing parked' },
    );
    process.stdout.write(`kill -9 e2e: ${CALLS} calls, ${unknown.rows[0]!.n} outcome_unknown\n`);
  });

  it('shows a parked message in `projections status` and keeps it parked when a retry fails again', async () => {
    // A message no consumer can read, written straight to a calls subject (as a broken writer could).
    const subject = `${namespace}.calls.${TENANT}.call.call_${'f'.repeat(32)}`;
    const ack = await (await import('@nats-io/jetstream')).jetstream(nc).publish(subject, '{"not": "an event"');
    await waitFor(
      async () =>
        (await consumers()).find((s) => s.service === 'policy')?.consumers?.find((c) => c.name === 'policy_call_status')
          ?.parked === 1,
      { timeoutMs: 20_000, message: 'policy_call_status to park the corrupt message' },
    );
    const policy = (await consumers())
      .find((s) => s.service === 'policy')!
      .consumers!.find((c) => c.name === 'policy_call_status')!;
    expect(policy.oldest_parked).toMatchObject({ seq: ack.seq, subject });
    expect(policy.oldest_parked!.error).toMatch(/cannot be read: not JSON/);
    expect(policy.lag).toBe(0);

    const human = spawnTracked(process.execPath, [
      join(ROOT, 'tools/cli/bin/ormuz.js'),
      '--nats',
      natsUrl,
      '--namespace',
      namespace,
      'projections',
      'status',
    ]);
    const { code } = await exitWithin(human, 20_000, 'ormuz projections status');
    expect(code).toBe(3);
    expect(human.stdout()).toMatch(/policy_call_status .* parked 1\n\s+oldest parked: seq \d+/);

    const retry = await ormuz('projections', 'retry', 'policy_call_status');
    expect(retry.code).toBe(3);
    expect(retry.json).toMatchObject({ name: 'policy_call_status', retried: 0, still_parked: [{ seq: ack.seq }] });

    const unknown = await ormuz('projections', 'retry', 'no_such_projection');
    expect(unknown.code).toBe(1);
    expect((unknown.json as { error: { message: string } }).error.message).toMatch(
      /No running service holds no_such_projection\. Known: .*policy_call_status/,
    );
  });
});
