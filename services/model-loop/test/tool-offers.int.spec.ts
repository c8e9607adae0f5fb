import type { NatsConnection } from '@nats-io/transport-node';
import { canonicalFromProviderName } from '@ormuz/catalog';
import {
  aggregateSubject,
  ToolCallEventType as T,
  type ConversationMessageV1,
  type ConversationViewV1,
  type CallTimelineEntryV1,
  type RpcName,
  type RpcRequestOf,
} from '@ormuz/contracts';
import { streamName, type EventStore } from '@ormuz/event-log';
import { callRpc, type RunningService, type ToolCalls } from '@ormuz/service-kit';
import { waitFor, adminFor } from '@ormuz/testing';
import {
  DIRECTORY_QUERY,
  LARGE_MODEL,
  ScriptedProvider,
  SCRIPTS,
  type ModelRequest,
  type Script,
} from '../src/index.js';
import { TestPlatform } from './platform.fixture.js';

const TIMEOUT = 30_000;

/** A timeline entry as `policy.status` answers it; the data of every tool-call event is an object. */
type TimelineEntry = CallTimelineEntryV1 & { readonly data: Record<string, unknown> };

/** The runtime's first line of a tool message. */
const head = (m: ConversationMessageV1) => JSON.parse(m.content.split('\n', 1)[0]!) as Record<string, unknown>;
/** The fenced data of a tool message. */
const fenced = (m: ConversationMessageV1) => {
  const lines = m.content.split('\n');
  return JSON.parse(lines[lines.findIndex((l) => l.startsWith('<<<BEGIN')) + 1]!) as Record<string, unknown>;
};
const canonical = (name: string) => canonicalFromProviderName(name) ?? name;

/** A large model that calls a tool its agent was denied, then reports what it was told. */
const callsDeniedTool: Script = (messages) => {
  const result = messages.find((m) => m.role === 'tool');
  if (!result) {
    return {
      content: 'Turning wifi off.',
      tool_calls: [{ name: 'device.toggle_setting', arguments: { setting: 'wifi', desired_state: 'off' } }],
    };
  }
  return { content: `The runtime said: ${String(head(result).status)}.`, tool_calls: [] };
};

/** A large model that observes the screen and, when the result was cut, reads the next part with ormuz.read_more. */
const readsMore: Script = (messages) => {
  const results = messages.filter((m) => m.role === 'tool');
  if (results.length === 0) return { content: '', tool_calls: [{ name: 'device.screen_observe', arguments: {} }] };
  const last = head(results.at(-1)!);
  if (results.length === 1 && last.partial === true) {
    return {
      content: '',
      tool_calls: [{ name: 'ormuz.read_more', arguments: { continuation: String(last.continuation) } }],
    };
  }
  return { content: `Done reading (${String(last.status)}).`, tool_calls: [] };
};

describe('tools offered to the model, and the platform tools model-loop runs', () => {
  const platform = new TestPlatform();
  const namespace = platform.namespace;
  const tenant = 'acme';
  const provider = new ScriptedProvider({
    ...SCRIPTS,
    'denied-tool': { script: callsDeniedTool, profile: LARGE_MODEL },
    'reads-more': { script: readsMore, profile: LARGE_MODEL },
  });
  let loop: RunningService;
  let nc: NatsConnection;
  let store: EventStore;
  /** The test plays the device-bridge and the owner, appending through the tool-call decider. */
  let bridge: ToolCalls;
  let owner: ToolCalls;

  const rpc = <N extends RpcName>(name: N, body: NoInfer<RpcRequestOf<N>>) =>
    adminFor(body).then((credential) => callRpc(nc, namespace, name, body, { credential, checkReply: true }));
  const start = (body: Omit<RpcRequestOf<'model-loop.start'>, 'tenant' | 'device_id'>) =>
    rpc('model-loop.start', { tenant, device_id: 'phone-1', ...body });
  const viewWhen = (conversationId: string, ready: (v: ConversationViewV1) => boolean, message: string) =>
    waitFor(
      async () => {
        const v = await rpc('model-loop.get', { tenant, conversation_id: conversationId });
        return ready(v) && v;
      },
      { message, timeoutMs: 15_000 },
    );
  const timeline = async (callId: string) =>
    (
      await rpc('policy.status', {
        tenant,
        call_id: callId,
        timeline: true,
      })
    ).timeline as readonly TimelineEntry[];
  const offeredTo = async (agentId: string) =>
    (await rpc('policy.tools', { tenant, agent_id: agentId })).tools.map((t) => t.name);
  const requestsOf = (conversationId: string): ModelRequest[] =>
    provider.received.filter((r) => r.conversation_id === conversationId);
  const callsOf = (v: ConversationViewV1) => v.messages.flatMap((m) => m.tool_calls ?? []);
  const resultOf = (v: ConversationViewV1, callId: string) => v.messages.findLast((m) => m.tool_call_id === callId)!;

  beforeAll(async () => {
    await platform.open('model-loop-tools-test');
    ({ nc, store, bridge, owner } = platform);
    loop = await platform.startLoop({ modelProviders: [provider] });
  }, TIMEOUT);

  afterAll(() => platform.close(loop), TIMEOUT);

  it(
    'offers a large model exactly the tools the agent is granted, and refuses a denied one called anyway',
    async () => {
      await rpc('policy.grants.set', {
        tenant,
        agent_id: 'agent-large',
        allow: ['ormuz', 'device'],
        deny: ['device.toggle_setting'],
      });
      const granted = await offeredTo('agent-large');
      expect(granted).toContain('device.tap');
      expect(granted).not.toContain('device.toggle_setting');

      const { conversation_id: id } = await start({
        agent_id: 'agent-large',
        task: 'Turn the wifi off.',
        model: 'scripted:denied-tool',
      });
      const done = await viewWhen(id, (v) => v.status === 'completed', 'the conversation to complete');

      // What the model saw: every granted tool in full, by its canonical name, and nothing else.
      const [first] = requestsOf(id);
      expect(first!.tools.map((t) => t.name).sort()).toEqual([...granted].sort());
      expect(first!.directory).toEqual([]);
      const tap = first!.tools.find((t) => t.name === 'device.tap')!;
      expect(tap.parameters).toMatchObject({ type: 'object', properties: { ref: expect.any(Object) } });

      // Called anyway: refused at the gate as not permitted, and the model is told so.
      const [call] = callsOf(done);
      expect(call).toMatchObject({ name: 'device.toggle_setting' });
      const refusal = resultOf(done, call!.call_id);
      expect(refusal.provenance).toMatchObject({ source: 'ormuz', status: 'refused' });
      expect(head(refusal).message).toMatch(/device\.toggle_setting is not permitted in this conversation/);
      const events = await timeline(call!.call_id);
      expect(events.map((e) => e.type)).toEqual([T.Requested, T.Refused]);
      expect(events[1]!.data).toMatchObject({ reason_code: 'not_offered' });
      expect(done.final_text).toBe('The runtime said: refused.');
    },
    TIMEOUT,
  );

  it(
    'fits a small model, which searches, activates and calls its tool while model-loop runs the core tools on the log',
    async () => {
      // Granted the device extension alone: the platform's own tools come with every grant (decision 0019).
      await rpc('policy.grants.set', { tenant, agent_id: 'agent-small', allow: ['device'] });
      const offered = await offeredTo('agent-small');
      expect(offered).toEqual(expect.arrayContaining(['ormuz.search_tools', 'ormuz.activate_tool']));
      const { conversation_id: id } = await start({
        agent_id: 'agent-small',
        task: 'Let Alice know I am running late; observe the screen first if you need to.',
        model: 'scripted:directory',
        pinned_tools: ['device.list_contacts'],
      });
      const paused = await viewWhen(id, (v) => v.status === 'paused', 'the conversation to wait for the owner');
      const requests = requestsOf(id);

      // Turn 0: core tools, the relevant tool and the pinned one in full, encoded; every other tool by name only.
      const full = requests[0]!.tools.map((t) => canonical(t.name));
      expect(requests[0]!.tools.every((t) => !t.name.includes('.'))).toBe(true);
      expect(full).toEqual(
        expect.arrayContaining([
          'ormuz.search_tools',
          'ormuz.activate_tool',
          'ormuz.read_more',
          'ormuz.check_call_status',
          'device.screen_observe',
          'device.list_contacts',
        ]),
      );
      expect(full).not.toContain('device.send_message');
      const directory = requests[0]!.directory.map(canonical);
      expect(directory).toContain('device.send_message');
      expect([...full, ...directory].sort()).toEqual([...offered].sort());
      expect(requests[0]!.system).toMatch(/listed by name only.*device__send_message.*ormuz__search_tools/s);

      // The model searched, activated, sent (staged for the owner) and checked; names were recorded canonical.
      const [search, activate, send, check] = callsOf(paused);
      expect([search, activate, send, check].map((c) => c?.name)).toEqual([
        'ormuz.search_tools',
        'ormuz.activate_tool',
        'device.send_message',
        'ormuz.check_call_status',
      ]);
      expect(search!.arguments).toEqual({ query: DIRECTORY_QUERY });
      expect(fenced(resultOf(paused, search!.call_id)).tools).toEqual(
        expect.arrayContaining([expect.objectContaining({ name: 'device.send_message' })]),
      );
      expect(fenced(resultOf(paused, activate!.call_id))).toMatchObject({
        tool_name: 'device.send_message',
        parameters: { properties: { recipient: expect.any(Object) } },
      });
      expect(resultOf(paused, send!.call_id).provenance?.status).toBe('pending_confirmation');
      expect(fenced(resultOf(paused, check!.call_id))).toMatchObject({
        call_id: send!.call_id,
        status: 'pending_confirmation',
      });
      expect(head(resultOf(paused, check!.call_id)).message).toMatch(/waits for the owner's approval/);

      // From the turn after the activation on, the activated tool is offered in full.
      for (const r of requests.slice(2)) expect(r.tools.map((t) => t.name)).toContain('device__send_message');
      const log: string[] = [];
      for await (const { event } of store.readSubject(
        streamName(namespace, 'conversations'),
        aggregateSubject(namespace, 'conversations', tenant, id),
      )) {
        log.push(event.type);
      }
      expect(log).toContain('ormuz.conversation.tool_activated.v1');

      // Each core call ran on the platform: dispatched to model-loop, started and succeeded by it, on the call's log.
      // Policy gave it no device target although the session has a phone, and its one request is named by its id.
      for (const call of [search!, activate!, check!]) {
        const events = await timeline(call.call_id);
        expect(events.map((e) => e.type)).toEqual([T.Requested, T.Authorized, T.Dispatched, T.Started, T.Succeeded]);
        expect(events[0]!.data.target).toBeNull();
        expect(events[1]!.source).toBe('/ormuz/policy');
        expect(events[2]!.data.executor).toEqual({ kind: 'platform', service: 'model-loop' });
        expect(events[2]!.data.request_id).toBe(call.call_id);
        for (const e of events.slice(2)) expect(e.source).toBe('/ormuz/model-loop');
      }
      // Checking the status acted on nothing: the staged call is still just staged.
      const staged = await timeline(send!.call_id);
      expect(staged.map((e) => e.type)).toEqual([T.Requested, T.Staged]);

      // The owner's decision is the activated tool's final outcome; the model reports it and the loop ends.
      await owner.execute(
        tenant,
        send!.call_id,
        {
          type: 'DenyCall',
          data: {
            call_id: send!.call_id,
            approval_id: String(staged[1]!.data.approval_id),
            decided_by: 'owner-1',
            reason: null,
          },
        },
        { correlationid: id, causationid: 'test-owner' },
      );
      const done = await viewWhen(id, (v) => v.status === 'completed', 'the conversation to complete');
      expect(done.final_text).toMatch(/Alice Martin did not happen: the owner denied it\./);
    },
    TIMEOUT,
  );

  it(
    'reads the rest of a cut result with ormuz.read_more, from the call log, within the size bound',
    async () => {
      const { conversation_id: id } = await start({
        agent_id: 'agent-1',
        task: 'Read it all.',
        model: 'scripted:reads-more',
      });
      const asked = await viewWhen(id, (v) => callsOf(v).length === 1, 'the observation to be requested');
      const observe = callsOf(asked)[0]!.call_id;
      await waitFor(async () => (await timeline(observe)).some((e) => e.type === T.Authorized), {
        message: 'the observation to be authorised',
      });
      const elements = Array.from({ length: 400 }, (_, i) => ({ ref: `e${i}`, text: `Élément numéro ${i}` }));
      const cause = { correlationid: id, causationid: 'test-bridge' };
      const deadline = new Date(Date.now() + 60_000).toISOString();
      for (const command of [
        {
          type: 'DispatchCall',
          data: { call_id: observe, request_id: 'req-1', executor: { kind: 'device', device_id: 'phone-1' }, deadline },
        },
        {
          type: 'ClaimStart',
          data: { call_id: observe, request_id: 'req-1', executor_id: 'phone-1', boot_id: 'boot-1' },
        },
        {
          type: 'RecordOutcome',
          data: { call_id: observe, request_id: 'req-1', outcome: { kind: 'succeeded', result: { elements } } },
        },
      ] as const) {
        await bridge.execute(tenant, observe, command, cause);
      }

      const done = await viewWhen(id, (v) => v.status === 'completed', 'the conversation to complete');
      const [, readMore] = callsOf(done);
      const cut = head(resultOf(done, observe));
      expect(cut).toMatchObject({ partial: true, truncated: true, continuation: expect.stringMatching(/^v1:call_/) });
      expect(readMore).toMatchObject({ name: 'ormuz.read_more', arguments: { continuation: cut.continuation } });
      const next = resultOf(done, readMore!.call_id);
      expect(next.provenance).toMatchObject({ source: 'ormuz', status: 'succeeded', truncated: false });
      const part = fenced(next) as { content: string; partial: boolean; continuation?: string };
      const whole = JSON.stringify({ elements });
      const shown = Number(/^v1:call_[0-9a-f]+:(\d+)$/.exec(cut.continuation as string)![1]);
      expect(whole.slice(shown, shown + part.content.length)).toBe(part.content);
      expect(part.content.length).toBeGreaterThan(0);
      expect(part.partial).toBe(shown + part.content.length < whole.length);
      expect(done.final_text).toBe('Done reading (succeeded).');
    },
    TIMEOUT,
  );
});
