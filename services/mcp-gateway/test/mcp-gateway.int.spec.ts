/**
 * The MCP front door with the SDK's own client over Streamable HTTP, against the gateway beside the real policy,
 * device-bridge and a simulated phone: the tool list is the agent's grant, calls go through the gate (a low-risk one
 * runs on the phone, a high-risk one stays staged), the endpoint refuses what it must, and one operation id is one
 * execution however many times it is sent.
 */
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  McpError,
  EmptyResultSchema,
  ErrorCode,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { callRpc } from '@ormuz/service-kit';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { bearerFor, waitFor } from '@ormuz/testing';
import {
  allPages,
  GatewayPlatform,
  INITIALIZE,
  LATE_DEVICE,
  structured,
  TENANT,
  textOf as text,
} from './gateway.fixture.js';

const AGENT = 'mcp-agent';

describe('mcp-gateway', () => {
  const platform = new GatewayPlatform();
  let apiKey: string;
  let client: Client;

  beforeAll(async () => {
    // Two tools a page, so that listing the grant takes several pages.
    await platform.open({
      MCP_TOOLS_PAGE_SIZE: '2',
      MCP_MAX_BODY_BYTES: '65536',
      MCP_CALL_WAIT_MS: '20000',
      // Longer than any wait: a call is answered with its outcome only because the gateway hears the call's appends
      // (CallAppends); were it to read the status only at this bound, every wait would end as still running.
      MCP_CALL_POLL_MS: '60000',
      // Small enough that a screen observation is cut short; model-loop, which runs ormuz.read_more, reads on in parts
      // of the same bound.
      MCP_RESULT_MAX_BYTES: '256',
      MODEL_LOOP_TOOL_RESULT_MAX_BYTES: '256',
    });
    await platform.admin('policy.grants.set', {
      tenant: TENANT,
      agent_id: AGENT,
      allow: ['device'],
      deny: ['device.toggle_setting'],
    });
    apiKey = (await platform.key(AGENT)).apiKey;
    client = await platform.client(apiKey);
  }, 120_000);
  afterAll(() => platform.close(), 60_000);

  /** Every tool of the grant, page after page. */
  const listAll = (c: Client) => allPages((cursor) => c.listTools(cursor === undefined ? {} : { cursor }));

  it('lists exactly what policy offers the agent, page by page, with titles and annotations', async () => {
    // The platform's own tools come with every grant; of them, MCP is served the two that read calls (the directory
    // tools are what tools/list itself is).
    const offered = (await platform.admin('policy.tools', { tenant: TENANT, agent_id: AGENT })).tools.filter(
      (t) => t.executor === 'device' || t.name === 'ormuz.check_call_status' || t.name === 'ormuz.read_more',
    );
    const { tools, pages } = await listAll(client);
    expect(tools.map((t) => t.name)).toEqual(offered.map((t) => t.name));
    expect(pages).toBe(Math.ceil(offered.length / 2));
    const names = tools.map((t) => t.name);
    expect(names).toContain('device.list_contacts');
    expect(names).not.toContain('device.toggle_setting');
    expect(names).toEqual(expect.arrayContaining(['ormuz.check_call_status', 'ormuz.read_more']));
    expect(names).not.toContain('ormuz.search_tools');
    expect(tools.find((t) => t.name === 'ormuz.check_call_status')!.annotations).toMatchObject({
      readOnlyHint: true,
      openWorldHint: false,
    });
    const contacts = tools.find((t) => t.name === 'device.list_contacts')!;
    expect(contacts.title).toBe('Device: list contacts');
    expect(contacts.annotations).toMatchObject({
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: true,
    });
    expect(contacts.inputSchema).toEqual({
      ...offered.find((t) => t.name === 'device.list_contacts')!.parameters,
      type: 'object',
    });
    const send = tools.find((t) => t.name === 'device.send_message')!;
    expect(send.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: false });
  });

  it('refuses a cursor it did not give as invalid params', async () => {
    await expect(client.listTools({ cursor: 'not-a-cursor' })).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
  });

  it('runs a low-risk device tool and answers its outcome, fenced, with progress while it waits', async () => {
    const progress: number[] = [];
    const result = await client.callTool(
      { name: 'device.list_contacts', arguments: { name_query: 'a', limit: 1 } },
      undefined,
      { onprogress: (p) => progress.push(p.progress) },
    );
    await platform.expectRanOnPhone(result);
    expect(progress.length).toBeGreaterThan(0);
  });

  it('answers a high-risk call at once as pending_confirmation, and it stays staged', async () => {
    const result = await client.callTool({
      name: 'device.send_message',
      arguments: { recipient: 'Alice Martin', message_body: 'Running late.' },
    });
    const s = await platform.expectStaged(result);
    // What the answer says to do works over MCP: the platform reads the call's recorded status.
    const check = await client.callTool({ name: 'ormuz.check_call_status', arguments: { call_id: s.call_id } });
    expect(check.isError).toBe(false);
    expect(structured(check)).toMatchObject({ status: 'succeeded', tool: 'ormuz.check_call_status' });
    expect(structured(check).outcome).toMatchObject({ call_id: s.call_id, status: 'pending_confirmation' });
  });

  it('reads the rest of a result cut short with ormuz.read_more, part after part', async () => {
    const first = await client.callTool({ name: 'device.screen_observe', arguments: {} });
    expect(structured(first)).toMatchObject({ status: 'succeeded', partial: true, outcome: null });
    let continuation = /"continuation":"([^"]+)"/.exec(text(first))?.[1];
    expect(continuation).toBeDefined();
    let parts = 0;
    while (continuation) {
      const more = await client.callTool({ name: 'ormuz.read_more', arguments: { continuation } });
      expect(more.isError).toBe(false);
      const part = structured(more).outcome as { content: string; partial: boolean; continuation?: string };
      parts += 1;
      continuation = part.partial ? part.continuation : undefined;
    }
    expect(parts).toBeGreaterThan(0);
  });

  it('leaves a staged call governed when its client goes away, and another session reads its outcome later', async () => {
    const { apiKey: leavingKey } = await platform.key(AGENT);
    const leaving = await platform.client(leavingKey);
    const staged = await leaving.callTool({
      name: 'device.send_message',
      arguments: { recipient: 'Alice Martin', message_body: 'Left early.' },
    });
    const { call_id, status } = structured(staged);
    expect(status).toBe('pending_confirmation');
    await leaving.close();
    // Still staged: nothing ran, nothing was dropped with the session.
    expect((await platform.admin('policy.status', { tenant: TENANT, call_id: call_id! })).status.status).toBe('staged');
    const later = await platform.client(apiKey);
    const check = await later.callTool({ name: 'ormuz.check_call_status', arguments: { call_id } });
    expect(structured(check).outcome).toMatchObject({ call_id, status: 'pending_confirmation' });
  });

  it('refuses a tool outside the grant, and a misspelt one naming the closest tools', async () => {
    const denied = await client.callTool({
      name: 'device.toggle_setting',
      arguments: { setting: 'wifi', enabled: false },
    });
    expect(denied.isError).toBe(true);
    expect(structured(denied).status).toBe('refused');
    const misspelt = await client.callTool({ name: 'device.list_contact', arguments: {} });
    expect(misspelt.isError).toBe(true);
    expect(structured(misspelt).status).toBe('refused');
    expect(text(misspelt)).toContain('device.list_contacts');
  });

  it('runs a platform tool it does not list like any granted call: through the gate, by the platform', async () => {
    const search = await client.callTool({ name: 'ormuz.search_tools', arguments: { query: 'contacts' } });
    expect(search.isError).toBe(false);
    expect(structured(search).status).toBe('succeeded');
    expect(text(search)).toContain('device.list_contacts');
  });

  it('refuses arguments of the wrong type with what to fix, running nothing', async () => {
    const result = await client.callTool({ name: 'device.list_contacts', arguments: { limit: 'many' } });
    expect(result.isError).toBe(true);
    expect(structured(result).status).toBe('refused');
    expect(text(result)).toContain('limit');
  });

  it('runs a request sent 100 times at once under one operation id exactly once', async () => {
    const _meta = { 'ormuz/operation_id': 'op-concurrent-1' };
    const results = await Promise.all(
      Array.from({ length: 100 }, () =>
        client.callTool({ name: 'device.list_contacts', arguments: { limit: 3 }, _meta }, undefined, {
          timeout: 60_000,
        }),
      ),
    );
    const ids = new Set(results.map((r) => structured(r).call_id));
    expect(ids.size).toBe(1);
    expect(results.every((r) => structured(r).status === 'succeeded')).toBe(true);
    const [callId] = [...ids];
    const status = await platform.admin('policy.status', { tenant: TENANT, call_id: callId!, timeline: true });
    const types = status.timeline!.map((e) => e.type.split('.')[2]);
    expect(types.filter((t) => t === 'requested')).toHaveLength(1);
    expect(types.filter((t) => t === 'started')).toHaveLength(1);
    expect(types.filter((t) => t === 'succeeded')).toHaveLength(1);
    // From another session, the same operation id is the same call.
    const other = await platform.client(apiKey);
    const again = await other.callTool({ name: 'device.list_contacts', arguments: { limit: 3 }, _meta });
    expect(structured(again).call_id).toBe(callId);
  }, 120_000);

  it('answers an unknown method with method not found', async () => {
    await expect(client.request({ method: 'ormuz/nothing', params: {} }, EmptyResultSchema)).rejects.toMatchObject({
      code: ErrorCode.MethodNotFound,
    });
    expect(McpError).toBeDefined();
  });

  it('answers a body that is not JSON with a JSON-RPC parse error, and a body too large with 413', async () => {
    const bad = await platform.raw('POST', { authorization: `Bearer ${apiKey}` }, '{"jsonrpc": "2.0", "id": 1,');
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    const large = await platform.raw('POST', { authorization: `Bearer ${apiKey}` }, `"${'x'.repeat(70_000)}"`);
    expect(large.status).toBe(413);
    expect(large.json).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
  });

  it('refuses a request without a key, or with a revoked key, with 401 and a message saying why', async () => {
    const none = await platform.raw('POST', {}, INITIALIZE);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(none.json.error.message).toMatch(/needs an agent API key/);

    const { apiKey: doomed, keyId } = await platform.key('mcp-revoked');
    const session = await platform.client(doomed, null);
    await platform.admin('policy.keys.revoke', { tenant: TENANT, agent_id: 'mcp-revoked', key_id: keyId });
    const revoked = await platform.raw('POST', { authorization: `Bearer ${doomed}` }, INITIALIZE);
    expect(revoked.status).toBe(401);
    expect(revoked.json.error.message).toMatch(/revoked/);
    // The open session stops too: every request is checked against the key.
    await expect(session.listTools()).rejects.toThrow(/401|revoked/);
  });

  it("does not find a session with another key, and refuses another tenant's device or origin", async () => {
    const sessionId = (client.transport as { sessionId?: string }).sessionId!;
    const { apiKey: otherKey } = await platform.key(AGENT);
    const list = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} });
    const stolen = await platform.raw(
      'POST',
      { authorization: `Bearer ${otherKey}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' },
      list,
    );
    expect(stolen.status).toBe(404);
    const foreign = await platform.raw(
      'POST',
      { authorization: `Bearer ${apiKey}`, 'ormuz-device': 'globex/phone-1' },
      INITIALIZE,
    );
    expect(foreign.status).toBe(403);
    expect(foreign.json.error.message).toMatch(/tenant globex/);
    const rebound = await platform.raw(
      'POST',
      { authorization: `Bearer ${apiKey}`, origin: 'http://evil.example' },
      INITIALIZE,
    );
    expect(rebound.status).toBe(403);
    expect(rebound.json.error.message).toMatch(/origin/);
  });

  it('refuses a 10 MB argument before anything is recorded', async () => {
    const _meta = { 'ormuz/operation_id': 'op-huge-1' };
    await expect(
      client.callTool({
        name: 'device.send_message',
        arguments: { recipient: 'Alice Martin', message_body: 'x'.repeat(10 * 1024 * 1024) },
        _meta,
      }),
    ).rejects.toThrow(/413|larger than/);
    const callId = await platform.callIdOf('op-huge-1', 'device.send_message');
    await expect(platform.admin('policy.status', { tenant: TENANT, call_id: callId })).rejects.toMatchObject({
      code: 'call_not_found',
    });
    // The session is unharmed.
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  });

  it('seals a call the client cancels before it has started, so that it never runs', async () => {
    // The call waits for a phone that is not connected: it is authorized and has not started.
    const waiting = await platform.client(apiKey, LATE_DEVICE);
    const _meta = { 'ormuz/operation_id': 'op-cancel-1' };
    const callId = await platform.callIdOf('op-cancel-1', 'device.list_contacts');
    const abort = new AbortController();
    const call = waiting.callTool({ name: 'device.list_contacts', arguments: { limit: 2 }, _meta }, undefined, {
      signal: abort.signal,
    });
    await platform.cancelBeforeStart(callId, call, abort);
  }, 60_000);

  it("tells open sessions that the tools changed when the agent's grant changes, and lists the new grant", async () => {
    const watcher = await platform.client(apiKey);
    let changed = 0;
    watcher.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed += 1;
    });
    const before = (await listAll(watcher)).tools.map((t) => t.name);
    expect(before).toContain('device.send_message');
    await platform.admin('policy.grants.set', {
      tenant: TENANT,
      agent_id: AGENT,
      allow: ['device'],
      deny: ['device.toggle_setting', 'device.send_message'],
    });
    try {
      await waitFor(() => changed > 0, { timeoutMs: 10_000, message: 'notifications/tools/list_changed' });
      const { tools } = await listAll(watcher);
      expect(tools.map((t) => t.name)).not.toContain('device.send_message');
      expect(tools.map((t) => t.name)).toContain('device.list_contacts');
    } finally {
      await platform.admin('policy.grants.set', {
        tenant: TENANT,
        agent_id: AGENT,
        allow: ['device'],
        deny: ['device.toggle_setting'],
      });
    }
  });

  /** Sends a message to Alice as a task under `operationId`, and waits until its call is staged for the owner. */
  async function stagedTask(operationId: string, message: string) {
    const created = await client.request(
      {
        method: 'tools/call',
        params: {
          name: 'device.send_message',
          arguments: { recipient: 'Alice Martin', message_body: message },
          task: { ttl: 60_000 },
          _meta: { 'ormuz/operation_id': operationId },
        },
      },
      CreateTaskResultSchema,
    );
    const callId = await platform.callIdOf(operationId, 'device.send_message');
    const staged = await waitFor(
      async () => {
        const status = await platform
          .admin('policy.status', { tenant: TENANT, call_id: callId })
          .catch(() => undefined);
        return status?.status.pending_approval ? status : undefined;
      },
      { timeoutMs: 15_000, message: 'the task call to be staged' },
    );
    return { taskId: created.task.taskId, callId, staged };
  }

  it('runs a high-risk call as a task: working while the owner decides, completed with the real outcome', async () => {
    const send = (await listAll(client)).tools.find((t) => t.name === 'device.send_message')!;
    expect(send.execution).toEqual({ taskSupport: 'optional' });
    const { taskId, callId, staged } = await stagedTask('op-task-1', 'On my way.');
    expect(taskId).toMatch(/^[0-9a-f]{32}$/);
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('working');
    // Another key's session does not find the task.
    const { apiKey: otherKey } = await platform.key(AGENT);
    const other = await platform.client(otherKey);
    await expect(other.experimental.tasks.getTask(taskId)).rejects.toThrow(/not found/i);

    const owner = await bearerFor(TENANT, ['owner'], 'owner@acme');
    await callRpc(
      platform.nc,
      platform.namespace,
      'approvals.approve',
      { tenant: TENANT, approval_id: staged.status.pending_approval!.approval_id },
      { credential: owner },
    );
    await waitFor(async () => (await client.experimental.tasks.getTask(taskId)).status === 'completed', {
      timeoutMs: 30_000,
      message: 'the task to complete once the owner approved and the phone sent',
    });
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.structuredContent).toMatchObject({ status: 'succeeded', call_id: callId });
  }, 60_000);

  it('seals the call of a task the client cancels while the owner has not decided, so that it never runs', async () => {
    const { taskId, callId } = await stagedTask('op-task-cancel-1', 'Never mind.');
    const cancelled = await client.experimental.tasks.cancelTask(taskId);
    expect(cancelled.status).toBe('cancelled');
    const sealed = await waitFor(
      async () => {
        const status = await platform.admin('policy.status', { tenant: TENANT, call_id: callId });
        return status.status.status === 'sealed' ? status : undefined;
      },
      { timeoutMs: 15_000, message: 'the cancelled task call to be sealed' },
    );
    expect(sealed.status).toMatchObject({ status: 'sealed' });
    // The task stays cancelled: the call's end is not stored on it.
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('cancelled');
  }, 60_000);
});
