/**
 * kill -9 under load, as an operator would do it: the five services run as processes with four simulated phones
 * connected; a burst of calls is submitted through policy, and the bridge, policy and audit are each killed with
 * SIGKILL in the middle of it and started again. Submits that failed while policy was down are sent again with the same
 * operation id (which observes the original when it had been recorded). Afterwards every call has reached a final
 * state, policy's and the bridge's read models hold every call, the audit archive holds every event of every stream,
 * and `ormuz projections status` shows nothing behind and nothing parked. Then a corrupt message is parked, shown and
 * retried.
 */
import { jest } from '@jest/globals';
import { jetstream } from '@nats-io/jetstream';
import { sql, type RawBuilder } from 'kysely';
import { CONTEXTS, type ContextName, type SubmitCallReplyV1, type SubmitCallRequestV1 } from '@ormuz/contracts';
import { streamName, type ConsumerStatus } from '@ormuz/event-log';
import { waitFor, testToken } from '@ormuz/testing';
import { exitWithin, ROOT, spawnTracked } from './support/processes.js';
import { startPlatform, type Platform } from './support/platform.js';
import { join } from 'node:path';

jest.setTimeout(240_000);

/** Calls in the burst; `ORMUZ_KILL_E2E_CALLS` raises it for a longer run by hand. */
const CALLS = Number(process.env.ORMUZ_KILL_E2E_CALLS ?? 400);
const FINAL = ['succeeded', 'failed', 'sealed', 'outcome_unknown', 'refused', 'denied', 'expired'];

describe('kill -9 of the bridge, policy and audit during a burst of calls', () => {
  let platform: Platform;
  const count = async (query: RawBuilder<unknown>) => ((await query.execute(platform.db)).rows[0] as { n: number }).n;

  const consumers = async () => {
    const r = await platform.ormuz('projections', 'status');
    return (r.json as { services: { service: string; consumers: ConsumerStatus[] | null }[] }).services;
  };

  beforeAll(async () => {
    platform = await startPlatform({ devices: ['phone-1', 'phone-2', 'phone-3', 'phone-4'] });
  }, 120_000);
  afterAll(() => platform?.close(), 60_000);

  it('brings every call to a final state and archives every event', async () => {
    const submit = async (i: number): Promise<SubmitCallReplyV1> => {
      const body: SubmitCallRequestV1 = {
        tenant: platform.tenant,
        agent_id: 'burst',
        tool: 'device.screen_observe',
        arguments: {},
        origin: { kind: 'operation', operation_id: `burst-${i}` },
        device_id: platform.devices[i % platform.devices.length]!,
        correlation_id: `burst-${i}`,
      };
      // Policy may be down or restarting: send again with the same operation id until it answers.
      for (;;) {
        try {
          return await platform.call('policy.submit', body, 5_000);
        } catch (err) {
          if ((err as { code?: string }).code !== 'service_unavailable') throw err;
        }
      }
    };
    const replies: SubmitCallReplyV1[] = [];
    const kills: Promise<void>[] = [];
    const killAt = new Map<number, 'device-bridge' | 'policy' | 'audit'>([
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
          if (victim) kills.push(platform.kill9(victim).then(() => platform.start(victim)));
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
        }>`select status, count(*)::int as n from policy.call_status group by status`.execute(platform.db)
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
    const unknown = await count(
      sql`select count(*)::int as n from policy.call_status where status = 'outcome_unknown'`,
    );
    expect(await count(sql`select count(*)::int as n from device_bridge.executions`)).toBe(CALLS);

    // The archive holds every message of every stream (each with all its events: one decision's events are one
    // message, archived in one transaction), and a call record for every call.
    await waitFor(
      async () => {
        for (const context of Object.keys(CONTEXTS) as ContextName[]) {
          const stream = streamName(platform.namespace, context);
          const info = await platform.jsm.streams.info(stream).catch(() => undefined);
          const archived = await count(
            sql`select count(distinct seq)::int as n from audit.events where stream = ${stream}`,
          );
          if ((info?.state.messages ?? 0) !== archived) return false;
        }
        return (await count(sql`select count(*)::int as n from audit.call_records`)) === CALLS;
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
    // The figures for an operator's eye (and the closing note of a longer run): read-model rows against the log.
    const calls = streamName(platform.namespace, 'calls');
    const figures = {
      calls: CALLS,
      messages_in_calls_stream: (await platform.jsm.streams.info(calls)).state.messages,
      audit_events_of_calls: await count(sql`select count(*)::int as n from audit.events where stream = ${calls}`),
      policy_call_status: await count(sql`select count(*)::int as n from policy.call_status`),
      bridge_executions: await count(sql`select count(*)::int as n from device_bridge.executions`),
      audit_call_records: await count(sql`select count(*)::int as n from audit.call_records`),
      outcome_unknown: unknown,
    };
    process.stdout.write(`kill -9 e2e: ${JSON.stringify(figures)}\n`);
  });

  it('shows a parked message in `projections status` and keeps it parked when a retry fails again', async () => {
    // A message no consumer can read, written straight to a calls subject (as a broken writer could).
    const subject = `${platform.namespace}.calls.${platform.tenant}.call.call_${'f'.repeat(32)}`;
    const ack = await jetstream(platform.nc).publish(subject, '{"not": "an event"');
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

    const human = spawnTracked(
      process.execPath,
      [join(ROOT, 'tools/cli/bin/ormuz.js'), '--namespace', platform.namespace, 'projections', 'status'],
      { ORMUZ_TOKEN: await testToken({ tenant: '*', roles: ['admin'], subject: 'ops@platform' }) },
    );
    const { code } = await exitWithin(human, 20_000, 'ormuz projections status');
    expect(code).toBe(3);
    expect(human.stdout()).toMatch(/policy_call_status .* parked 1\n\s+oldest parked: seq \d+/);

    const retry = await platform.ormuz('projections', 'retry', 'policy_call_status');
    expect(retry.code).toBe(3);
    expect(retry.json).toMatchObject({ name: 'policy_call_status', retried: 0, rebuilt: true, still_parked: [{ seq: ack.seq }] });

    const unknown = await platform.ormuz('projections', 'retry', 'no_such_projection');
    expect(unknown.code).toBe(1);
    expect((unknown.json as { error: { message: string } }).error.message).toMatch(
      /No running service holds no_such_projection\. Known: .*policy_call_status/,
    );
  });
});
