import type { ConversationMessageV1 } from '@ormuz/contracts';
import { checkToolRequests } from './tool-requests.js';
import { shownName, transcriptTurns } from './transcript.js';

const CALL = 'call_00000000000000000000000000000001';
const tool = (status: string, id = CALL): ConversationMessageV1 => ({
  role: 'tool',
  content: `{"status":"${status}"}`,
  tool_call_id: id,
  provenance: {
    source: 'ormuz',
    call_id: id,
    tool: 'device.tap',
    status: status as 'succeeded',
    truncated: false,
    approval: null,
  },
});

describe('transcriptTurns', () => {
  it('pairs results with the calls just before them, marks errors, and turns a late result into user text', () => {
    const turns = transcriptTurns(
      [
        { role: 'user', content: 'Go.' },
        {
          role: 'assistant',
          content: '',
          tool_calls: [{ index: 0, name: 'device.tap', arguments: {}, call_id: CALL }],
        },
        tool('pending_confirmation'),
        { role: 'assistant', content: 'Waiting.' },
        tool('refused'),
      ],
      true,
    );
    expect(turns).toEqual([
      { kind: 'user', text: 'Go.' },
      { kind: 'assistant', text: '', calls: [{ id: CALL, name: 'device__tap', arguments: {} }] },
      { kind: 'results', results: [{ id: CALL, content: '{"status":"pending_confirmation"}', error: false }] },
      { kind: 'assistant', text: 'Waiting.', calls: [] },
      { kind: 'user', text: expect.stringContaining(`later result for your earlier call ${CALL} (device.tap)`) },
    ]);
  });

  it('gives a call without a recorded result a placeholder, so the API sees every call answered', () => {
    const turns = transcriptTurns(
      [
        {
          role: 'assistant',
          content: 'x',
          tool_calls: [{ index: 0, name: 'device.tap', arguments: {}, call_id: CALL }],
        },
      ],
      false,
    );
    expect(turns[1]).toEqual({ kind: 'results', results: [{ id: CALL, content: expect.any(String), error: true }] });
  });

  it('shows names as the model was offered them', () => {
    expect(shownName('device.tap', true)).toBe('device__tap');
    expect(shownName('device.tap', false)).toBe('device.tap');
    expect(shownName('device__tap', true)).toBe('device__tap');
    expect(shownName('rm -rf /', true)).toBe('rm_-rf__');
  });
});

describe('checkToolRequests', () => {
  const request = { tools: [{ name: 'device__tap', description: '', parameters: {} }], directory: [] };

  it('keeps valid requests as they are and never reads unparsable arguments as {}', () => {
    expect(
      checkToolRequests(
        [
          { name: 'device__tap', arguments: '{"ref":"e1"}' },
          { name: 'device__tap', arguments: '[1]' },
          { name: 'device__tap', arguments: '' },
          { name: 'device__tap', arguments: { ref: 'e2' } },
        ],
        request,
        16,
        false,
      ),
    ).toEqual([
      { name: 'device__tap', arguments: { ref: 'e1' } },
      {
        name: 'device__tap',
        arguments: { unparsed_arguments: '[1]' },
        invalid: expect.stringMatching(/not a JSON object/),
      },
      {
        name: 'device__tap',
        arguments: { unparsed_arguments: '' },
        invalid: expect.stringMatching(/not a JSON object/),
      },
      { name: 'device__tap', arguments: { ref: 'e2' } },
    ]);
  });

  it('cuts a name too long to record and marks it', () => {
    const [call] = checkToolRequests([{ name: 'x'.repeat(300), arguments: '{}' }], request, 16, false);
    expect(call!.name).toHaveLength(200);
    expect(call!.invalid).toMatch(/was offered/);
  });
});
