// model-loop with policy, driven by a real HTTP adapter (openai-compatible:, streaming) against a local server that
// speaks Chat Completions: what the model asks for is gated by policy, unusable requests are answered without
// reaching policy, names are encoded for the API and recorded canonical, and a model that keeps failing ends the
// conversation with the reason on record.
import type { NatsConnection } from '@nats-io/transport-node';
import {
  aggregateSubject,
  assertValid,
  ConversationEventType as E,
  liveConversationSubject,
  MODEL_LOOP_TEXT_DELTA_V1,
  type LiveTextDeltaV1,
  type ConversationViewV1,
  type MessageAddedV1,
  type RpcName,
  type RpcRequestOf,
} from '@ormuz/contracts';
import { streamName } from '@ormuz/event-log';
import { callRpc, type RunningService } from '@ormuz/service-kit';
import { adminFor, OpenAiChatServer, waitFor } from '@ormuz/testing';
import { OpenAiChatProvider } from '../src/index.js';
import { TestPlatform } from './platform.fixture.js';

const TIMEOUT = 30_000;
const KEY = 'sk-local-5b0e1f6c2d9a4e7b8c3f0a1d2e3b4c5d';

describe('model-loop with a real model adapter', () => {
  const platform = new TestPlatform();
  const namespace = platform.namespace;
  const tenant = 'acme';
  let server: OpenAiChatServer;
  let loop: RunningService;
  let nc: NatsConnection;

  const rpc = <N extends RpcName>(name: N, body: NoInfer<RpcRequestOf<N>>) =>
    adminFor(body).then((credential) => callRpc(nc, namespace, name, body, { credential, checkReply: true }));
  const viewWhen = (conversationId: string, ready: (v: ConversationViewV1) => boolean, message: string) =>
    waitFor(
      async () => {
        const v = await rpc('model-loop.get', { tenant, conversation_id: conversationId });
        return ready(v) && v;
      },
      { message, timeoutMs: 15_000 },
    );
  /** The assistant messages of a conversation as recorded on the log: turn, stop reason, usage. */
  const replies = async (id: string) => {
    const out: Pick<MessageAddedV1, 'turn' | 'stop_reason' | 'usage'>[] = [];
    for await (const { event } of platform.store.readSubject(
      streamName(namespace, 'conversations'),
      aggregateSubject(namespace, 'conversations', tenant, id),
    )) {
      if (event.type !== E.MessageAdded) continue;
      const data = event.data as MessageAddedV1;
      if (data.message.role === 'assistant')
        out.push({ turn: data.turn, stop_reason: data.stop_reason, usage: data.usage });
    }
    return out;
  };
  const start = (task: string, model = 'openai-compatible:local-llm') =>
    rpc('model-loop.start', {
      tenant,
      agent_id: 'agent-1',
      task,
      device_id: 'phone-1',
      model,
    });

  beforeAll(async () => {
    server = await new OpenAiChatServer(KEY).start();
    await platform.open('model-loop-real-model-test');
    nc = platform.nc;
    const provider = new OpenAiChatProvider(
      {
        prefix: 'openai-compatible:',
        examples: [],
        baseUrl: server.baseUrl,
        apiKeyEnv: 'LOCAL_LLM_KEY',
        http: { timeoutMs: 5000, attempts: 2, baseDelayMs: 1, maxDelayMs: 20 },
        maxToolCallsPerTurn: 16,
        maxOutputTokens: 512,
        maxTokensField: 'max_tokens',
        stream: true,
        profile: { tier: 'large', schemaBudgetTokens: 100_000, encodeToolNames: true },
      },
      { LOCAL_LLM_KEY: KEY },
    );
    // Every conversation may spend $1: local-llm costs nothing, pricey-llm 10 cents a token, other-llm has no price.
    loop = await platform.startLoop(
      { modelProviders: [provider] },
      {
        MODEL_LOOP_MAX_COST_USD: '1',
        MODEL_LOOP_MODEL_PRICES: JSON.stringify({
          'openai-compatible:local-llm': { input: 0, output: 0 },
          'openai-compatible:pricey-llm': { input: 100_000, output: 100_000 },
        }),
      },
    );
    await rpc('policy.grants.set', { tenant, agent_id: 'agent-1', allow: ['ormuz', 'device'] });
  }, TIMEOUT);

  afterAll(async () => {
    await platform.close(loop);
    await server.close();
  }, TIMEOUT);

  it(
    'gates a valid request, answers unusable ones itself, and shows the model every result in a body the API accepts',
    async () => {
      server.script(
        { kind: 'error', status: 500, message: 'The server had an error while processing your request.' },
        {
          kind: 'reply',
          text: 'I will text Alice.',
          tool_calls: [
            { name: 'device__send_message', arguments: { recipient: 'Alice Martin', message_body: 'Running late!' } },
            { name: 'device__send_message', arguments: '{not json' },
            { name: 'device__format_disk', arguments: {} },
          ],
          usage: { input: 900, output: 60 },
        },
        {
          kind: 'reply',
          text: 'The message to Alice is waiting for your approval.',
          usage: { input: 1200, output: 15 },
        },
      );
      const { conversation_id: id } = await start('Tell Alice I am running late.');
      const paused = await viewWhen(id, (v) => v.status === 'paused', 'the conversation to wait for the owner');

      // Recorded canonical: the encoded names the API used were decoded.
      const calls = paused.messages.flatMap((m) => m.tool_calls ?? []);
      expect(calls.map((c) => c.name)).toEqual(['device.send_message', 'device.send_message', 'device.format_disk']);
      const [send, garbled, unknown] = calls;
      expect(garbled!.arguments).toEqual({ unparsed_arguments: '{not json' });

      // The valid request went to policy's gate and was staged for the owner.
      const staged = await rpc('policy.status', { tenant, call_id: send!.call_id });
      expect(staged.status.status).toBe('staged');
      // The unusable ones never reached policy; the model was told why.
      for (const call of [garbled!, unknown!]) {
        await expect(rpc('policy.status', { tenant, call_id: call.call_id })).rejects.toMatchObject({
          code: 'call_not_found',
        });
        const result = paused.messages.find((m) => m.tool_call_id === call.call_id)!;
        expect(result.provenance).toMatchObject({ source: 'ormuz', status: 'rejected' });
      }
      expect(paused.messages.find((m) => m.tool_call_id === garbled!.call_id)!.content).toMatch(/not a JSON object/);
      expect(paused.messages.find((m) => m.tool_call_id === unknown!.call_id)!.content).toMatch(/was offered/);

      // What the API was sent: encoded offers, and on turn 1 one tool message per call (the server refuses otherwise).
      const [, first, second] = server.requests.map(
        (r) =>
          r.body as { tools: { function: { name: string } }[]; messages: { role: string; tool_call_id?: string }[] },
      );
      expect(first!.tools.map((t) => t.function.name)).toContain('device__send_message');
      expect(first!.tools.every((t) => !t.function.name.includes('.'))).toBe(true);
      expect(second!.messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id)).toEqual(
        calls.map((c) => c.call_id),
      );
      // Each reply is recorded with its stop reason and the usage the API reported.
      expect(await replies(id)).toEqual([
        { turn: 0, stop_reason: 'tool_use', usage: { input_tokens: 900, output_tokens: 60 } },
        { turn: 1, stop_reason: 'end_turn', usage: { input_tokens: 1200, output_tokens: 15 } },
      ]);
      expect(paused.messages.at(-1)).toMatchObject({
        role: 'assistant',
        content: 'The message to Alice is waiting for your approval.',
      });
    },
    TIMEOUT,
  );

  it(
    'ends the conversation as failed, with the last status and message, when the model keeps failing',
    async () => {
      server.script(
        ...Array.from({ length: 6 }, () => ({
          kind: 'error' as const,
          status: 503,
          message: 'The engine is currently overloaded.',
        })),
      );
      const { conversation_id: id } = await start('Anything.');
      const done = await viewWhen(id, (v) => v.status === 'completed', 'the conversation to fail');
      expect(done.completion_reason).toBe('failed');
      expect(done.final_text).toMatch(/did not answer after 3 attempts .*HTTP 503 .*currently overloaded/);
      expect(done.final_text).not.toContain(KEY);
    },
    TIMEOUT,
  );

  it(
    'asks again after an empty reply, and records why when the model only ever answers with nothing',
    async () => {
      server.script({ kind: 'reply', text: '' }, { kind: 'reply', text: 'Done: nothing to do.' });
      const { conversation_id: id } = await start('Say something.');
      const done = await viewWhen(id, (v) => v.status === 'completed', 'the conversation to complete');
      expect(done).toMatchObject({ completion_reason: 'answered', final_text: 'Done: nothing to do.' });

      server.script({ kind: 'reply', text: '' }, { kind: 'reply', text: '' }, { kind: 'reply', text: '' });
      const { conversation_id: silent } = await start('Say nothing.');
      const failed = await viewWhen(silent, (v) => v.status === 'completed', 'the conversation to fail');
      expect(failed.completion_reason).toBe('failed');
      expect(failed.final_text).toMatch(/empty reply/);
    },
    TIMEOUT,
  );

  it(
    'records a content-filter stop with a sentence in place of the withheld text',
    async () => {
      server.script({ kind: 'reply', text: '', stop: 'content_filter' });
      const { conversation_id: id } = await start('Something the filter withholds.');
      const done = await viewWhen(id, (v) => v.status === 'completed', 'the conversation to complete');
      expect(done.final_text).toMatch(/withheld by its provider's content filter/);
      expect((await replies(id)).map((r) => r.stop_reason)).toEqual(['content_filter']);
    },
    TIMEOUT,
  );

  it(
    'publishes the text of a streamed reply on the live subject while it arrives, each try from its start',
    async () => {
      const id = `conv_live_${Date.now().toString(36)}`;
      const frames: LiveTextDeltaV1[] = [];
      const sub = nc.subscribe(liveConversationSubject(namespace, tenant, id), {
        callback: (err, msg) => {
          if (!err) frames.push(assertValid<LiveTextDeltaV1>(MODEL_LOOP_TEXT_DELTA_V1, msg.json()));
        },
      });
      await nc.flush();
      const text = 'Alice has three unread messages; none is urgent.';
      let finish!: () => void;
      const held = new Promise<void>((resolve) => (finish = resolve));
      // The first try breaks off after the role and two pieces; the transport's second try holds after three.
      server.script(
        { kind: 'reply', text: 'Alice has three', cutAfter: 3 },
        { kind: 'reply', text, holdAfter: { events: 4, until: held } },
      );
      try {
        await rpc('model-loop.start', {
          tenant,
          agent_id: 'agent-1',
          task: 'Anything urgent from Alice?',
          device_id: 'phone-1',
          model: 'openai-compatible:local-llm',
          conversation_id: id,
        });
        await waitFor(() => frames.some((f) => f.try === 2 && f.seq === 2), {
          message: "the second try's first three pieces on the live subject",
          timeoutMs: 15_000,
        });
        // Heard while the model is still writing: nothing is recorded yet.
        expect(await replies(id)).toEqual([]);
        finish();
        const done = await viewWhen(id, (v) => v.status === 'completed', 'the conversation to complete');
        expect(done.final_text).toBe(text);
        const first = frames.filter((f) => f.try === 1);
        const second = frames.filter((f) => f.try === 2);
        expect(frames.every((f) => f.turn === 0 && f.attempt === 1)).toBe(true);
        // The broken try's pieces, as far as they got through before the connection closed, are its own take.
        expect(first.map((f) => f.seq)).toEqual(first.map((_, i) => i));
        expect('Alice has three'.startsWith(first.map((f) => f.text).join(''))).toBe(true);
        expect(second.map((f) => f.seq)).toEqual(second.map((_, i) => i));
        expect(second.map((f) => f.text).join('')).toBe(text);
      } finally {
        sub.unsubscribe();
      }
    },
    TIMEOUT,
  );
  it(
    'stops at the cost bound, priced from the table, and shows which bound with its figures',
    async () => {
      // Each turn: 4 input and 2 output tokens at 10 cents a token, 60 cents; the second turn passes $1.
      const observe = (ref: string) => ({
        kind: 'reply' as const,
        tool_calls: [{ name: 'ormuz__search_tools', arguments: { query: ref } }],
        usage: { input: 4, output: 2 },
      });
      server.script(observe('a'), observe('b'), { kind: 'reply', text: 'Never asked.' });
      const { conversation_id: id } = await start('Look around, twice.', 'openai-compatible:pricey-llm');
      const done = await viewWhen(id, (v) => v.status === 'completed', 'the conversation to stop at its cost bound');
      expect(done).toMatchObject({
        completion_reason: 'cost_limit',
        bound: { bound: 'cost', limit: 1 },
        usage: { steps: 2, tool_calls: 2, tokens: 12 },
      });
      expect(done.bound!.used).toBeCloseTo(1.2, 10);
      expect(done.usage.cost_usd).toBeCloseTo(1.2, 10);
      expect(done.final_text).toMatch(/spending \$1\.20 on the model \(this conversation allows \$1\.00\)/);
      expect((await replies(id)).map((r) => r.usage)).toEqual([
        { input_tokens: 4, output_tokens: 2 },
        { input_tokens: 4, output_tokens: 2 },
      ]);
    },
    TIMEOUT,
  );

  it(
    'refuses to start a conversation on a model with no price while a cost bound is set, and records nothing',
    async () => {
      const messages = async () =>
        (await platform.jsm.streams.info(streamName(namespace, 'conversations'))).state.messages;
      const before = await messages();
      const refused = await start('Anything.', 'openai-compatible:other-llm').catch((err: unknown) => err);
      expect(refused).toMatchObject({ code: 'model_unpriced' });
      expect((refused as Error).message).toMatch(/no price for "openai-compatible:other-llm".*MODEL_LOOP_MODEL_PRICES/);
      expect(await messages()).toBe(before);
    },
    TIMEOUT,
  );
});
