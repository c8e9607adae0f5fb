/**
 * The stateless 2026-07-28 revision of MCP with the v2 SDK's own client (`@modelcontextprotocol/client`, pinned to the
 * revision: `server/discover`, no `initialize`, no session), against the gateway beside the real policy,
 * device-bridge and a simulated phone: the same front door as a 2025 session (the grant as tools/list, calls through
 * the gate, the API key on every request), without its state.
 */
import { SdkError, SdkErrorCode, type Client } from '@modelcontextprotocol/client';
import { waitFor } from '@ormuz/testing';
import { allPages, GatewayPlatform, LATE_DEVICE, STATELESS_REVISION, structured, TENANT } from './gateway.fixture.js';

const AGENT = 'mcp-stateless-agent';

describe('mcp-gateway, stateless 2026-07-28', () => {
  const platform = new GatewayPlatform();
  let apiKey: string;
  let client: Client;

  const grant = (deny: string[]) =>
    platform.admin('policy.grants.set', { tenant: TENANT, agent_id: AGENT, allow: ['device'], deny });

  beforeAll(async () => {
    // Two tools a page, so that listing the grant takes several pages.
    await platform.open({ MCP_TOOLS_PAGE_SIZE: '2', MCP_CALL_WAIT_MS: '20000' });
    await grant(['device.toggle_setting']);
    apiKey = (await platform.key(AGENT)).apiKey;
    client = await platform.statelessClient(apiKey);
  }, 120_000);
  afterAll(() => platform.close(), 60_000);

  /**
   * Every tool of the grant, asking page after page (`tools/list` itself: the client's `listTools()` without a cursor
   * walks the pages on its own).
   */
  const listAll = (c: Client) =>
    allPages((cursor) => c.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } }));

  it('is discovered with server/discover: the revision, the server, its instructions, no session', async () => {
    expect(client.getNegotiatedProtocolVersion()).toBe(STATELESS_REVISION);
    expect(client.getServerVersion()).toMatchObject({ name: 'ormuz', title: 'Ormuz' });
    expect(client.getInstructions()).toMatch(/goes through the Ormuz runtime/);
    const discovered = await client.discover();
    expect(discovered.supportedVersions).toContain(STATELESS_REVISION);
    expect(discovered.capabilities.tools).toEqual({ listChanged: true });
    expect(discovered.capabilities.tasks).toBeUndefined();
    expect((client.transport as { sessionId?: string }).sessionId).toBeUndefined();
  });

  it('lists exactly what policy offers the agent, page by page, with annotations and no task support', async () => {
    const offered = (await platform.admin('policy.tools', { tenant: TENANT, agent_id: AGENT })).tools.filter(
      (t) => t.executor === 'device' || t.name === 'ormuz.check_call_status' || t.name === 'ormuz.read_more',
    );
    const { tools, pages } = await listAll(client);
    expect(tools.map((t) => t.name)).toEqual(offered.map((t) => t.name));
    expect(pages).toBe(Math.ceil(offered.length / 2));
    expect((await client.listTools()).tools).toEqual(tools);
    expect(tools.map((t) => t.name)).not.toContain('device.toggle_setting');
    const send = tools.find((t) => t.name === 'device.send_message')!;
    expect(send.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: false });
    expect(send.execution).toBeUndefined();
    await expect(client.listTools({ cursor: 'not-a-cursor' })).rejects.toMatchObject({ code: -32602 });
  });

  it('runs a low-risk device tool and answers its outcome, fenced, with progress while it waits', async () => {
    const progress: number[] = [];
    const result = await client.callTool(
      { name: 'device.list_contacts', arguments: { name_query: 'a', limit: 1 } },
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
    await platform.expectStaged(result);
  });

  it('runs one operation id once, however many requests carry it, and a re-sent call once', async () => {
    const _meta = { 'ormuz/operation_id': 'op-stateless-1' };
    const ask = () => client.callTool({ name: 'device.list_contacts', arguments: { limit: 1 }, _meta });
    const [first, again] = await Promise.all([ask(), ask()]);
    expect(structured(first).call_id).toBe(await platform.callIdOf('op-stateless-1', 'device.list_contacts'));
    expect(structured(again).call_id).toBe(structured(first).call_id);
    // Without one, a request id ties nothing together (there is no session), but the same call re-sent within the
    // window is the original one, and another call is another.
    const resend = () => client.callTool({ name: 'device.list_contacts', arguments: { name_query: 'b', limit: 1 } });
    const [a, b] = await Promise.all([resend(), resend()]);
    expect(structured(b).call_id).toBe(structured(a).call_id);
    const other = await client.callTool({ name: 'device.list_contacts', arguments: { name_query: 'c', limit: 1 } });
    expect(structured(other).call_id).not.toBe(structured(a).call_id);
  });

  it('refuses a client without a key, with a revoked key, or on another tenant’s device', async () => {
    const refusal = (promise: Promise<unknown>) =>
      promise.then(
        () => undefined,
        (err: unknown) => err,
      );
    const none = await refusal(platform.statelessClient(null));
    expect(none).toBeInstanceOf(SdkError);
    expect(none).toMatchObject({ code: SdkErrorCode.ClientHttpAuthentication });

    const { apiKey: doomed, keyId } = await platform.key(AGENT);
    const before = await platform.statelessClient(doomed);
    await platform.admin('policy.keys.revoke', { tenant: TENANT, agent_id: AGENT, key_id: keyId });
    // Every request is checked against the key: a client that was let in is refused from the next request on.
    await expect(before.listTools()).rejects.toMatchObject({
      data: { status: 401, text: expect.stringMatching(/revoked/) },
    });
    await expect(refusal(platform.statelessClient(doomed))).resolves.toMatchObject({
      code: SdkErrorCode.ClientHttpAuthentication,
    });

    await expect(refusal(platform.statelessClient(apiKey, 'globex/phone-1'))).resolves.toMatchObject({
      code: SdkErrorCode.ClientHttpForbidden,
    });
  });

  it('seals a call the client cancels before it has started, so that it never runs', async () => {
    // The call waits for a phone that is not connected: it is authorized and has not started.
    const waiting = await platform.statelessClient(apiKey, LATE_DEVICE);
    const _meta = { 'ormuz/operation_id': 'op-stateless-cancel-1' };
    const callId = await platform.callIdOf('op-stateless-cancel-1', 'device.list_contacts');
    const abort = new AbortController();
    const call = waiting.callTool(
      { name: 'device.list_contacts', arguments: { limit: 2 }, _meta },
      { signal: abort.signal },
    );
    await platform.cancelBeforeStart(callId, call, abort);
  }, 60_000);

  it("tells a subscriptions/listen stream that the tools changed when the agent's grant changes", async () => {
    const watcher = await platform.statelessClient(apiKey);
    let changed = 0;
    watcher.setNotificationHandler('notifications/tools/list_changed', () => {
      changed += 1;
    });
    const subscription = await watcher.listen({ toolsListChanged: true });
    expect(subscription.honoredFilter).toMatchObject({ toolsListChanged: true });
    try {
      await grant(['device.toggle_setting', 'device.send_message']);
      await waitFor(() => changed > 0, { timeoutMs: 10_000, message: 'notifications/tools/list_changed' });
      const { tools } = await listAll(watcher);
      expect(tools.map((t) => t.name)).not.toContain('device.send_message');
      expect(tools.map((t) => t.name)).toContain('device.list_contacts');
    } finally {
      await subscription.close();
      await grant(['device.toggle_setting']);
    }
  });
});
