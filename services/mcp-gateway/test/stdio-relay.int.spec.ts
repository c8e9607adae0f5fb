/**
 * `ormuz mcp`, the stdio relay for MCP clients that only start local servers: the SDK's stdio client (v1's for a 2025
 * session, v2's for the stateless 2026-07-28 revision) starts the compiled CLI (run `npm run build` after changing
 * it) and reaches the gateway's tools through it.
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client as StatelessClient } from '@modelcontextprotocol/client';
import { StdioClientTransport as StatelessStdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { DEVICE, GatewayPlatform, STATELESS_REVISION, TENANT } from './gateway.fixture.js';

const CLI = join(import.meta.dirname, '..', '..', '..', 'tools', 'cli', 'dist', 'main.js');
const AGENT = 'stdio-agent';

describe('ormuz mcp (stdio relay)', () => {
  const platform = new GatewayPlatform();
  let apiKey: string;
  const clients: { close(): Promise<void> }[] = [];

  beforeAll(async () => {
    await platform.open();
    await platform.admin('policy.grants.set', { tenant: TENANT, agent_id: AGENT, allow: ['device.list_contacts'] });
    apiKey = (await platform.key(AGENT)).apiKey;
  }, 120_000);
  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => undefined);
    await platform.close();
  }, 60_000);

  /** A client that starts `ormuz mcp` with `args` and talks to it on stdio. */
  async function relayed(args: readonly string[]): Promise<Client> {
    const client = new Client({ name: 'stdio-test', version: '1.0.0' });
    clients.push(client);
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', ...args], stderr: 'pipe' }),
    );
    return client;
  }

  it("lists the agent's grant and runs a call through the relay", async () => {
    const client = await relayed(['--key', apiKey, '--url', platform.url.href, '--device', DEVICE]);
    const { tools } = await client.listTools();
    // The grant's device tool, and the platform's two that read calls.
    expect(tools.map((t) => t.name).sort()).toEqual([
      'device.list_contacts',
      'ormuz.check_call_status',
      'ormuz.read_more',
    ]);
    const result = await client.callTool({ name: 'device.list_contacts', arguments: { limit: 2 } });
    expect(result.isError).toBe(false);
    expect(result.structuredContent).toMatchObject({ status: 'succeeded', tool: 'device.list_contacts' });
  });

  it('relays the stateless 2026-07-28 revision as it is: discovered, listed and called without a session', async () => {
    const client = new StatelessClient(
      { name: 'stdio-test', version: '2.0.0' },
      { versionNegotiation: { mode: { pin: STATELESS_REVISION } } },
    );
    clients.push(client);
    await client.connect(
      new StatelessStdioClientTransport({
        command: process.execPath,
        args: [CLI, 'mcp', '--key', apiKey, '--url', platform.url.href, '--device', DEVICE],
        stderr: 'pipe',
      }),
    );
    expect(client.getNegotiatedProtocolVersion()).toBe(STATELESS_REVISION);
    expect(client.getServerVersion()).toMatchObject({ name: 'ormuz' });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('device.list_contacts');
    const result = await client.callTool({ name: 'device.list_contacts', arguments: { limit: 2 } });
    expect(result.isError).toBe(false);
    expect(result.structuredContent).toMatchObject({ status: 'succeeded', tool: 'device.list_contacts' });
  });

  it('answers the client with the reason when the gateway refuses the key', async () => {
    const client = new Client({ name: 'stdio-test', version: '1.0.0' });
    clients.push(client);
    await expect(
      client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [CLI, 'mcp', '--key', 'ormz_notakey_0000', '--url', platform.url.href],
          stderr: 'pipe',
        }),
      ),
    ).rejects.toThrow(/Ormuz gateway/);
  });
});
