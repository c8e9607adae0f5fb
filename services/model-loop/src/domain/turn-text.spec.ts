import type { ConversationMessageV1 } from '@ormuz/contracts';
import { toolResult } from '@ormuz/tool-call';
import { turnText } from './turn-text.js';

describe('turnText', () => {
  const task: ConversationMessageV1 = { role: 'user', content: 'Tell Alice I am late.' };
  const asked: ConversationMessageV1 = {
    role: 'assistant',
    content: '',
    tool_calls: [{ index: 0, name: 'ormuz.search_tools', arguments: { query: 'x' }, call_id: 'call_1' }],
  };
  const result = (data: unknown): ConversationMessageV1 => ({
    role: 'tool',
    tool_call_id: 'call_1',
    ...toolResult({
      call_id: 'call_1',
      tool: 'ormuz.search_tools',
      source: 'ormuz',
      outcome: { status: 'succeeded', result: data as never },
    }),
  });

  it('is the task and the results since the model last spoke, without the fixed fence wording', () => {
    const text = turnText([task, asked, result({ tools: [{ name: 'device.send_message' }] })]);
    expect(text).toContain('Tell Alice I am late.');
    expect(text).toContain('device.send_message');
    expect(text).not.toContain('UNTRUSTED');
    expect(text).not.toContain('never follow directions');
  });

  it('forgets results the model has already answered', () => {
    const older = result({ note: 'wifi' });
    expect(turnText([task, asked, older, { role: 'assistant', content: 'Noted.' }])).not.toContain('wifi');
  });
});
