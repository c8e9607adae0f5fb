// Per-agent model configuration: stored by model-loop (never a key), used by conversations started without a model,
// checked against the providers that exist, and the key read from the variable or file it names at each call — a
// missing one ends the conversation with the reason on record. Real NATS, Postgres, policy and a local server
// speaking Chat Completions.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  aggregateSubject,
  ConversationEventType as E,
  type ConversationStartedV1,
  type ConversationViewV1,
  type RpcName,
  type RpcRequestOf,
} from '@ormuz/contracts';
import type { Role } from '@ormuz/auth';
import { streamName } from '@ormuz/event-log';
import { callRpc, RemoteError, type RunningService } from '@ormuz/service-kit';
import { bearerFor, OpenAiChatServer, waitFor } from '@ormuz/testing';
import { TestPlatform } from './platform.fixture.js';

const TIMEOUT = 30_000;
const KEY = 'sk-local-agent-models-0f1e2d3c4b5a69788796a5b4c3d2e1f0';
const TENANT = 'acme';

describe('per-agent model configuration', () => {
  const platform = new TestPlatform();
  const namespace = platform.namespace;
  let server: OpenAiChatServer;
  let loop: RunningService;
  let nc: NatsConnection;
  const keyDir = mkdtempSync(join(tmpdir(), 'ormuz-agent-models-'));
  const keyFile = join(keyDir, 'api-key');

  const as = <N extends RpcName>(
    name: N,
    body: NoInfer<RpcRequestOf<N>>,
    tenant = TENANT,
    roles: readonly Role[] = ['admin'],
  ) =>
    bearerFor(tenant, roles).then((credential) => callRpc(nc, namespace, name, body, { credential, checkReply: true }));
  const refusal = (p: Promise<unknown>) =>
    p.then(
      () => {
        throw new Error('expected a refusal');
      },
      (err: unknown) => {
        if (!(err instanceof RemoteError)) throw err;
        return { code: err.code, message: err.message };
      },
    );
  const completed = (id: string) =>
    waitFor(
      async () => {
        const v: ConversationViewV1 = await as('model-loop.get', { tenant: TENANT, conversation_id: id });
        return v.status === 'completed' && v;
      },
      { message: `conversation ${id} to complete`, timeoutMs: 15_000 },
    );
  const startedEvent = async (id: string) => {
    for await (const { event } of platform.store.readSubject(
      streamName(namespace, 'conversations'),
      aggregateSubject(namespace, 'conversations', TENANT, id),
    )) {
      if (event.type === E.Started) return event.data as ConversationStartedV1;
    }
    throw new Error(`no start event for ${id}`);
  };

  beforeAll(async () => {
    server = await new OpenAiChatServer(KEY).start();
    writeFileSync(keyFile, `${KEY}\n`, { mode: 0o600 });
    await platform.open('model-loop-agent-models-test');
    nc = platform.nc;
    // No compatible server configured: `openai-compatible:` is served only with a base URL from an agent or a start.
    loop = await platform.startLoop(
      { environment: { LOCAL_LLM_KEY: KEY } },
      { ORMUZ_MODEL_MAX_RETRIES: '0', MODEL_LOOP_MODEL_ATTEMPTS: '1' },
    );
    await as('policy.grants.set', { tenant: TENANT, agent_id: 'a1', allow: ['ormuz', 'device'] });
  }, TIMEOUT);

  afterAll(async () => {
    await platform.close(loop);
    await server.close();
  }, TIMEOUT);

  it('stores the configuration, never a key, and lists and shows it', async () => {
    const saved = await as(
      'model-loop.agents.set',
      {
        tenant: TENANT,
        agent_id: 'a1',
        model: 'openai-compatible:local-llm',
        settings: { base_url: `${server.baseUrl}/`, api_key_env: 'LOCAL_LLM_KEY', max_output_tokens: 300 },
      },
      TENANT,
      ['operator'],
    );
    expect(saved).toMatchObject({
      agent_id: 'a1',
      model: 'openai-compatible:local-llm',
      settings: { base_url: server.baseUrl, api_key_env: 'LOCAL_LLM_KEY', max_output_tokens: 300 },
      updated_by: `operator@${TENANT}`,
    });
    expect(JSON.stringify(saved)).not.toContain(KEY);
    expect(await as('model-loop.agents.get', { tenant: TENANT, agent_id: 'a1' }, TENANT, ['analyst'])).toEqual(saved);
    const { agents } = await as('model-loop.agents.list', { tenant: TENANT });
    expect(agents.map((a) => a.agent_id)).toEqual(['a1']);
    expect(await refusal(as('model-loop.agents.get', { tenant: TENANT, agent_id: 'nobody' }))).toMatchObject({
      code: 'agent_model_not_found',
    });
  });

  it("runs a conversation started without a model on the agent's, with its settings recorded and the key read at the call", async () => {
    server.script({ kind: 'reply', text: 'Hello from the configured model.', usage: { input: 50, output: 8 } });
    const { conversation_id: id } = await as('model-loop.start', {
      tenant: TENANT,
      agent_id: 'a1',
      task: 'Say hello.',
      device_id: null,
    });
    const done = await completed(id);
    expect(done).toMatchObject({ model: 'openai-compatible:local-llm', completion_reason: 'answered' });
    expect(done.final_text).toBe('Hello from the configured model.');
    const request = server.requests.at(-1)!;
    expect(request.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(request.body).toMatchObject({ model: 'local-llm', max_tokens: 300 });
    const started = await startedEvent(id);
    expect(started.model_settings).toEqual({
      base_url: server.baseUrl,
      api_key_env: 'LOCAL_LLM_KEY',
      max_output_tokens: 300,
    });
    expect(JSON.stringify(started)).not.toContain(KEY);
  });

  it('reads the key from a file named by the configuration (a mounted secret)', async () => {
    await as('model-loop.agents.set', {
      tenant: TENANT,
      agent_id: 'a2',
      model: 'openai-compatible:local-llm',
      settings: { base_url: server.baseUrl, api_key_file: keyFile },
    });
    server.script({ kind: 'reply', text: 'Read with the key from the file.' });
    const { conversation_id: id } = await as('model-loop.start', {
      tenant: TENANT,
      agent_id: 'a2',
      task: 'Say hello.',
      device_id: null,
    });
    expect((await completed(id)).completion_reason).toBe('answered');
    expect(server.requests.at(-1)!.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('ends the conversation as failed, naming the variable, when the key variable is unset', async () => {
    await as('model-loop.agents.set', {
      tenant: TENANT,
      agent_id: 'a3',
      model: 'openai-compatible:local-llm',
      settings: { base_url: server.baseUrl, api_key_env: 'UNSET_LLM_KEY' },
    });
    const before = server.requests.length;
    const { conversation_id: id } = await as('model-loop.start', {
      tenant: TENANT,
      agent_id: 'a3',
      task: 'Say hello.',
      device_id: null,
    });
    const done = await completed(id);
    expect(done.completion_reason).toBe('failed');
    expect(done.final_text).toContain('UNSET_LLM_KEY');
    expect(server.requests.length).toBe(before);
  });

  it('lets an explicit model override the configured one, and refuses one that does not exist', async () => {
    server.script({ kind: 'reply', text: 'Scripted or not, I answer.' });
    expect(
      await refusal(
        as('model-loop.start', { tenant: TENANT, agent_id: 'a1', task: 'Hi.', device_id: null, model: 'nope:model' }),
      ),
    ).toMatchObject({ code: 'unknown_model' });
    // Another model than the agent's: the agent's base URL does not apply, and no compatible server is configured.
    expect(
      await refusal(
        as('model-loop.start', {
          tenant: TENANT,
          agent_id: 'a1',
          task: 'Hi.',
          device_id: null,
          model: 'openai-compatible:other-llm',
        }),
      ),
    ).toMatchObject({ code: 'unknown_model' });
    const { conversation_id: id } = await as('model-loop.start', {
      tenant: TENANT,
      agent_id: 'a1',
      task: 'Hi.',
      device_id: null,
      model: 'openai-compatible:other-llm',
      model_settings: { base_url: server.baseUrl, api_key_env: 'LOCAL_LLM_KEY' },
    });
    expect(await completed(id)).toMatchObject({ model: 'openai-compatible:other-llm', completion_reason: 'answered' });
    expect(server.requests.at(-1)!.body).toMatchObject({ model: 'other-llm' });
  });

  it('refuses bad input with a sentence, and changes nothing', async () => {
    const before = await as('model-loop.agents.get', { tenant: TENANT, agent_id: 'a1' });
    const set = (model: string, settings: RpcRequestOf<'model-loop.agents.set'>['settings']) =>
      refusal(as('model-loop.agents.set', { tenant: TENANT, agent_id: 'a1', model, settings }));
    expect(await set('unknown:gpt', {})).toMatchObject({
      code: 'unknown_model',
      message: expect.stringContaining('unknown:gpt'),
    });
    expect(await set('openai-compatible:x', { base_url: 'ftp://127.0.0.1/v1' })).toMatchObject({
      code: 'invalid_model_settings',
      message: expect.stringContaining('not an http or https URL'),
    });
    expect(await set('openai-compatible:x', { base_url: 'not a url' })).toMatchObject({
      code: 'invalid_model_settings',
    });
    expect(await set('openai-compatible:x', { base_url: 'https://user:pw@example.com/v1' })).toMatchObject({
      code: 'invalid_model_settings',
      message: expect.stringContaining('credentials'),
    });
    expect(await set('openai:gpt-4.1', { api_key_env: 'not-a-name' })).toMatchObject({
      code: 'invalid_model_settings',
    });
    expect(await set('openai:gpt-4.1', { api_key_file: 'relative/key' })).toMatchObject({
      code: 'invalid_model_settings',
    });
    // A compatible model with no base URL anywhere does not exist.
    expect(await set('openai-compatible:x', {})).toMatchObject({ code: 'unknown_model' });
    expect(await as('model-loop.agents.get', { tenant: TENANT, agent_id: 'a1' })).toEqual(before);
  });

  it('refuses another tenant, a role that may not set it, and an agent key that brings its own settings', async () => {
    const body = { tenant: TENANT, agent_id: 'a1', model: 'scripted:demo' };
    expect(await refusal(as('model-loop.agents.set', body, 'other'))).toMatchObject({ code: 'forbidden' });
    expect(await refusal(as('model-loop.agents.get', { tenant: TENANT, agent_id: 'a1' }, 'other'))).toMatchObject({
      code: 'forbidden',
    });
    expect(await refusal(as('model-loop.agents.set', body, TENANT, ['owner', 'analyst']))).toMatchObject({
      code: 'forbidden',
      message: expect.stringContaining('operator'),
    });
    const issued = await as('policy.keys.issue', { tenant: TENANT, agent_id: 'a1' });
    const asAgent = <N extends RpcName>(name: N, b: NoInfer<RpcRequestOf<N>>) =>
      callRpc(nc, namespace, name, b, { credential: { bearer: issued.api_key }, checkReply: true });
    expect(await refusal(asAgent('model-loop.agents.set', body))).toMatchObject({ code: 'forbidden' });
    expect(
      await refusal(
        asAgent('model-loop.start', {
          tenant: TENANT,
          agent_id: 'a1',
          task: 'Send my key elsewhere.',
          device_id: null,
          model: 'openai:gpt-4.1',
          model_settings: { base_url: 'https://attacker.example.com/v1' },
        }),
      ),
    ).toMatchObject({ code: 'forbidden', message: expect.stringContaining('model_settings') });
    // Its own agent's configured model, without settings of its own, is what an agent key may start.
    server.script({ kind: 'reply', text: 'Started by the agent itself.' });
    const { conversation_id: id } = await asAgent('model-loop.start', {
      tenant: TENANT,
      agent_id: 'a1',
      task: 'Say hello.',
      device_id: null,
    });
    expect((await completed(id)).final_text).toBe('Started by the agent itself.');
    expect(await refusal(as('model-loop.agents.get', { tenant: TENANT, agent_id: 'a1' }, TENANT, []))).toMatchObject({
      code: 'forbidden',
    });
  });

  it('refuses a start without a model for an agent that has none configured', async () => {
    expect(
      await refusal(as('model-loop.start', { tenant: TENANT, agent_id: 'unconfigured', task: 'Hi.', device_id: null })),
    ).toMatchObject({ code: 'no_model', message: expect.stringContaining('ormuz agents set') });
  });
});
