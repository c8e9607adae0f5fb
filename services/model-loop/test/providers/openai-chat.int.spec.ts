// The Chat Completions adapter against a local server that speaks the wire format (libs/testing's OpenAiChatServer).
import { OpenAiChatServer } from '@ormuz/testing';
import { ModelUnavailableError, OpenAiChatProvider, type OpenAiChatSettings } from '../../src/index.js';
import { CALL_SEND, ENV, HISTORY, KEY, retryLog, settings, turn, http } from './provider.fixture.js';

const MODEL = 'openai:gpt-test';

describe('OpenAI Chat Completions adapter', () => {
  let server: OpenAiChatServer;
  const chat = (overrides: Partial<OpenAiChatSettings> = {}, log?: ReturnType<typeof retryLog>['log']) =>
    new OpenAiChatProvider(
      {
        ...settings(server.baseUrl),
        prefix: 'openai:',
        examples: [],
        maxTokensField: 'max_completion_tokens',
        ...overrides,
      },
      ENV,
      log,
    );
  const body = (i = -1) => server.requests.at(i)!.body as Record<string, unknown>;

  beforeEach(async () => {
    server = await new OpenAiChatServer(KEY).start();
  });
  afterEach(() => server.close());

  it('sends the system prompt, the transcript and encoded tool offers, and reads text, stop and usage', async () => {
    server.script({ kind: 'reply', text: 'Hello.', usage: { input: 42, output: 7 } });
    const reply = await chat().complete(turn(MODEL));
    expect(reply).toEqual({
      content: 'Hello.',
      tool_calls: [],
      usage: { input_tokens: 42, output_tokens: 7 },
      stop_reason: 'end_turn',
    });
    const sent = body();
    expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent).toMatchObject({
      model: 'gpt-test',
      messages: [
        { role: 'system', content: 'You act for the user through tools.' },
        { role: 'user', content: 'Tap OK and tell Alice I am late.' },
      ],
      tool_choice: 'auto',
      max_completion_tokens: 1024,
    });
    expect((sent.tools as { function: { name: string } }[]).map((t) => t.function.name)).toEqual([
      'device__tap',
      'device__send_message',
    ]);
    expect(sent.stream).toBeUndefined();
  });

  it('renders earlier calls under their encoded names and a late result as user text, which the API accepts', async () => {
    server.script({ kind: 'reply', text: 'Alice was not texted: the owner denied it.' });
    await chat().complete(turn(MODEL, HISTORY));
    const messages = body().messages as Record<string, unknown>[];
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool', 'assistant', 'user']);
    expect(messages[2]).toMatchObject({
      tool_calls: [
        { type: 'function', function: { name: 'device__tap', arguments: '{"ref":"e1"}' } },
        { type: 'function', function: { name: 'device__send_message' } },
      ],
    });
    expect(messages[6]!.content).toContain(`A later result for your earlier call ${CALL_SEND} (device.send_message)`);
  });

  it('streams text to onText and assembles tool calls from their fragments, with the usage of the last chunk', async () => {
    server.script({
      kind: 'reply',
      text: 'Looking at the screen and tapping.',
      tool_calls: [
        { name: 'device__tap', arguments: { ref: 'e1' } },
        { name: 'device__send_message', arguments: { recipient: 'Alice Martin, the neighbour' } },
      ],
      usage: { input: 100, output: 20 },
    });
    const deltas: string[] = [];
    const reply = await chat({ stream: true }).complete(turn(MODEL, undefined, { onText: (d) => deltas.push(d) }));
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.join('')).toBe('Looking at the screen and tapping.');
    expect(reply).toEqual({
      content: 'Looking at the screen and tapping.',
      tool_calls: [
        { name: 'device__tap', arguments: { ref: 'e1' } },
        { name: 'device__send_message', arguments: { recipient: 'Alice Martin, the neighbour' } },
      ],
      usage: { input_tokens: 100, output_tokens: 20 },
      stop_reason: 'tool_use',
    });
    expect(body()).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('retries an HTTP 500 and returns the reply of the next attempt', async () => {
    server.script(
      { kind: 'error', status: 500, message: 'The server had an error.' },
      { kind: 'reply', text: 'Fine.' },
    );
    const { log, entries } = retryLog();
    expect((await chat({}, log).complete(turn(MODEL))).content).toBe('Fine.');
    expect(server.requests).toHaveLength(2);
    expect(entries).toEqual([expect.objectContaining({ attempt: 1, status: 500 })]);
  });

  it('waits as long as Retry-After asks on a 429, capped by the configured maximum', async () => {
    server.script(
      { kind: 'error', status: 429, message: 'Rate limit reached.', headers: { 'retry-after': '0.02' } },
      { kind: 'error', status: 429, message: 'Rate limit reached.', headers: { 'retry-after': '3600' } },
      { kind: 'reply', text: 'Fine.' },
    );
    const { log, entries } = retryLog();
    expect((await chat({ http: http({ maxDelayMs: 30 }) }, log).complete(turn(MODEL))).content).toBe('Fine.');
    expect(entries.map((e) => [e.status, e.delay_ms])).toEqual([
      [429, 20],
      [429, 30],
    ]);
  });

  it('gives up after the configured attempts with the last status and the API message', async () => {
    server.script(
      { kind: 'error', status: 503, message: 'Overloaded.' },
      { kind: 'error', status: 503, message: 'Overloaded.' },
      { kind: 'error', status: 429, message: 'Rate limit reached for gpt-test.' },
    );
    const error = await chat()
      .complete(turn(MODEL))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelUnavailableError);
    expect((error as Error).message).toMatch(/HTTP 429 .*Rate limit reached for gpt-test.*after 3 attempts/);
  });

  it('retries a dropped connection', async () => {
    server.script({ kind: 'drop' }, { kind: 'reply', text: 'Back.' });
    expect((await chat().complete(turn(MODEL))).content).toBe('Back.');
  });

  it('asks again when a stream is cut off midway, and returns the complete reply of the next attempt', async () => {
    const reply = {
      kind: 'reply' as const,
      text: 'A longer answer, streamed.',
      tool_calls: [{ name: 'device__tap', arguments: { ref: 'e1' } }],
    };
    server.script({ ...reply, cutAfter: 4 }, reply);
    const { log, entries } = retryLog();
    const got = await chat({ stream: true }, log).complete(turn(MODEL));
    expect(got).toMatchObject({
      content: 'A longer answer, streamed.',
      tool_calls: [{ name: 'device__tap', arguments: { ref: 'e1' } }],
    });
    expect(entries).toEqual([expect.objectContaining({ attempt: 1, error: expect.stringMatching(/cannot reach/) })]);
  });

  it('fails at once on a request the API refuses (400), without retrying', async () => {
    server.script({ kind: 'error', status: 400, message: "Invalid 'messages'." });
    await expect(chat().complete(turn(MODEL))).rejects.toThrow(/HTTP 400 .*invalid_request_error: Invalid 'messages'/);
    expect(server.requests).toHaveLength(1);
  });

  it('reports a body that is not JSON as a malformed reply', async () => {
    server.script({ kind: 'raw', body: '<html>502 Bad Gateway</html>' });
    await expect(chat().complete(turn(MODEL))).rejects.toThrow(/not JSON/);
  });

  it('gives up on an attempt after the timeout, and names it', async () => {
    server.script({ kind: 'hang' });
    await expect(chat({ http: http({ timeoutMs: 200, attempts: 1 }) }).complete(turn(MODEL))).rejects.toThrow(
      /no complete reply .* within 200 ms \(after 1 attempt\)/,
    );
  });

  it('stops at once when the turn is aborted', async () => {
    server.script({ kind: 'hang' });
    const abort = new AbortController();
    const pending = chat().complete(turn(MODEL, undefined, { signal: abort.signal }));
    abort.abort(new Error('loop shutting down'));
    await expect(pending).rejects.toThrow('loop shutting down');
  });

  it('never puts the API key in an error or a log entry, even when the API echoes it', async () => {
    server.script(
      { kind: 'error', status: 500, message: `upstream rejected key ${KEY}` },
      { kind: 'error', status: 401, message: `Incorrect API key provided: ${KEY}.` },
    );
    const { log, entries } = retryLog();
    const error = (await chat({}, log)
      .complete(turn(MODEL))
      .catch((e: unknown) => e)) as ModelUnavailableError;
    expect(error).toBeInstanceOf(ModelUnavailableError);
    expect(error.message).toContain('HTTP 401');
    expect(error.message).toContain('[redacted]');
    expect(JSON.stringify({ ...error, message: error.message, stack: error.stack, entries })).not.toContain(KEY);
    // A wrong key: the server's own 401, with the key masked as OpenAI masks it.
    const wrong = new OpenAiChatProvider(
      { ...settings(server.baseUrl), prefix: 'openai:', examples: [], maxTokensField: 'max_tokens' },
      { TEST_MODEL_KEY: 'sk-wrong-0123456789abcdef' },
    );
    const refused = (await wrong.complete(turn(MODEL)).catch((e: unknown) => e)) as Error;
    expect(refused.message).toMatch(/HTTP 401 .*invalid_api_key|HTTP 401 .*Incorrect API key/);
    expect(refused.message).not.toContain('sk-wrong-0123456789abcdef');
  });

  it('names the missing key variable when the key is not set', async () => {
    const provider = new OpenAiChatProvider(
      { ...settings(server.baseUrl), prefix: 'openai:', examples: [], maxTokensField: 'max_tokens' },
      {},
    );
    await expect(provider.complete(turn(MODEL))).rejects.toThrow(/TEST_MODEL_KEY .* is not set/);
    expect(server.requests).toHaveLength(0);
  });

  it('turns argument text that is not JSON and a tool never offered into errors for the model, never {}', async () => {
    server.script({
      kind: 'reply',
      tool_calls: [
        { name: 'device__tap', arguments: '{not json' },
        { name: 'device__format_disk', arguments: {} },
        { name: 'device__screen_observe', arguments: {} },
        { name: 'device__tap', arguments: { ref: 'e2' } },
      ],
    });
    const reply = await chat().complete(turn(MODEL));
    expect(reply.tool_calls).toEqual([
      {
        name: 'device__tap',
        arguments: { unparsed_arguments: '{not json' },
        invalid: expect.stringMatching(/not a JSON object/),
      },
      {
        name: 'device__format_disk',
        arguments: {},
        invalid: expect.stringMatching(/No tool named "device__format_disk" was offered/),
      },
      {
        name: 'device__screen_observe',
        arguments: {},
        invalid: expect.stringMatching(/listed in the directory but not activated/),
      },
      { name: 'device__tap', arguments: { ref: 'e2' } },
    ]);
  });

  it('runs at most the configured number of parallel calls per turn; the rest are answered with an error', async () => {
    server.script({
      kind: 'reply',
      tool_calls: Array.from({ length: 50 }, (_, i) => ({ name: 'device__tap', arguments: { ref: `e${i}` } })),
    });
    const reply = await chat({ stream: true }).complete(turn(MODEL));
    expect(reply.tool_calls).toHaveLength(50);
    expect(reply.tool_calls.filter((c) => c.invalid === undefined)).toHaveLength(16);
    expect(reply.tool_calls.slice(0, 16).every((c, i) => c.invalid === undefined && c.arguments.ref === `e${i}`)).toBe(
      true,
    );
    expect(reply.tool_calls[16]!.invalid).toMatch(/at most 16 are run per turn/);
  });

  it('does not run a tool call cut mid-arguments by the output limit', async () => {
    server.script({
      kind: 'reply',
      text: 'Tapping',
      tool_calls: [
        { name: 'device__tap', arguments: { ref: 'e1' } },
        { name: 'device__send_message', arguments: '{"recipient": "Ali' },
      ],
      stop: 'length',
    });
    const reply = await chat({ stream: true }).complete(turn(MODEL));
    expect(reply.stop_reason).toBe('length');
    expect(reply.tool_calls[0]).toEqual({ name: 'device__tap', arguments: { ref: 'e1' } });
    expect(reply.tool_calls[1]!.invalid).toMatch(/reached the output limit/);
  });

  it('reads a refusal, a content-filter stop and an empty reply', async () => {
    server.script(
      { kind: 'reply', stop: 'refusal', refusal: 'I cannot help with that.' },
      { kind: 'reply', text: '', stop: 'content_filter' },
      { kind: 'reply', text: '' },
    );
    const provider = chat();
    expect(await provider.complete(turn(MODEL))).toMatchObject({
      content: 'I cannot help with that.',
      stop_reason: 'refusal',
    });
    expect(await provider.complete(turn(MODEL))).toMatchObject({
      content: '',
      tool_calls: [],
      stop_reason: 'content_filter',
    });
    expect(await provider.complete(turn(MODEL))).toMatchObject({
      content: '',
      tool_calls: [],
      stop_reason: 'end_turn',
    });
  });

  it('streams a refusal too', async () => {
    server.script({ kind: 'reply', stop: 'refusal', refusal: 'I will not do that.' });
    expect(await chat({ stream: true }).complete(turn(MODEL))).toMatchObject({
      content: 'I will not do that.',
      stop_reason: 'refusal',
    });
  });

  it('is refused by the API when dotted names are offered unencoded, which is why the profile asks for encoding', async () => {
    const dotted = turn(MODEL, undefined, {
      tools: [{ name: 'device.tap', description: 'Tap.', parameters: { type: 'object' } }],
    });
    await expect(chat().complete(dotted)).rejects.toThrow(/HTTP 400 .*does not match pattern/);
    expect(chat().profile(MODEL).encodeToolNames).toBe(true);
  });

  it('talks to Azure OpenAI with an api-key header and the api-version query', async () => {
    await server.close();
    server = await new OpenAiChatServer(KEY, { deployment: 'gpt4o-prod', apiVersion: '2024-10-21' }).start();
    server.script({ kind: 'reply', text: 'Hi from Azure.' });
    const azure = chat({ prefix: 'openai-compatible:', azureApiVersion: '2024-10-21', maxTokensField: 'max_tokens' });
    expect((await azure.complete(turn('openai-compatible:gpt4o-prod'))).content).toBe('Hi from Azure.');
    const sent = server.requests[0]!;
    expect(sent.headers['api-key']).toBe(KEY);
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.query['api-version']).toBe('2024-10-21');
  });
});
