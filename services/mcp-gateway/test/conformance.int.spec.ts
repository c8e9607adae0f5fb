/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`, `conformance server`) against the gateway,
 * for the scenarios that apply to a server that serves tools only (README, "MCP"). The suite sends no credentials, and
 * the gateway has no unauthenticated mode: a small proxy in front of it adds an agent's API key to each request and
 * passes everything else through unchanged (the Host and Origin headers included, which the DNS-rebinding scenario
 * is about), streams included.
 */
import { spawn } from 'node:child_process';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { GatewayPlatform, TENANT } from './gateway.fixture.js';

const BIN = join(import.meta.dirname, '..', '..', '..', 'node_modules', '.bin', 'conformance');
const AGENT = 'mcp-conformance';

/** The scenarios of `conformance list` that apply to a tools-only server; README says why the others do not. */
const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'];

/**
 * Forwards every request to `target`, adding `Authorization: Bearer <apiKey>`. `close` also ends the requests still
 * open upstream (the suite's server streams), so that the gateway can stop.
 */
function keyAddingProxy(target: URL, apiKey: string): Server & { closeUpstream(): void } {
  const open = new Set<ReturnType<typeof httpRequest>>();
  const server = createServer((req, res) => {
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, authorization: `Bearer ${apiKey}` },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    open.add(upstream);
    upstream.once('close', () => open.delete(upstream));
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  return Object.assign(server, {
    closeUpstream: () => {
      for (const upstream of open) upstream.destroy();
    },
  });
}

/** Runs one scenario; its exit code and output. */
function conformance(url: string, scenario: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(BIN, ['server', '--url', url, '--scenario', scenario], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('close', (code) => resolve({ code, output }));
  });
}

describe('mcp-gateway against the official conformance suite', () => {
  const platform = new GatewayPlatform();
  let proxy: ReturnType<typeof keyAddingProxy>;
  let proxied: string;

  beforeAll(async () => {
    await platform.open();
    await platform.admin('policy.grants.set', { tenant: TENANT, agent_id: AGENT, allow: ['device'] });
    const { apiKey } = await platform.key(AGENT);
    proxy = keyAddingProxy(platform.url, apiKey);
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxied = `http://localhost:${(proxy.address() as AddressInfo).port}/mcp`;
  }, 120_000);
  afterAll(async () => {
    proxy?.closeUpstream();
    proxy?.closeAllConnections();
    await new Promise((resolve) => proxy?.close(resolve));
    await platform.close();
  }, 120_000);

  it.each(SCENARIOS)(
    'passes %s',
    async (scenario) => {
      const { code, output } = await conformance(proxied, scenario);
      if (code !== 0) throw new Error(`conformance server --scenario ${scenario} exited ${code}:\n${output}`);
      expect(output).not.toMatch(/\bFAIL(ED)?\b/);
    },
    60_000,
  );
});
