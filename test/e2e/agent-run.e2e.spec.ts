/**
 * `ormuz agent run`, built, against the whole platform (five services as processes, a simulated phone) and a local
 * server speaking OpenAI Chat Completions: the steps come out as NDJSON as they are recorded, a staged call names its
 * approval and console link, and the exit code says how the conversation stopped (0 answered, 2 paused for the
 * owner, 3 failed, 4 stopped by a bound: here the tenant's daily turns, set with `ormuz tenant limits`). The model, its base URL and its key variable are given on the command line, as an operator would
 * to try an agent against a local server.
 */
import { jest } from '@jest/globals';
import { OpenAiChatServer, testToken } from '@ormuz/testing';
import { startPlatform, type CliRun, type Platform } from './support/platform.js';

// A CLI process takes seconds to start on a loaded two-core machine; a run follows a whole conversation.
jest.setTimeout(120_000);

const KEY = 'sk-local-agent-run-e2e-6a5b4c3d2e1f0a9b8c7d6e5f';
const CONSOLE = 'http://127.0.0.1:8081/console';

type Step = { step: string } & Record<string, unknown>;
const steps = (stdout: string): Step[] =>
  stdout
    .trimEnd()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Step);

describe('ormuz agent run', () => {
  let platform: Platform;
  let server: OpenAiChatServer;

  /**
   * `ormuz --json …` as an operator of the tenant; a run follows a whole conversation, so it gets longer. `onStdout`
   * sees the output while the command runs.
   */
  const ormuzSeeing = async (onStdout: ((stdout: string) => void) | undefined, ...args: string[]) => {
    const token = await testToken({ tenant: platform.tenant, roles: ['operator', 'analyst'], subject: 'op@acme' });
    return platform.ormuzWith({ token, timeoutMs: 90_000, ...(onStdout ? { onStdout } : {}) }, ...args);
  };
  const ormuz = (...args: string[]): Promise<CliRun> => ormuzSeeing(undefined, ...args);

  const run = (task: string, ...args: string[]) => runSeeing(undefined, task, ...args);
  const runSeeing = (onStdout: ((stdout: string) => void) | undefined, task: string, ...args: string[]) =>
    ormuzSeeing(
      onStdout,
      'agent',
      'run',
      '--tenant',
      platform.tenant,
      '--agent',
      'a1',
      '--device',
      'phone-1',
      '--model',
      'openai-compatible:local-llm',
      '--base-url',
      server.baseUrl,
      '--console',
      CONSOLE,
      ...args,
      task,
    );

  beforeAll(async () => {
    server = await new OpenAiChatServer(KEY).start();
    platform = await startPlatform({
      env: { LOCAL_LLM_KEY: KEY, ORMUZ_MODEL_MAX_RETRIES: '0', MODEL_LOOP_MODEL_ATTEMPTS: '1' },
    });
    await platform.call('policy.grants.set', { tenant: platform.tenant, agent_id: 'a1', allow: ['ormuz', 'device'] });
  }, 240_000);

  afterAll(async () => {
    await platform?.close();
    await server?.close();
  }, 30_000);

  it('prints each step as it is recorded and exits 2 when the conversation pauses for the owner', async () => {
    server.script(
      {
        kind: 'reply',
        text: "I'll look at the screen and text Alice.",
        tool_calls: [
          { name: 'device__screen_observe', arguments: {} },
          { name: 'device__send_message', arguments: { recipient: 'Alice Martin', message_body: 'I am late' } },
        ],
      },
      { kind: 'reply', text: 'The message to Alice is waiting for your approval.' },
    );
    const r = await run('Tell Alice I am late', '--api-key-env', 'LOCAL_LLM_KEY');
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 2, stderr: '' });
    const out = steps(r.stdout);
    // The two results arrive in either order; the staged call's approval follows the result that told the model.
    const kinds = out.map((s) => s.step);
    expect(kinds.slice(0, 2)).toEqual(['started', 'model']);
    expect(kinds.slice(2, 5).sort()).toEqual(['pending_approval', 'tool_result', 'tool_result']);
    expect(kinds.slice(5)).toEqual(['model', 'end']);
    expect(kinds[kinds.indexOf('pending_approval') - 1]).toBe('tool_result');
    expect(out[0]).toMatchObject({ model: 'openai-compatible:local-llm', agent_id: 'a1', device_id: 'phone-1' });
    expect(out[1]).toMatchObject({ text: "I'll look at the screen and text Alice." });
    expect((out[1]!.tool_requests as { tool: string }[]).map((t) => t.tool)).toEqual([
      'device.screen_observe',
      'device.send_message',
    ]);
    const results = Object.fromEntries(out.filter((s) => s.step === 'tool_result').map((s) => [s.tool, s.status]));
    expect(results).toEqual({ 'device.screen_observe': 'succeeded', 'device.send_message': 'pending_confirmation' });
    const pending = out.find((s) => s.step === 'pending_approval')!;
    expect(pending.summary).toBe('Send a text message to Alice Martin: "I am late"');
    expect(out[5]).toMatchObject({ step: 'model', text: 'The message to Alice is waiting for your approval.' });
    expect(pending.approval_id).toMatch(/^apr_[0-9a-f]{32}$/);
    expect(pending.console_url).toBe(`${CONSOLE}#/calls/${String(pending.call_id)}`);
    expect(out.at(-1)).toEqual({
      step: 'end',
      status: 'paused',
      completion_reason: null,
      final_text: null,
      exit_code: 2,
    });
    // The key went to the server, and nowhere in what the CLI printed.
    expect(server.requests.at(-1)!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(r.stdout).not.toContain(KEY);
  });

  it('exits 0 with the answer when the model answers', async () => {
    server.script({ kind: 'reply', text: 'Alice is not someone I can reach without a tool; tell me more.' });
    const r = await run('Say hello', '--api-key-env', 'LOCAL_LLM_KEY');
    expect(r.code).toBe(0);
    expect(steps(r.stdout).at(-1)).toEqual({
      step: 'end',
      status: 'completed',
      completion_reason: 'answered',
      final_text: 'Alice is not someone I can reach without a tool; tell me more.',
      exit_code: 0,
    });
  });

  it("exits 3 when the model cannot be reached, with the reason naming the key's variable", async () => {
    const before = server.requests.length;
    const r = await run('Say hello', '--api-key-env', 'NO_SUCH_KEY');
    expect(r.code).toBe(3);
    const end = steps(r.stdout).at(-1)!;
    expect(end).toMatchObject({ step: 'end', status: 'completed', completion_reason: 'failed', exit_code: 3 });
    expect(end.final_text).toContain('NO_SUCH_KEY');
    expect(server.requests.length).toBe(before);
  });

  it("prints a streamed reply's text while the model writes it, then the recorded reply once", async () => {
    const text = 'Alice wrote twice today; neither message needs an answer.';
    let finish!: () => void;
    const held = new Promise<void>((resolve) => (finish = resolve));
    // The role and three pieces, then nothing until the CLI has printed live text: the reply cannot be recorded
    // before, so a text_delta that releases the stream was heard while the model was still writing.
    server.script({ kind: 'reply', text, holdAfter: { events: 4, until: held } });
    let releasedAfter: string | undefined;
    const r = await runSeeing(
      (stdout) => {
        if (releasedAfter === undefined && stdout.includes('"step":"text_delta"')) {
          releasedAfter = stdout;
          finish();
        }
      },
      'What did Alice write?',
      '--api-key-env',
      'LOCAL_LLM_KEY',
      '--stream',
    );
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(releasedAfter).toBeDefined();
    expect(releasedAfter).not.toContain('"step":"model"');
    const out = steps(r.stdout);
    const model = out.findIndex((s) => s.step === 'model');
    const deltas = out.slice(1, model);
    expect(deltas.length).toBeGreaterThan(0);
    expect(deltas.every((s) => s.step === 'text_delta' && s.turn === 0 && s.restart === false)).toBe(true);
    expect(text.startsWith(deltas.map((s) => s.text as string).join(''))).toBe(true);
    expect(out.slice(model).map((s) => s.step)).toEqual(['model', 'end']);
    expect(out[model]).toMatchObject({ text, tool_requests: [] });
    expect(server.requests.at(-1)!.body).toMatchObject({ stream: true });
  });

  it('refuses bad input before a conversation starts, with exit 1 and the reason', async () => {
    const ftp = await run('Say hello', '--base-url', 'ftp://127.0.0.1/v1');
    expect(ftp.code).toBe(1);
    expect(ftp.json).toMatchObject({ error: { code: 'invalid_model_settings' } });
    const unknown = await ormuz(
      'agent',
      'run',
      '--tenant',
      platform.tenant,
      '--agent',
      'a1',
      '--model',
      'nope:x',
      'Hi',
    );
    expect(unknown.code).toBe(1);
    expect(unknown.json).toMatchObject({ error: { code: 'unknown_model' } });
    const none = await ormuz('agent', 'run', '--tenant', platform.tenant, '--agent', 'a9', 'Hi');
    expect(none.json).toMatchObject({ error: { code: 'no_model' } });
  });

  it("stops at the tenant's daily turns with exit 4, shows the day, and refuses the next run until the limit moves", async () => {
    const tenant = platform.tenant;
    // Today's turns so far (the earlier cases ran some): one more is the day's last.
    const before = await platform.ormuz('tenant', 'usage', '--tenant', tenant);
    const used = (before.json as { usage: { steps: number } }).usage.steps;
    const set = await platform.ormuz('tenant', 'limits', 'set', '--tenant', tenant, '--day-steps', String(used + 1));
    expect(set.json).toMatchObject({ tenant, limits: { day_steps: used + 1 }, own: { day_steps: used + 1 } });

    server.script({
      kind: 'reply',
      text: "I'll look at the screen first.",
      tool_calls: [{ name: 'device__screen_observe', arguments: {} }],
    });
    const r = await run('Look, then tell me what you see', '--api-key-env', 'LOCAL_LLM_KEY');
    expect(r.code).toBe(4);
    const out = steps(r.stdout);
    const end = out.at(-1)!;
    expect(end).toMatchObject({
      step: 'end',
      status: 'completed',
      completion_reason: 'tenant_day_steps',
      exit_code: 4,
    });
    expect(end.final_text).toMatch(new RegExp(`daily limit .*${used + 1} of ${used + 1} model turns used`));

    const id = String(out[0]!.conversation_id);
    const shown = await platform.ormuzWith(
      { token: await testToken({ tenant, roles: ['operator'], subject: 'op@acme' }) },
      'conversation',
      'show',
      '--tenant',
      tenant,
      '--conversation',
      id,
    );
    expect(shown.json).toMatchObject({
      completion_reason: 'tenant_day_steps',
      bound: { bound: 'tenant_day_steps', limit: used + 1, used: used + 1 },
    });

    const day = await platform.ormuz('tenant', 'usage', '--tenant', tenant);
    expect(day.json).toMatchObject({
      usage: { steps: used + 1 },
      spent: { bound: 'tenant_day_steps', limit: used + 1, used: used + 1 },
    });
    const refused = await run('Say hello', '--api-key-env', 'LOCAL_LLM_KEY');
    expect(refused.code).toBe(1);
    expect(refused.json).toMatchObject({
      error: { code: 'tenant_day_spent', message: expect.stringContaining('00:00 UTC') },
    });

    // Back to the default (no limit): the tenant's conversations run again at once.
    const cleared = await platform.ormuz('tenant', 'limits', 'set', '--tenant', tenant, '--day-steps', 'default');
    expect(cleared.json).toMatchObject({ limits: {}, own: {} });
    server.script({ kind: 'reply', text: 'Hello again.' });
    expect((await run('Say hello', '--api-key-env', 'LOCAL_LLM_KEY')).code).toBe(0);
  });
});
