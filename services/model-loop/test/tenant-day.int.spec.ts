// A tenant's daily limits over all its conversations: two replicas of model-loop, two conversations racing into the
// day's last model turns, real NATS and Postgres.
import type { NatsConnection } from '@nats-io/transport-node';
import type { ConversationMessageV1, ConversationViewV1, RpcName, RpcRequestOf } from '@ormuz/contracts';
import { connectNats, EventStore } from '@ormuz/event-log';
import { callRpc, type RunningService } from '@ormuz/service-kit';
import { adminFor, testEnv, waitFor } from '@ormuz/testing';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { isTenantDaySpentError } from '../src/domain/errors.js';
import { LARGE_MODEL } from '../src/domain/model-provider.js';
import { spentBound, utcDay, type TenantDayState } from '../src/domain/tenant-day.js';
import { TenantDays } from '../src/persistence/tenant-days.js';
import { SCRIPTS, ScriptedProvider } from '../src/providers/scripted.provider.js';
import { TestPlatform } from './platform.fixture.js';

const TIMEOUT = 60_000;

/** Searches the tool directory once per turn, ten times, then answers: a conversation of eleven model turns. */
function searcher(messages: readonly ConversationMessageV1[]) {
  const searches = messages.filter((m) => m.role === 'assistant' && (m.tool_calls?.length ?? 0) > 0).length;
  if (searches >= 10) return { content: 'I searched ten times.', tool_calls: [] };
  return { content: '', tool_calls: [{ name: 'ormuz.search_tools', arguments: { query: `tool ${searches}` } }] };
}

describe("a tenant's day, bounded over all its conversations", () => {
  const platform = new TestPlatform();
  const namespace = platform.namespace;
  const tenant = 'acme';
  const provider = () => new ScriptedProvider({ ...SCRIPTS, searcher: { script: searcher, profile: LARGE_MODEL } });
  const replicas: RunningService[] = [];
  let nc: NatsConnection;

  const rpc = <N extends RpcName>(name: N, body: NoInfer<RpcRequestOf<N>>) =>
    adminFor(body).then((credential) => callRpc(nc, namespace, name, body, { credential, checkReply: true }));
  const start = (agent_id: string) =>
    rpc('model-loop.start', {
      tenant,
      agent_id,
      task: 'Search the directory.',
      device_id: null,
      model: 'scripted:searcher',
    });
  const completed = (conversationId: string) =>
    waitFor(
      async () => {
        const v = await rpc('model-loop.get', { tenant, conversation_id: conversationId });
        return v.status === 'completed' && v;
      },
      { message: `conversation ${conversationId} to complete`, timeoutMs: 30_000 },
    );
  const replyTokens = (v: ConversationViewV1) => v.usage.tokens;

  beforeAll(async () => {
    await platform.open('tenant-day-test');
    nc = platform.nc;
    await rpc('policy.grants.set', { tenant, agent_id: 'agent-1', allow: ['ormuz'] });
    await rpc('policy.grants.set', { tenant, agent_id: 'agent-2', allow: ['ormuz'] });
    // Two replicas: one leads the consumers, both serve the commands.
    replicas.push(await platform.startLoop({ modelProviders: [provider()] }));
    replicas.push(await platform.startLoop({ modelProviders: [provider()] }));
  }, TIMEOUT);

  afterAll(async () => {
    await replicas[1]?.close();
    await platform.close(replicas[0]);
  }, TIMEOUT);

  it('shows limits from the defaults, sets the tenant’s own, and removes one again', async () => {
    const shown = await rpc('model-loop.tenant.limits.get', { tenant });
    expect(shown).toMatchObject({ tenant, limits: {}, own: {}, defaults: {}, updated_by: null });
    const set = await rpc('model-loop.tenant.limits.set', { tenant, day_steps: 5, day_tokens: 1_000_000 });
    expect(set).toMatchObject({ limits: { day_steps: 5, day_tokens: 1_000_000 }, updated_by: expect.any(String) });
    const cleared = await rpc('model-loop.tenant.limits.set', { tenant, day_tokens: null });
    expect(cleared.limits).toEqual({ day_steps: 5 });
    expect(cleared.own).toEqual({ day_steps: 5 });
  });

  it(
    'two conversations racing into the day’s last turns take exactly the day’s turns; the one that finds none ' +
      'stops as tenant_day_steps, and new conversations are refused until the limit moves',
    async () => {
      const [a, b] = await Promise.all([start('agent-1'), start('agent-2')]);
      const views = await Promise.all([completed(a.conversation_id), completed(b.conversation_id)]);

      // Eleven turns each were wanted; the day allowed five in all, each claimed once.
      expect(views[0]!.usage.steps + views[1]!.usage.steps).toBe(5);
      for (const v of views) {
        expect(v.completion_reason).toBe('tenant_day_steps');
        expect(v.bound).toEqual({ bound: 'tenant_day_steps', limit: 5, used: 5 });
        expect(v.final_text).toMatch(/no further model turn fits tenant acme's daily limit .*5 of 5 model turns used/);
      }
      const day = utcDay(new Date());
      const usage = await waitFor(
        async () => {
          const u = await rpc('model-loop.tenant.usage', { tenant });
          return u.usage.tokens === replyTokens(views[0]!) + replyTokens(views[1]!) && u;
        },
        { message: "the tenant's day to hold both conversations' tokens", timeoutMs: 10_000 },
      );
      expect(usage).toMatchObject({
        tenant,
        day,
        usage: { steps: 5, tool_calls: views[0]!.usage.tool_calls + views[1]!.usage.tool_calls, cost_usd: 0 },
        limits: { day_steps: 5 },
        spent: { bound: 'tenant_day_steps', limit: 5, used: 5 },
      });

      await expect(start('agent-1')).rejects.toMatchObject({
        code: 'tenant_day_spent',
        message: expect.stringMatching(/acme has reached its daily limit on \d{4}-\d{2}-\d{2} \(UTC\).*00:00 UTC/),
      });

      // Raised mid-day, the limit reopens the day at once: the next start runs until the new limit.
      await rpc('model-loop.tenant.limits.set', { tenant, day_steps: 7 });
      const c = await completed((await start('agent-1')).conversation_id);
      expect(c.usage.steps).toBe(2);
      expect(c.completion_reason).toBe('tenant_day_steps');
    },
    TIMEOUT,
  );

  it(
    "refuses a reply's tool calls once they would pass the day's, running none of them",
    async () => {
      const other = 'globex';
      await rpc('policy.grants.set', { tenant: other, agent_id: 'agent-1', allow: ['ormuz'] });
      await rpc('model-loop.tenant.limits.set', { tenant: other, day_tool_calls: 2 });
      const started = await rpc('model-loop.start', {
        tenant: other,
        agent_id: 'agent-1',
        task: 'Search the directory.',
        device_id: null,
        model: 'scripted:searcher',
      });
      const v = await waitFor(
        async () => {
          const got = await rpc('model-loop.get', { tenant: other, conversation_id: started.conversation_id });
          return got.status === 'completed' && got;
        },
        { message: 'the conversation to complete', timeoutMs: 30_000 },
      );
      expect(v.completion_reason).toBe('tenant_day_tool_calls');
      expect(v.bound).toEqual({ bound: 'tenant_day_tool_calls', limit: 2, used: 2 });
      expect(v.usage.steps).toBe(3);
      // The third reply's request was recorded, never handed to policy: it has no result.
      const asked = v.messages.flatMap((m) => m.tool_calls ?? []);
      expect(asked).toHaveLength(3);
      expect(v.messages.filter((m) => m.role === 'tool')).toHaveLength(2);
      const usage = await rpc('model-loop.tenant.usage', { tenant: other });
      expect(usage.usage).toMatchObject({ steps: 3, tool_calls: 2 });
    },
    TIMEOUT,
  );

  it(
    'claims from two connections at once on one day: exactly the limit are granted, each decided against the ' +
      'expected sequence',
    async () => {
      const day = '2030-06-01';
      const limits = { day_steps: 8 };
      const second = await connectNats({ url: testEnv().natsUrl, name: 'tenant-day-second' });
      try {
        const days = [
          new TenantDays(platform.store, namespace),
          new TenantDays(new EventStore(jetstream(second), await jetstreamManager(second)), namespace),
        ];
        const cause = { correlationid: 'race', causationid: 'race' };
        const outcomes = await Promise.allSettled(
          Array.from({ length: 20 }, (_, i) =>
            days[i % 2]!.execute(
              'racer',
              day,
              {
                type: 'ClaimStep',
                data: { tenant: 'racer', day, conversation_id: `conv_${i}`, turn: 0, limits },
              },
              cause,
            ),
          ),
        );
        const granted = outcomes.filter((o) => o.status === 'fulfilled');
        const refused = outcomes.filter((o) => o.status === 'rejected');
        expect(granted).toHaveLength(8);
        expect(refused).toHaveLength(12);
        for (const r of refused) expect(isTenantDaySpentError((r as PromiseRejectedResult).reason)).toBe(true);
        const { state } = await days[0]!.load('racer', day);
        expect((state as TenantDayState).steps).toBe(8);
        expect(spentBound(state, limits)).toEqual({ bound: 'tenant_day_steps', limit: 8, used: 8 });
        // The day as its events fold, read whole from the log, is the state the claims were decided on.
        expect((await days[1]!.read('racer', day)).state).toEqual(state);
      } finally {
        await second.close();
      }
    },
    TIMEOUT,
  );
});
