import type { ConversationViewV1 } from '@ormuz/contracts';
import { exitCodeOf, renderStep, RunSteps } from './run-steps.js';

const task = { turn: 0, role: 'user', content: 'Tell Alice I am late' } as const;
const asks = {
  turn: 0,
  role: 'assistant',
  content: 'I will text Alice.',
  tool_calls: [{ index: 0, call_id: 'call_1', name: 'device.send_message', arguments: { recipient: 'Alice' } }],
} as const;
const staged = {
  turn: 0,
  role: 'tool',
  content: '{"status":"pending_confirmation"}',
  tool_call_id: 'call_1',
  provenance: {
    source: 'ormuz',
    call_id: 'call_1',
    tool: 'device.send_message',
    status: 'pending_confirmation',
    truncated: false,
    approval: { approval_id: 'apr_1', summary: 'Send a text message to Alice' },
  },
} as const;
const view = (over: Partial<ConversationViewV1>): ConversationViewV1 => ({
  conversation_id: 'conv_1',
  status: 'running',
  model: 'scripted:demo',
  messages: [task],
  pending: [],
  final_text: null,
  completion_reason: null,
  bound: null,
  usage: { steps: 0, tool_calls: 0, tokens: 0, cost_usd: null },
  ...over,
});

describe('RunSteps', () => {
  it('yields each message once, the approval right after the result that staged it, and the end with its exit code', () => {
    const steps = new RunSteps('http://127.0.0.1:8081/console');
    expect(steps.next(view({}))).toEqual([]);
    expect(steps.next(view({ messages: [task, asks] })).map((s) => s.step)).toEqual(['model']);
    const pending = { call_id: 'call_1', approval_id: 'apr_1', summary: 'Send a text message to Alice' };
    const paused = view({ status: 'paused', messages: [task, asks, staged], pending: [pending] });
    const out = steps.next(paused);
    expect(out.map((s) => s.step)).toEqual(['tool_result', 'pending_approval', 'end']);
    expect(out[1]).toMatchObject({ console_url: 'http://127.0.0.1:8081/console#/calls/call_1' });
    expect(out[2]).toMatchObject({ status: 'paused', exit_code: 2 });
    // Read again: nothing new but the end.
    expect(steps.next(paused).map((s) => s.step)).toEqual(['end']);
  });

  it('names the approval from the pending list when it comes before the result, and no console link without one', () => {
    const steps = new RunSteps(null);
    const pending = { call_id: 'call_1', approval_id: 'apr_1', summary: 'Send a text message to Alice' };
    expect(steps.next(view({ messages: [task, asks], pending: [pending] }))).toMatchObject([
      { step: 'model' },
      { step: 'pending_approval', console_url: null },
    ]);
    expect(steps.next(view({ messages: [task, asks, staged], pending: [pending] })).map((s) => s.step)).toEqual([
      'tool_result',
    ]);
  });
});

describe('exitCodeOf', () => {
  it('is 0 answered, 2 paused, 3 failed, 4 for every bound', () => {
    expect(exitCodeOf({ status: 'completed', completion_reason: 'answered' })).toBe(0);
    expect(exitCodeOf({ status: 'paused', completion_reason: null })).toBe(2);
    expect(exitCodeOf({ status: 'completed', completion_reason: 'failed' })).toBe(3);
    for (const bound of ['step_limit', 'tool_limit', 'time_limit', 'token_limit', 'cost_limit'] as const)
      expect(exitCodeOf({ status: 'completed', completion_reason: bound })).toBe(4);
  });
});

describe('renderStep', () => {
  it('says where to decide a staged call', () => {
    expect(
      renderStep({
        step: 'pending_approval',
        call_id: 'c',
        approval_id: 'apr_1',
        summary: 'Send it',
        console_url: null,
      }),
    ).toBe('  waiting for the owner: Send it\n  approval apr_1: ormuz approvals approve apr_1');
  });
});
