import { liveTextFrame as frame } from '@ormuz/testing';
import { RunPrinter } from './run-printer.js';
import type { RunStep } from './run-steps.js';

const started: RunStep = {
  step: 'started',
  conversation_id: 'conv_1',
  model: 'openai:gpt-4o',
  agent_id: 'a1',
  device_id: null,
};
const reply = (text: string, turn = 0, tools: string[] = []): RunStep => ({
  step: 'model',
  turn,
  text,
  tool_requests: tools.map((call_id) => ({ call_id, tool: 'device.screen_observe', arguments: {} })),
});
const result = (call_id: string): RunStep => ({
  step: 'tool_result',
  turn: 0,
  call_id,
  tool: 'device.screen_observe',
  status: 'succeeded',
  content: '{}',
});

/** A printer writing into a string, as the terminal would show it. */
function printer(json = false) {
  let out = '';
  return { p: new RunPrinter(json, (text) => (out += text)), out: () => out };
}

describe('RunPrinter, text', () => {
  it('writes the text as it comes and ends the line with the rest of the recorded reply, printing it once', () => {
    const { p, out } = printer();
    p.steps([started]);
    p.frame(frame(0, 'Hello'));
    expect(out()).toMatch(/\nmodel: Hello$/);
    p.frame(frame(1, ', Al'));
    p.steps([reply('Hello, Alice.')]);
    expect(out().split('\n').slice(1)).toEqual(['model: Hello, Alice.', '']);
  });

  it('prints a reply without live text as before: a model that does not stream', () => {
    const { p, out } = printer();
    p.steps([started, reply('Hello, Alice.', 0, ['call_1']), result('call_1')]);
    expect(out().split('\n').slice(1)).toEqual([
      'model: Hello, Alice.',
      'model asks device.screen_observe {} → call call_1',
      '  device.screen_observe (call_1): succeeded',
      '',
    ]);
  });

  it('prints the recorded reply in full when the live text is not how it begins: the recorded reply wins', () => {
    const { p, out } = printer();
    p.steps([started]);
    p.frame(frame(0, 'Hello'));
    p.frame(frame(2, 'Bob')); // seq 1 was lost; nothing past the gap is printed
    p.steps([reply('Goodbye, Alice.')]);
    expect(out().split('\n').slice(1)).toEqual(['model: Hello', 'model: Goodbye, Alice.', '']);
  });

  it('never prints a frame that comes late, out of order or twice past what it shows', () => {
    const { p, out } = printer();
    p.steps([started]);
    p.frame(frame(1, 'lo'));
    p.frame(frame(0, 'Hel'));
    p.frame(frame(0, 'Hel'));
    p.frame(frame(1, 'lo'));
    p.steps([reply('Hello')]);
    p.frame(frame(2, ' late'));
    p.steps([{ step: 'end', status: 'completed', completion_reason: 'answered', final_text: 'Hello', exit_code: 0 }]);
    expect(out().split('\n').slice(1)).toEqual(['model: Hello', 'answer: Hello', '']);
  });

  it('waits with the text of the next turn until the results of the last reply are printed', () => {
    const { p, out } = printer();
    p.steps([started, reply('Looking.', 0, ['call_1'])]);
    p.frame(frame(0, 'The screen', { turn: 1 }));
    expect(out()).not.toContain('The screen');
    p.steps([result('call_1')]);
    expect(out()).toMatch(/succeeded\nmodel: The screen$/);
  });

  it('waits with text heard before the run printed that it started', () => {
    const { p, out } = printer();
    p.frame(frame(0, 'Early'));
    expect(out()).toBe('');
    p.steps([started]);
    expect(out()).toMatch(/started: .*\nmodel: Early$/);
  });

  it('says when the reply started over, and the recorded reply still ends the new line', () => {
    const { p, out } = printer();
    p.steps([started]);
    p.frame(frame(0, 'Hello wo'));
    p.frame(frame(0, 'Hi', { try: 2 }));
    p.steps([reply('Hi there')]);
    expect(out().split('\n').slice(1)).toEqual([
      'model: Hello wo [the model started its reply over]',
      'model: Hi there',
      '',
    ]);
  });
});

describe('RunPrinter, --json', () => {
  const lines = (text: string) =>
    text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);

  it('prints text_delta steps as the text comes, then the model step with the whole recorded text', () => {
    const { p, out } = printer(true);
    p.steps([started]);
    p.frame(frame(1, 'lo'));
    p.frame(frame(0, 'Hel'));
    p.frame(frame(2, 'Bob')); // not how the reply goes on: the model step has the recorded text
    p.frame(frame(0, 'Hi', { try: 2 }));
    p.steps([reply('Hi there')]);
    expect(lines(out()).slice(1)).toEqual([
      { step: 'text_delta', turn: 0, restart: false, text: 'Hello' },
      { step: 'text_delta', turn: 0, restart: false, text: 'Bob' },
      { step: 'text_delta', turn: 0, restart: true, text: 'Hi' },
      { step: 'model', turn: 0, text: 'Hi there', tool_requests: [] },
    ]);
  });
});
