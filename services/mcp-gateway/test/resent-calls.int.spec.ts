/**
 * Re-sent calls: a client that lost a `tools/call`'s answer sends it again with a new JSON-RPC request id (and no
 * operation id of its own). Within the gateway's window (MCP_RESEND_WINDOW_MS) it is answered with the original call,
 * which ran once on the phone; after the window the same request is a new call and runs again.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { waitFor } from '@ormuz/testing';
import { GatewayPlatform, TENANT } from './gateway.fixture.js';

const AGENT = 'mcp-resend-agent';
/** Long enough for a call to run on a busy machine; the test after it waits this long once. */
const WINDOW_MS = 8_000;

describe('mcp-gateway: re-sent calls', () => {
  const platform = new GatewayPlatform();
  let apiKey: string;
  let client: Client;

  beforeAll(async () => {
    await platform.open({ MCP_RESEND_WINDOW_MS: String(WINDOW_MS) });
    await platform.admin('policy.grants.set', { tenant: TENANT, agent_id: AGENT, allow: ['device'] });
    apiKey = (await platform.key(AGENT)).apiKey;
    client = await platform.client(apiKey);
  }, 120_000);
  afterAll(() => platform.close(), 60_000);

  /** One `tools/call` (the SDK gives each a request id of its own): the call's id and status. */
  async function call(c: Client, args: Record<string, unknown>) {
    const result = await c.callTool({ name: 'device.list_contacts', arguments: args }, undefined, { timeout: 30_000 });
    return result.structuredContent as { readonly status: string; readonly call_id: string };
  }

  /** How many times the call started on the phone, from its timeline on the log. */
  async function starts(callId: string): Promise<number> {
    const status = await platform.admin('policy.status', { tenant: TENANT, call_id: callId, timeline: true });
    return status.timeline!.filter((e) => e.type.split('.')[2] === 'started').length;
  }

  it('answers a call re-sent with a new request id, in the session or another, with the original: one execution', async () => {
    const first = await call(client, { name_query: 'a', limit: 2 });
    expect(first.status).toBe('succeeded');
    // The same arguments in another key order are the same canonical arguments.
    const resent = await call(client, { limit: 2, name_query: 'a' });
    const elsewhere = await call(await platform.client(apiKey), { name_query: 'a', limit: 2 });
    expect(resent).toEqual(first);
    expect(elsewhere).toEqual(first);
    expect(await starts(first.call_id)).toBe(1);
    // Other arguments are another call.
    const other = await call(client, { name_query: 'a', limit: 3 });
    expect(other.call_id).not.toBe(first.call_id);
  }, 60_000);

  it('runs the same request again once the window has passed', async () => {
    const first = await call(client, { name_query: 'b', limit: 1 });
    expect(first.status).toBe('succeeded');
    // The gateway remembered the call when it reached it, before its answer: the window has passed once the answer is
    // older than it (measured from the sending, a slow delivery would leave the window open).
    const answeredAt = Date.now();
    await waitFor(() => Date.now() - answeredAt > WINDOW_MS, { timeoutMs: WINDOW_MS + 5_000, intervalMs: 100 });
    const again = await call(client, { name_query: 'b', limit: 1 });
    expect(again.status).toBe('succeeded');
    expect(again.call_id).not.toBe(first.call_id);
    expect(await starts(first.call_id)).toBe(1);
    expect(await starts(again.call_id)).toBe(1);
  }, 60_000);
});
