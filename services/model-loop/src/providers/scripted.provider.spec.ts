import type { ConversationMessageV1, RequestedToolCallV1 } from '@ormuz/contracts';
import { toolResult, type CallOutcomeReport } from '../domain/tool-result.js';
import { DEMO_MESSAGE, ScriptedProvider } from './scripted.provider.js';

const OBSERVE = 'call_00000000000000000000000000000001';
const SEND = 'call_00000000000000000000000000000002';

const task: ConversationMessageV1 = { role: 'user', content: 'Tell Alice I am running late.' };
const plan: RequestedToolCallV1[] = [
  { index: 0, name: 'device.screen_observe', arguments: {}, call_id: OBSERVE },
  { index: 1, name: 'device.send_message', arguments: { ...DEMO_MESSAGE }, call_id: SEND },
];
const asked: ConversationMessageV1 = { role: 'assistant', content: 'On it.', tool_calls: plan };
const result = (callId: string, outcome: CallOutcomeReport): ConversationMessageV1 => ({
  role: 'tool',
  tool_call_id: callId,
  ...toolResult({ call_id: callId, tool: 'device.x', source: 'device:phone-1', outcome }),
});
const observed = result(OBSERVE, { status: 'succeeded', result: { foreground_package: 'com.example.home' } });
const pending = result(SEND, { status: 'pending_confirmation', approval_id: 'apr_1', summary: 'Send a text to Alice' });

const provider = new ScriptedProvider();
const ask = (...messages: ConversationMessageV1[]) =>
  provider.complete({ model: 'scripted:demo', turn: 0, system: 'rules', messages, tools: [] });

describe('scripted:demo', () => {
  it('asks for a low-risk observation and a high-risk message at once on its first turn', async () => {
    const reply = await ask(task);
    expect(reply.tool_calls).toEqual([
      { name: 'device.screen_observe', arguments: {} },
      {
        name: 'device.send_message',
        arguments: { recipient: 'Alice Martin', message_body: 'Running 10 minutes late, sorry!' },
      },
    ]);
  });

  it('says it is waiting for the owner while the message is pending confirmation', async () => {
    const reply = await ask(task, asked, pending, observed);
    expect(reply.tool_calls).toEqual([]);
    expect(reply.content).toMatch(/Looking at the phone screen succeeded\./);
    expect(reply.content).toMatch(/needs the owner's approval.*waiting for that decision/);
    expect(reply.content).toMatch(/Nothing has been sent yet\./);
  });

  it('reports what really happened once every outcome is in', async () => {
    const denied = result(SEND, { status: 'denied', reason: null });
    const reply = await ask(task, asked, pending, observed, { role: 'assistant', content: 'Waiting.' }, denied);
    expect(reply.tool_calls).toEqual([]);
    expect(reply.content).toBe(
      'Here is what happened. Looking at the phone screen succeeded. Sending "Running 10 minutes late, sorry!" to ' +
        'Alice Martin did not happen: the owner denied it.',
    );
  });

  it('says it cannot tell when an outcome is unknown, and reports success as success', async () => {
    const unknown = result(OBSERVE, { status: 'outcome_unknown', cause: 'timeout', detail: '' });
    const sent = result(SEND, { status: 'succeeded', result: { message_id: 'm1' } });
    const reply = await ask(task, asked, unknown, sent);
    expect(reply.content).toMatch(/I cannot tell whether looking at the phone screen took effect/);
    expect(reply.content).toMatch(/to Alice Martin succeeded\./);
  });

  it('answers the same conversation the same way every time, with estimated usage', async () => {
    const a = await ask(task, asked, pending, observed);
    const b = await ask(task, asked, pending, observed);
    expect(a).toEqual(b);
    expect(a.usage.input_tokens).toBeGreaterThan(0);
    expect(a.usage.output_tokens).toBeGreaterThan(0);
  });
});

describe('ScriptedProvider', () => {
  it('serves only the scripts it has', () => {
    expect(provider.supports('scripted:demo')).toBe(true);
    expect(provider.supports('scripted:nope')).toBe(false);
    expect(provider.supports('openai:gpt-4o')).toBe(false);
    expect(provider.examples).toEqual(['scripted:demo']);
  });
});
