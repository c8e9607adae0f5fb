// The Responses adapter against a local server that speaks the wire format (libs/testing's OpenAiResponsesServer).
import { OpenAiResponsesServer } from '@ormuz/testing';
import { OpenAiResponsesProvider, type ProviderSettings } from '../../src/index.js';
import { CALL_SEND, CALL_TAP, ENV, HISTORY, KEY, retryLog, settings, turn, http } from './provider.fixture.js';

const MODEL = 'openai-responses:gpt-test';

describe('OpenAI Responses adapter', () => {
  let server: OpenAiResponsesServer;
  const responses = (overrides: Partial<ProviderSettings> = {}, log?: ReturnType<typeof retryLog>['log']) =>
    new OpenAiResponsesProvider({ ...settings(server.baseUrl), ...overrides }, ENV, log);
  const body = (i = -1) => server.requests.at(i)!.body as Record<string, unknown>;

  beforeEach(async () => {
    server = await new OpenAiResponsesServer(KEY).start();
  });
  afterEach(() => server.close());

  it('sends instructions, input items and encoded function tools with store off; reads text, stop and usage', async () => {
    server.script({ kind: 'reply', text: 'Hello.', usage: { input: 12, output: 3 } });
    expect(await responses().complete(turn(MODEL))).toEqual({
      content: 'Hello.',
      tool_calls: [],
      usage: { input_tokens: 12, output_tokens: 3 },
      stop_reason: 'end_turn',
    });
    expect(body()).toMatchObject({
      model: 'gpt-test',
      instructions: 'You act for the user through tools.',
      input: [{ type: 'message', role: 'user', content: 'Tap OK and tell Alice I am late.' }],
      store: false,
      max_output_tokens: 1024,
      tools: [
        { type: 'function', name: 'device__tap' },
        { type: 'function', name: 'device__send_message' },
      ],
    });
  });

  it('renders earlier calls as function_call items answered by function_call_output; a late result becomes a message', async () => {
    server.script({ kind: 'reply', text: 'Denied.' });
    await responses().complete(turn(MODEL, HISTORY));
    const input = body().input as Record<string, unknown>[];
    expect(
      input.map((i) => (i.type === 'message' ? `message:${String(i.role)}` : `${String(i.type)}:${String(i.call_id)}`)),
    ).toEqual([
      'message:user',
      'message:assistant',
      `function_call:${CALL_TAP}`,
      `function_call:${CALL_SEND}`,
      `function_call_output:${CALL_TAP}`,
      `function_call_output:${CALL_SEND}`,
      'message:assistant',
      'message:user',
    ]);
    expect(input[2]).toMatchObject({ name: 'device__tap', arguments: '{"ref":"e1"}' });
  });

  it('streams text deltas to onText and assembles function calls from argument deltas', async () => {
    server.script({
      kind: 'reply',
      text: 'Tapping and texting.',
      tool_calls: [
        { name: 'device__tap', arguments: { ref: 'e1' } },
        { name: 'device__send_message', arguments: { recipient: 'Alice Martin, the neighbour' } },
      ],
      usage: { input: 50, output: 9 },
    });
    const deltas: string[] = [];
    const reply = await responses({ stream: true }).complete(turn(MODEL, undefined, { onText: (d) => deltas.push(d) }));
    expect(deltas.join('')).toBe('Tapping and texting.');
    expect(deltas.length).toBeGreaterThan(1);
    expect(reply).toEqual({
      content: 'Tapping and texting.',
      tool_calls: [
        { name: 'device__tap', arguments: { ref: 'e1' } },
        { name: 'device__send_message', arguments: { recipient: 'Alice Martin, the neighbour' } },
      ],
      usage: { input_tokens: 50, output_tokens: 9 },
      stop_reason: 'tool_use',
    });
  });

  it('reads max_output_tokens and content_filter as incomplete responses, and a refusal', async () => {
    server.script(
      { kind: 'reply', tool_calls: [{ name: 'device__tap', arguments: '{"ref":' }], stop: 'length' },
      { kind: 'reply', text: 'Partial', stop: 'content_filter' },
      { kind: 'reply', stop: 'refusal', refusal: 'No.' },
    );
    const provider = responses({ stream: true });
    const cut = await provider.complete(turn(MODEL));
    expect(cut.stop_reason).toBe('length');
    expect(cut.tool_calls[0]!.invalid).toMatch(/output limit/);
    expect(await provider.complete(turn(MODEL))).toMatchObject({ content: 'Partial', stop_reason: 'content_filter' });
    expect(await responses().complete(turn(MODEL))).toMatchObject({ content: 'No.', stop_reason: 'refusal' });
  });

  it('runs at most the configured number of parallel calls per turn; the rest are answered with an error', async () => {
    server.script({
      kind: 'reply',
      tool_calls: Array.from({ length: 50 }, (_, i) => ({ name: 'device__tap', arguments: { ref: `e${i}` } })),
    });
    const reply = await responses({ maxToolCallsPerTurn: 4, stream: true }).complete(turn(MODEL));
    expect(reply.tool_calls.map((c) => c.invalid === undefined)).toEqual(Array.from({ length: 50 }, (_, i) => i < 4));
    expect(reply.tool_calls[4]!.invalid).toMatch(/at most 4 are run per turn/);
  });

  it('reads an empty reply as no text and no requests, which the loop asks again', async () => {
    server.script({ kind: 'reply', text: '' }, { kind: 'reply', text: '' });
    expect(await responses().complete(turn(MODEL))).toMatchObject({
      content: '',
      tool_calls: [],
      stop_reason: 'end_turn',
    });
    expect(await responses({ stream: true }).complete(turn(MODEL))).toMatchObject({ content: '', tool_calls: [] });
  });

  it('answers argument text that is not JSON with an error for the model', async () => {
    server.script({ kind: 'reply', tool_calls: [{ name: 'device__tap', arguments: '{not json' }] });
    const reply = await responses().complete(turn(MODEL));
    expect(reply.tool_calls[0]).toMatchObject({
      arguments: { unparsed_arguments: '{not json' },
      invalid: expect.stringMatching(/not a JSON object/),
    });
  });

  it('retries a 500 and a 429 with Retry-After as an HTTP date, and reports a body that is not JSON', async () => {
    server.script(
      { kind: 'error', status: 500, message: 'The server had an error while processing your request.' },
      {
        kind: 'error',
        status: 429,
        message: 'Rate limit reached.',
        headers: { 'retry-after': new Date(Date.now() + 3_600_000).toUTCString() },
      },
      { kind: 'reply', text: 'Fine.' },
      { kind: 'raw', body: 'not json at all' },
    );
    const { log, entries } = retryLog();
    expect((await responses({ http: http({ maxDelayMs: 25 }) }, log).complete(turn(MODEL))).content).toBe('Fine.');
    expect(entries.map((e) => e.status)).toEqual([500, 429]);
    expect(entries[1]!.delay_ms).toBe(25);
    await expect(responses().complete(turn(MODEL))).rejects.toThrow(/not JSON/);
  });
});
