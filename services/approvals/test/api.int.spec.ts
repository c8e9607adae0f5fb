/**
 * The public HTTP API against the real services behind it: every route for the role it is for, the same refusals
 * on every route (no credential, another tenant), and what the edge itself refuses (malformed JSON, oversized or
 * non-JSON bodies, identifiers that could address other subjects, unknown routes).
 */
import type { ApiErrorV1 } from '@ormuz/contracts';
import { waitFor } from '@ormuz/testing';
import { API_ROUTES } from '../src/index.js';
import { ApiPlatform, type HttpAnswer } from './api.fixture.js';

const TENANT = 'acme';

type Reply = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- replies are checked field by field

describe('the HTTP API', () => {
  const platform = new ApiPlatform();
  let operator: string;
  let analyst: string;
  let owner: string;
  /** Routes that answered 200 to the role they are for. */
  const exercised = new Set<string>();

  beforeAll(async () => {
    await platform.open(['policy', 'audit', 'device-bridge', 'model-loop']);
    operator = await platform.bearer(TENANT, ['operator'], 'ops@acme');
    analyst = await platform.bearer(TENANT, ['analyst'], 'ana@acme');
    owner = await platform.bearer(TENANT, ['owner'], 'olive@acme');
  });
  afterAll(() => platform.close());

  /** Sends route `operationId` with `values` in its path (and the query and body given). */
  function send<T = Reply>(
    operationId: string,
    values: Record<string, string>,
    options: {
      readonly as?: string;
      readonly query?: Record<string, string>;
      readonly json?: unknown;
      readonly raw?: string;
      readonly headers?: Record<string, string>;
    } = {},
  ): Promise<HttpAnswer<T>> {
    const route = API_ROUTES.find((r) => r.operationId === operationId);
    if (!route) throw new Error(`no route ${operationId}`);
    const path = route.path.replace(/\{([a-z_]+)\}/g, (_, name: string) => encodeURIComponent(values[name] ?? 'x1'));
    const query = options.query ? `?${new URLSearchParams(options.query).toString()}` : '';
    return platform.request<T>(route.method.toUpperCase(), `${path}${query}`, {
      ...(options.as ? { authorization: options.as } : {}),
      ...(options.json !== undefined ? { json: options.json } : {}),
      ...(options.raw !== undefined ? { raw: options.raw } : {}),
      ...(options.headers ? { headers: options.headers } : {}),
    });
  }

  /** Sends and expects 200; returns the reply. */
  async function ok<T = Reply>(...args: Parameters<typeof send>): Promise<T> {
    const answer = await send<T>(...args);
    expect({ route: args[0], status: answer.status, body: answer.status === 200 ? 'ok' : answer.body }).toEqual({
      route: args[0],
      status: 200,
      body: 'ok',
    });
    exercised.add(args[0]);
    return answer.body;
  }

  const errorOf = (answer: HttpAnswer) => (answer.body as ApiErrorV1).error;

  const submitBody = (operationId: string, overrides: Record<string, unknown> = {}) => ({
    agent_id: 'agent-1',
    tool: 'device.screen_observe',
    arguments: {},
    origin: { kind: 'operation', operation_id: operationId },
    device_id: 'phone-1',
    ...overrides,
  });

  describe('every route, for the role it is for', () => {
    it('lets an operator submit and seal a call, and an analyst read its status, timeline and audit record', async () => {
      const submitted = await ok('policySubmit', { tenant: TENANT }, { as: operator, json: submitBody('op-api-1') });
      expect(submitted).toMatchObject({
        status: 'authorized',
        duplicate: false,
        call_id: expect.stringMatching(/^call_/),
      });
      const callId = submitted.call_id as string;

      const status = await ok(
        'policyStatus',
        { tenant: TENANT, call_id: callId },
        { as: analyst, query: { timeline: 'true' } },
      );
      expect(status.status).toMatchObject({ status: 'authorized', tool: 'device.screen_observe' });
      expect(status.timeline.length).toBeGreaterThan(0);
      const beforeSeal = new Date().toISOString();

      // The phone is offline, so the call waits for it: sealing it makes sure it never runs.
      const sealed = await ok(
        'policySeal',
        { tenant: TENANT, call_id: callId },
        {
          as: operator,
          // Who sealed it is the operator's token subject (ops@acme), never a body field.
          json: { reason: 'wrong device' },
        },
      );
      expect(sealed).toMatchObject({ status: 'sealed', already_sealed: false, sealed_by: 'ops@acme' });

      // Time travel: as the call stood before the seal, by time and by stream sequence; a time to come is refused.
      const then = await ok(
        'policyStatus',
        { tenant: TENANT, call_id: callId },
        { as: analyst, query: { as_of: beforeSeal } },
      );
      expect(then.status).toMatchObject({ status: 'authorized' });
      const bySeq = await ok(
        'policyStatus',
        { tenant: TENANT, call_id: callId },
        { as: analyst, query: { as_of: String(status.timeline.at(-1).seq), timeline: 'true' } },
      );
      expect(bySeq.status).toMatchObject({ status: 'authorized' });
      expect(bySeq.timeline).toEqual(status.timeline);
      const future = await send(
        'policyStatus',
        { tenant: TENANT, call_id: callId },
        { as: analyst, query: { as_of: new Date(Date.now() + 3_600_000).toISOString() } },
      );
      expect(future.status).toBe(400);
      expect(future.body).toMatchObject({ error: { code: 'as_of_in_future' } });
      const garbled = await send(
        'policyStatus',
        { tenant: TENANT, call_id: callId },
        { as: analyst, query: { as_of: 'yesterday' } },
      );
      expect(garbled.status).toBe(400);
      expect(garbled.body.error.message).toMatch(/as_of/);

      const audit = await waitFor(
        async () => {
          const answer = await send('auditCall', { tenant: TENANT, call_id: callId }, { as: analyst });
          return answer.status === 200 && answer.body.status === 'sealed' ? answer.body : undefined;
        },
        { message: `the audit record of ${callId} to show the seal` },
      );
      expect(audit).toMatchObject({ call_id: callId, sealed_by: 'ops@acme', seal_reason: 'wrong device' });
      exercised.add('auditCall');

      const page = await waitFor(
        async () => {
          const answer = await send(
            'auditEvents',
            { tenant: TENANT },
            { as: analyst, query: { call_id: callId, limit: '10' } },
          );
          return answer.status === 200 && answer.body.events.length >= 3 ? answer.body : undefined;
        },
        { message: `the archive to hold ${callId}'s events` },
      );
      expect(page.events.map((e: Reply) => e.event.subject)).toEqual(page.events.map(() => callId));
      exercised.add('auditEvents');
    });

    it("lets an operator set an agent's grant, and an analyst read it and the tools it offers", async () => {
      const agent = { tenant: TENANT, agent_id: 'agent-grants' };
      const grant = await ok('policyGrantsSet', agent, {
        as: operator,
        json: { allow: ['device', 'ormuz'], deny: ['device.send_message'] },
      });
      expect(grant).toMatchObject({
        agent_id: 'agent-grants',
        allow: ['device', 'ormuz'],
        deny: ['device.send_message'],
      });
      expect(await ok('policyGrantsGet', agent, { as: analyst })).toMatchObject({ allow: ['device', 'ormuz'] });
      const { tools } = await ok('policyTools', agent, { as: analyst });
      const names = (tools as Reply[]).map((t) => t.name);
      expect(names).toContain('device.screen_observe');
      expect(names).not.toContain('device.send_message');
      const { hits } = await ok('policyToolsSearch', agent, {
        as: analyst,
        query: { query: 'observe the screen', limit: '3' },
      });
      expect(hits.length).toBeGreaterThan(0);
      expect(hits.length).toBeLessThanOrEqual(3);
    });

    it("lets an operator set the tenant's finance apps, and an analyst read them", async () => {
      const set = await ok(
        'policyRiskAppsSet',
        { tenant: TENANT },
        { as: operator, json: { finance: ['com.example.bank'], not_finance: [] } },
      );
      expect(set).toEqual({ tenant: TENANT, finance: ['com.example.bank'], not_finance: [] });
      expect(await ok('policyRiskAppsGet', { tenant: TENANT }, { as: analyst })).toEqual(set);
    });

    it("lets an operator choose the tenant's taint rule, and an analyst read it", async () => {
      expect(await ok('policySettingsGet', { tenant: TENANT }, { as: analyst })).toEqual({
        tenant: TENANT,
        taint_rule: 'matching',
      });
      const set = await ok(
        'policySettingsSet',
        { tenant: TENANT },
        { as: operator, json: { taint_rule: 'every_write' } },
      );
      expect(set).toEqual({ tenant: TENANT, taint_rule: 'every_write' });
      expect(await ok('policySettingsGet', { tenant: TENANT }, { as: analyst })).toEqual(set);
    });

    it("lets an operator set an agent's model, and an analyst read it and list the tenant's", async () => {
      const agent = { tenant: TENANT, agent_id: 'model-bot' };
      const set = await ok('modelLoopAgentsSet', agent, { as: operator, json: { model: 'scripted:demo' } });
      expect(set).toMatchObject({
        tenant: TENANT,
        agent_id: 'model-bot',
        model: 'scripted:demo',
        updated_by: 'ops@acme',
      });
      expect(await ok('modelLoopAgentsGet', agent, { as: analyst })).toEqual(set);
      expect((await ok('modelLoopAgentsList', { tenant: TENANT }, { as: analyst })).agents).toContainEqual(set);
    });

    it('lets an analyst list devices, and an operator issue, list, rotate and revoke their credentials', async () => {
      expect(await ok('deviceBridgeDevices', { tenant: TENANT }, { as: analyst })).toEqual({ devices: [] });
      const device = { tenant: TENANT, device_id: 'phone-9' };
      const issued = await ok('deviceBridgeCredentialsIssue', device, { as: operator, json: { ttl_seconds: 3600 } });
      expect(issued).toMatchObject({
        token: expect.stringMatching(/^odt_/),
        credential: { device_id: 'phone-9', state: 'active' },
      });
      const listed = await ok(
        'deviceBridgeCredentialsList',
        { tenant: TENANT },
        { as: operator, query: { device_id: 'phone-9' } },
      );
      expect(listed.credentials).toEqual([expect.objectContaining({ credential_id: issued.credential.credential_id })]);
      const rotated = await ok('deviceBridgeCredentialsRotate', device, { as: operator, json: { grace_seconds: 0 } });
      expect(rotated.token).not.toBe(issued.token);
      const revoked = await ok('deviceBridgeCredentialsRevoke', device, { as: operator, json: {} });
      expect(revoked.revoked).toContain(rotated.credential.credential_id);
    });

    it("lets an operator issue, list, rotate and revoke an agent's API keys; the key then calls the API as its agent", async () => {
      const agent = { tenant: TENANT, agent_id: 'api-bot' };
      const issued = await ok('policyKeysIssue', agent, { as: operator, json: { label: 'nightly' } });
      expect(issued.api_key).toMatch(/^ormz_/);
      const listed = await ok('policyKeysList', { tenant: TENANT }, { as: operator, query: { agent_id: 'api-bot' } });
      expect(JSON.stringify(listed)).not.toContain(issued.api_key);
      expect(listed.keys).toEqual([expect.objectContaining({ key_id: issued.key.key_id })]);
      const rotated = await ok('policyKeysRotate', agent, { as: operator, json: { grace_seconds: 0 } });
      // The rotated key is an agent's credential over HTTP too: it reads its own offered tools.
      const asKey = `Bearer ${rotated.api_key}`;
      const tools = await fetch(`${platform.url}/v1/tenants/${TENANT}/agents/api-bot/tools`, {
        headers: { authorization: asKey },
      });
      expect(tools.status).toBe(200);
      const revoked = await ok('policyKeysRevoke', agent, { as: operator, json: {} });
      expect(revoked.revoked).toContain(rotated.key.key_id);
      const after = await fetch(`${platform.url}/v1/tenants/${TENANT}/agents/api-bot/tools`, {
        headers: { authorization: asKey },
      });
      expect(after.status).toBe(401);
    });

    it('lets an operator start a conversation, and an analyst read it, also as it stood then', async () => {
      const startedAt = new Date().toISOString();
      const started = await ok(
        'modelLoopStart',
        { tenant: TENANT },
        {
          as: operator,
          json: {
            agent_id: 'agent-1',
            task: 'Say hello.',
            device_id: null,
            model: 'scripted:demo',
            conversation_id: 'conv-api-1',
          },
        },
      );
      expect(started).toMatchObject({ conversation_id: 'conv-api-1' });
      const view = await waitFor(
        async () => {
          const answer = await send('modelLoopGet', { tenant: TENANT, conversation_id: 'conv-api-1' }, { as: analyst });
          return answer.status === 200 ? answer.body : undefined;
        },
        { message: 'the conversation in the read model' },
      );
      expect(view.messages[0]).toMatchObject({ role: 'user' });
      // As it stood before it started: nothing was recorded by then.
      const before = await send(
        'modelLoopGet',
        { tenant: TENANT, conversation_id: 'conv-api-1' },
        { as: analyst, query: { as_of: startedAt } },
      );
      expect(before.status).toBe(404);
      const now = await ok(
        'modelLoopGet',
        { tenant: TENANT, conversation_id: 'conv-api-1' },
        { as: analyst, query: { as_of: new Date().toISOString() } },
      );
      expect(now.messages[0]).toEqual(view.messages[0]);
      exercised.add('modelLoopGet');
    });

    it('lets an analyst list the inbox, and an owner approve one staged call and deny another', async () => {
      const stage = async (operationId: string) => {
        const reply = await ok(
          'policySubmit',
          { tenant: TENANT },
          {
            as: operator,
            json: submitBody(operationId, {
              agent_id: 'agent-2',
              tool: 'device.send_message',
              arguments: { recipient: 'Alice', message_body: 'hi' },
            }),
          },
        );
        expect(reply).toMatchObject({ status: 'staged', approval_id: expect.stringMatching(/^apr_/) });
        return reply.approval_id as string;
      };
      const [first, second] = [await stage('op-api-approve'), await stage('op-api-deny')];
      await waitFor(
        async () => {
          const { approvals } = await ok(
            'approvalsList',
            { tenant: TENANT },
            { as: analyst, query: { status: 'pending' } },
          );
          const ids = (approvals as Reply[]).map((a) => a.approval_id);
          return ids.includes(first) && ids.includes(second);
        },
        { message: 'both approvals in the inbox' },
      );
      const approved = await ok('approvalsApprove', { tenant: TENANT, approval_id: first }, { as: owner });
      expect(approved).toMatchObject({ status: 'approved', decided_by: 'olive@acme' });
      const denied = await ok(
        'approvalsDeny',
        { tenant: TENANT, approval_id: second },
        { as: owner, json: { reason: 'not now' } },
      );
      expect(denied).toMatchObject({ status: 'denied', decided_by: 'olive@acme' });
    });

    it("lets an operator register, change, list and remove the tenant's webhooks, and an owner read the delivery log", async () => {
      // A public address (TEST-NET-3), disabled: nothing is sent, and no name has to resolve.
      const created = await ok(
        'approvalsWebhooksSet',
        { tenant: TENANT },
        { as: operator, json: { url: 'https://203.0.113.7/hooks/ormuz', enabled: false, description: 'pager' } },
      );
      expect(created.secret).toMatch(/^whsec_/);
      expect(created.webhook).toMatchObject({ tenant: TENANT, enabled: false, description: 'pager' });
      const id = created.webhook.webhook_id as string;
      const changed = await ok(
        'approvalsWebhooksSet',
        { tenant: TENANT },
        { as: operator, json: { webhook_id: id, events: ['decided'] } },
      );
      expect(changed).toMatchObject({ secret: null, webhook: { webhook_id: id, events: ['decided'] } });
      const listed = await ok('approvalsWebhooksList', { tenant: TENANT }, { as: operator });
      expect(listed.webhooks).toEqual([changed.webhook]);
      expect(JSON.stringify(listed)).not.toContain(created.secret);
      const log = await ok(
        'approvalsWebhooksDeliveries',
        { tenant: TENANT },
        { as: owner, query: { webhook_id: id, status: 'delivered', limit: '10' } },
      );
      expect(log).toEqual({ deliveries: [] });
      const removed = await ok('approvalsWebhooksRemove', { tenant: TENANT, webhook_id: id }, { as: operator });
      expect(removed).toMatchObject({ webhook_id: id, removed_at: expect.any(String) });
      const again = await send('approvalsWebhooksRemove', { tenant: TENANT, webhook_id: id }, { as: operator });
      expect({ status: again.status, code: errorOf(again).code }).toEqual({ status: 404, code: 'webhook_not_found' });
    });

    it('refuses a webhook on a private address, saying which and why', async () => {
      for (const url of ['http://127.0.0.1:9/hook', 'http://[::ffff:10.0.0.1]/hook', 'http://169.254.169.254/latest']) {
        const answer = await send('approvalsWebhooksSet', { tenant: TENANT }, { as: operator, json: { url } });
        expect({ url, status: answer.status, code: errorOf(answer).code }).toEqual({
          url,
          status: 400,
          code: 'invalid_webhook',
        });
        expect(errorOf(answer).message).toMatch(
          /a (loopback|private|link-local) address\. Webhooks are sent to public addresses only/,
        );
      }
    });

    it('has exercised every command route (the event stream has its own spec)', () => {
      const commands = API_ROUTES.filter((r) => r.kind === 'command').map((r) => r.operationId);
      expect([...exercised].sort()).toEqual(commands.sort());
    });
  });

  describe('refusals on every route', () => {
    const bodyFor = (route: (typeof API_ROUTES)[number]) => (route.kind === 'command' && route.body ? {} : undefined);

    it('answers 401 without a credential', async () => {
      for (const route of API_ROUTES) {
        const answer = await send(route.operationId, { tenant: TENANT }, { json: bodyFor(route) });
        expect({ route: route.operationId, status: answer.status, code: errorOf(answer)?.code }).toEqual({
          route: route.operationId,
          status: 401,
          code: 'unauthenticated',
        });
      }
    });

    it("answers 403 to another tenant's administrator", async () => {
      const globex = await platform.bearer('globex', ['admin'], 'eve@globex');
      for (const route of API_ROUTES) {
        const answer = await send(route.operationId, { tenant: TENANT }, { as: globex, json: bodyFor(route) });
        expect({ route: route.operationId, status: answer.status, message: errorOf(answer)?.message }).toEqual({
          route: route.operationId,
          status: 403,
          message: expect.stringContaining('acts for tenant globex'),
        });
      }
    });

    it('answers 401 to a credential that does not verify or is not a bearer', async () => {
      for (const authorization of ['Bearer not-a-token', 'Basic YWxpY2U6c2VjcmV0']) {
        const answer = await send('policyStatus', { tenant: TENANT, call_id: 'call_x' }, { as: authorization });
        expect(answer.status).toBe(401);
      }
    });
  });

  describe('refusals by role', () => {
    it('keeps an analyst from submitting and sealing', async () => {
      const submit = await send(
        'policySubmit',
        { tenant: TENANT },
        { as: analyst, json: submitBody('op-api-analyst') },
      );
      expect(submit.status).toBe(403);
      expect(errorOf(submit).message).toMatch(/needs the role admin or operator/);
      const seal = await send(
        'policySeal',
        { tenant: TENANT, call_id: 'call_x' },
        {
          as: analyst,
          json: { reason: 'no' },
        },
      );
      expect(seal.status).toBe(403);
      expect(errorOf(seal).code).toBe('forbidden');
    });
  });

  describe('webhooks, by role', () => {
    it('keeps analysts from webhooks and their log, and owners from registering, listing and removing them', async () => {
      const tries: [string, string, Record<string, string>, unknown][] = [
        ['approvalsWebhooksList', analyst, {}, undefined],
        ['approvalsWebhooksSet', analyst, {}, { url: 'https://203.0.113.7/x' }],
        ['approvalsWebhooksRemove', analyst, { webhook_id: 'wh_x' }, undefined],
        ['approvalsWebhooksDeliveries', analyst, {}, undefined],
        ['approvalsWebhooksList', owner, {}, undefined],
        ['approvalsWebhooksSet', owner, {}, { url: 'https://203.0.113.7/x' }],
        ['approvalsWebhooksRemove', owner, { webhook_id: 'wh_x' }, undefined],
      ];
      for (const [operationId, as, values, json] of tries) {
        const answer = await send(operationId, { tenant: TENANT, ...values }, { as, ...(json ? { json } : {}) });
        expect({ operationId, status: answer.status, code: errorOf(answer).code }).toEqual({
          operationId,
          status: 403,
          code: 'forbidden',
        });
      }
    });
  });

  describe('what the edge refuses itself', () => {
    it('answers malformed JSON with 400 and what is wrong with it', async () => {
      const answer = await send(
        'policySubmit',
        { tenant: TENANT },
        {
          as: operator,
          raw: '{"agent_id": "agent-1", ',
          headers: { 'content-type': 'application/json' },
        },
      );
      expect(answer.status).toBe(400);
      expect(answer.contentType).toMatch(/application\/json/);
      expect(errorOf(answer)).toMatchObject({
        code: 'malformed_json',
        message: expect.stringContaining('not valid JSON'),
      });
    });

    it('answers a body that is not a JSON object, or names a path field, with 400', async () => {
      const list = await send('policySeal', { tenant: TENANT, call_id: 'call_x' }, { as: operator, json: ['sealed'] });
      expect(list.status).toBe(400);
      expect(errorOf(list).message).toContain('must be a JSON object');
      const redirect = await send(
        'policySubmit',
        { tenant: TENANT },
        { as: operator, json: { ...submitBody('op-api-t'), tenant: 'globex' } },
      );
      expect(redirect.status).toBe(400);
      expect(errorOf(redirect).message).toContain("'tenant' is given by the path");
    });

    it('answers an oversized body with 413', async () => {
      const answer = await send(
        'policySubmit',
        { tenant: TENANT },
        {
          as: operator,
          json: submitBody('op-api-big', { arguments: { text: 'x'.repeat(600 * 1024) } }),
        },
      );
      expect(answer.status).toBe(413);
      expect(errorOf(answer)).toMatchObject({ code: 'payload_too_large', message: expect.stringContaining('524288') });
    });

    it('answers a body that is not JSON with 415', async () => {
      const answer = await send(
        'policySeal',
        { tenant: TENANT, call_id: 'call_x' },
        {
          as: operator,
          raw: 'reason=no&sealed_by=me',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        },
      );
      expect(answer.status).toBe(415);
      expect(errorOf(answer).code).toBe('unsupported_media_type');
    });

    it.each(['a.b', '*', '>'])(
      'answers the id %j, which NATS would read as a subject separator or wildcard, with 400',
      async (id) => {
        const call = await send('policyStatus', { tenant: TENANT, call_id: id }, { as: analyst });
        expect(call.status).toBe(400);
        expect(errorOf(call)).toMatchObject({
          code: 'invalid_identifier',
          message: expect.stringContaining('call_id'),
        });
        const tenant = await send('policyStatus', { tenant: id, call_id: 'call_x' }, { as: analyst });
        expect(tenant.status).toBe(400);
        expect(errorOf(tenant).message).toContain('tenant');
        const agent = await send(
          'policyGrantsSet',
          { tenant: TENANT, agent_id: id },
          { as: operator, json: { allow: [] } },
        );
        expect(agent.status).toBe(400);
        const stream = await send('tenantEvents', { tenant: id }, { as: analyst });
        expect(stream.status).toBe(400);
      },
    );

    it('answers a query parameter the route does not take with 400', async () => {
      const answer = await send(
        'policyStatus',
        { tenant: TENANT, call_id: 'call_x' },
        { as: analyst, query: { tenant: 'globex' } },
      );
      expect(answer.status).toBe(400);
      expect(errorOf(answer).message).toContain('it takes timeline');
    });

    it('answers an unknown route, or a method a path does not have, with 404 in JSON', async () => {
      for (const [method, path] of [
        ['GET', '/v1/tenants/acme/nothing'],
        ['GET', '/v2/tenants/acme/calls/call_x'],
        ['DELETE', '/v1/tenants/acme/calls'],
      ] as const) {
        const answer = await platform.request(method, path, { authorization: analyst });
        expect(answer.status).toBe(404);
        expect(answer.contentType).toMatch(/application\/json/);
        expect(errorOf(answer)).toEqual({ code: 'route_not_found', message: `No route answers ${method} ${path}.` });
      }
    });
  });
});
