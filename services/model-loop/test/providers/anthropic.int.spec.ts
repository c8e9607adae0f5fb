// The Anthropic Messages adapter against a local server that speaks the wire format (libs/testing's AnthropicServer).
import { AnthropicServer } from '@ormuz/testing';
import { AnthropicProvider, ModelUnavailableError, type ProviderSettings } from '../../src/index.js';
import { CALL_SEND, CALL_TAP, ENV, HISTORY, KEY, retryLog, settings, turn, http } from './provider.fixture.js';

const MODEL = 'anthropic:claude-test';

describe('Anthropic Messages adapter', () => {
  let server: AnthropicServer;
  const claude = (overrides: Partial<ProviderSettings> = {}, log?: ReturnType<typeof retryLog>['log']) =>
    new AnthropicProvider({ ...settings(server.baseUrl), ...overrides }, ENV, log);
  const body = (i = -1) => server.requests.at(i)!.body as Record<string, unknown>;

  beforeEach(async () => {
    server = await new AnthropicServer(KEY).start();
  });
  afterEach(() => server.close());

  it('sends x-api-key, the version header, the system prompt apart and encoded tools; reads text, stop and usage', async () => {
    server.script({ kind: 'reply', text: 'Hello.', usage: { input: 30, output: 4 } });
    const reply = await claude().complete(turn(MODEL));
    expect(reply).toEqual({
      content: 'Hello.',
      tool_calls: [],
      usage: { input_tokens: 30, output_tokens: 4 },
      stop_reason: 'end_turn',
    });
    const sent = server.requests[0]!;
    expect(sent.headers['x-api-key']).toBe(KEY);
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.body).toMatchObject({
      model: 'claude-test',
      max_tokens: 1024,
      system: 'You act for the user through tools.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Tap OK and tell Alice I am late.' }] }],
    });
    expect((body().tools as { name: string; input_schema: unknown }[]).map((t) => t.name)).toEqual([
      'device__tap',
      'device__send_message',
    ]);
  });

  it('answers each tool_use with tool_result blocks first in the next user message; a late result becomes text', async () => {
    server.script({ kind: 'reply', text: 'The owner denied the text to Alice.' });
    await claude().complete(turn(MODEL, HISTORY));
    const messages = body().messages as { role: string; content: Record<string, unknown>[] }[];
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(messages[1]!.content).toEqual([
      { type: 'text', text: 'On it.' },
      { type: 'tool_use', id: CALL_TAP, name: 'device__tap', input: { ref: 'e1' } },
      { type: 'tool_use', id: CALL_SEND, name: 'device__send_message', input: { recipient: 'Alice' } },
    ]);
    expect(messages[2]!.content.map((b) => [b.type, b.tool_use_id])).toEqual([
      ['tool_result', CALL_TAP],
      ['tool_result', CALL_SEND],
    ]);
    expect(messages[4]!.content[0]!.text).toContain(`later result for your earlier call ${CALL_SEND}`);
  });

  it('streams text to onText and assembles tool input from input_json_delta fragments', async () => {
    server.script({
      kind: 'reply',
      text: 'Tapping now.',
      tool_calls: [
        { name: 'device__tap', arguments: { ref: 'e1' } },
        { name: 'device__send_message', arguments: { recipient: 'Alice Martin, the neighbour' } },
      ],
      usage: { input: 80, output: 25 },
    });
    const deltas: string[] = [];
    const reply = await claude({ stream: true }).complete(turn(MODEL, undefined, { onText: (d) => deltas.push(d) }));
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe('Tapping now.');
    expect(reply).toEqual({
      content: 'Tapping now.',
      tool_calls: [
        { name: 'device__tap', arguments: { ref: 'e1' } },
        { name: 'device__send_message', arguments: { recipient: 'Alice Martin, the neighbour' } },
      ],
      usage: { input_tokens: 80, output_tokens: 25 },
      stop_reason: 'tool_use',
    });
    expect(body().stream).toBe(true);
  });

  it('retries a 529 overloaded and a 429 with retry-after, then answers', async () => {
    server.script(
      { kind: 'error', status: 529, message: 'Overloaded' },
      {
        kind: 'error',
        status: 429,
        message: 'Number of requests has exceeded your rate limit.',
        headers: { 'retry-after': '0.01' },
      },
      { kind: 'reply', text: 'Fine.' },
    );
    const { log, entries } = retryLog();
    expect((await claude({}, log).complete(turn(MODEL))).content).toBe('Fine.');
    expect(entries.map((e) => e.status)).toEqual([529, 429]);
    expect(entries[1]!.delay_ms).toBe(10);
  });

  it('gives up with the last status and the API error type and message', async () => {
    server.script(
      { kind: 'error', status: 500, message: 'Internal server error' },
      { kind: 'error', status: 529, message: 'Overloaded' },
    );
    await expect(claude({ http: http({ attempts: 2 }) }).complete(turn(MODEL))).rejects.toThrow(
      /HTTP 529 .*overloaded_error: Overloaded \(after 2 attempts\)/,
    );
  });

  it('reports a body that is not JSON', async () => {
    server.script({ kind: 'raw', body: 'upstream connect error' });
    await expect(claude().complete(turn(MODEL))).rejects.toBeInstanceOf(ModelUnavailableError);
  });

  it('never puts the API key in an error', async () => {
    const wrong = new AnthropicProvider(settings(server.baseUrl), { TEST_MODEL_KEY: 'sk-ant-wrong-key-123456' });
    const error = (await wrong.complete(turn(MODEL)).catch((e: unknown) => e)) as Error;
    expect(error.message).toMatch(/HTTP 401 .*authentication_error: invalid x-api-key/);
    expect(JSON.stringify({ ...error, message: error.message, stack: error.stack })).not.toContain(
      'sk-ant-wrong-key-123456',
    );
  });

  it('does not run a tool_use cut by max_tokens, and refuses names never offered', async () => {
    server.script({
      kind: 'reply',
      tool_calls: [
        { name: 'device__unknown', arguments: {} },
        { name: 'device__tap', arguments: '{"ref": "e' },
      ],
      stop: 'length',
    });
    const reply = await claude({ stream: true }).complete(turn(MODEL));
    expect(reply.stop_reason).toBe('length');
    expect(reply.tool_calls[0]!.invalid).toMatch(/No tool named "device__unknown"/);
    expect(reply.tool_calls[1]).toMatchObject({
      arguments: { unparsed_arguments: '{"ref": "e' },
      invalid: expect.stringMatching(/output limit/),
    });
  });

  it('bounds parallel tool uses per turn', async () => {
    server.script({
      kind: 'reply',
      tool_calls: Array.from({ length: 50 }, (_, i) => ({ name: 'device__tap', arguments: { ref: `e${i}` } })),
    });
    const reply = await claude({ maxToolCallsPerTurn: 4 }).complete(turn(MODEL));
    expect(reply.tool_calls.map((c) => c.invalid === undefined)).toEqual(Array.from({ length: 50 }, (_, i) => i < 4));
  });

  it('reads a refusal and an empty reply', async () => {
    server.script({ kind: 'reply', stop: 'refusal' }, { kind: 'reply', text: '' });
    expect(await claude().complete(turn(MODEL))).toMatchObject({ content: '', tool_calls: [], stop_reason: 'refusal' });
    expect(await claude({ stream: true }).complete(turn(MODEL))).toMatchObject({
      content: '',
      tool_calls: [],
      stop_reason: 'end_turn',
    });
  });

  it('never sends a tool_result that answers no tool_use, and is refused when dotted names are offered', async () => {
    const orphan = turn(MODEL, [HISTORY[0]!, { ...HISTORY[2]!, tool_call_id: 'call_x' }], {
      tools: [{ name: 'device.tap', description: 'Tap.', parameters: { type: 'object' } }],
    });
    await expect(claude().complete(orphan)).rejects.toThrow(/HTTP 400 .*String should match pattern/);
    const [user] = body().messages as { content: { type: string; text?: string }[] }[];
    expect(user!.content.map((b) => b.type)).toEqual(['text', 'text']);
    expect(user!.content[1]!.text).toContain('later result for your earlier call call_x');
  });

  it('asks again when a stream is cut off midway', async () => {
    const reply = { kind: 'reply' as const, text: 'Streamed and cut.' };
    server.script({ ...reply, cutAfter: 3 }, reply);
    expect((await claude({ stream: true }).complete(turn(MODEL))).content).toBe('Streamed and cut.');
    expect(server.requests).toHaveLength(2);
  });

  it('times out an attempt that never answers', async () => {
    server.script({ kind: 'hang' });
    await expect(claude({ http: http({ timeoutMs: 150, attempts: 1 }) }).complete(turn(MODEL))).rejects.toThrow(
      /within 150 ms/,
    );
  });
});
