// The MCP gateway under test, in-process on a fresh namespace and database, beside the real policy, device-bridge,
// model-loop (the executor of the platform's own tools) and approvals (the owner's decisions), and a simulated phone
// connected to the bridge. Tests talk to the gateway over HTTP with the SDK's own client.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RpcName, RpcReplyOf, RpcRequestOf } from '@ormuz/contracts';
import { runSimulatedDevice, type SimulatedDeviceHandle } from '@ormuz/device-sdk';
import { connectNats, streamName } from '@ormuz/event-log';
import { callRpc, startService, type RunningService } from '@ormuz/service-kit';
import { adminFor, createTestDatabase, randomNamespace, testEnv, waitFor, type TestDatabase } from '@ormuz/testing';
// Tests may start another service in-process; service source never imports one.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { deviceBridgeService, loadDeviceBridgeConfig } from '../../device-bridge/src/index.js';
// eslint-disable-next-line @nx/enforce-module-boundaries
import { loadPolicyConfig, policyService } from '../../policy/src/index.js';
// eslint-disable-next-line @nx/enforce-module-boundaries
import { loadModelLoopConfig, modelLoopService } from '../../model-loop/src/index.js';
// eslint-disable-next-line @nx/enforce-module-boundaries
import { approvalsService, loadApprovalsConfig } from '../../approvals/src/index.js';
import { loadMcpGatewayConfig, mcpGatewayService } from '../src/index.js';

/** A JSON-RPC error answer, as the gateway refuses a request (a body that is not JSON reads as its message). */
export interface JsonRpcAnswer {
  readonly jsonrpc?: string;
  readonly id?: unknown;
  readonly error: { readonly code: number; readonly message: string };
}

export const TENANT = 'acme';
export const DEVICE = 'phone-1';
/** A second phone with a credential, connected only when a test says so (until then its calls wait for it). */
export const LATE_DEVICE = 'phone-2';

export class GatewayPlatform {
  readonly namespace = randomNamespace('mcp');
  db!: TestDatabase;
  gateway!: RunningService;
  /** `http://127.0.0.1:<port>/mcp`. */
  url!: URL;
  nc!: NatsConnection;
  jsm!: JetStreamManager;
  private readonly running: RunningService[] = [];
  private readonly phones: SimulatedDeviceHandle[] = [];
  private devicesUrl = '';
  /** The environment the services were started with (a test starts the gateway as a process with it). */
  env: Record<string, string> = {};
  private journals = '';
  private readonly clients: Client[] = [];

  /**
   * Starts policy, the bridge, model-loop, the gateway (`extraEnv` on top; none with `skipGateway`, for a test that
   * runs it as a process) and a connected simulated phone.
   */
  async open(extraEnv: Record<string, string> = {}, skipGateway = false): Promise<void> {
    this.db = await createTestDatabase();
    this.nc = await connectNats({ url: testEnv().natsUrl, name: 'mcp-test' });
    this.jsm = await jetstreamManager(this.nc);
    const env = {
      NATS_URL: testEnv().natsUrl,
      DATABASE_URL: this.db.url,
      ORMUZ_NAMESPACE: this.namespace,
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      DEVICE_BRIDGE_PORT: '0',
      DEVICE_TOKENS: `${TENANT}:${DEVICE}:secret-1,${TENANT}:${LATE_DEVICE}:secret-2`,
      MCP_GATEWAY_PORT: '0',
      APPROVALS_PORT: '0',
      ...extraEnv,
    };
    this.env = env;
    // One at a time: the first claims the database for the namespace; policy migrates the API keys' schema.
    this.running.push(await startService(policyService(loadPolicyConfig(env))));
    const bridge = await startService(deviceBridgeService(loadDeviceBridgeConfig(env)));
    this.running.push(bridge);
    this.running.push(await startService(modelLoopService(loadModelLoopConfig(env))));
    this.running.push(await startService(approvalsService(loadApprovalsConfig(env))));
    if (!skipGateway) {
      this.gateway = await startService(mcpGatewayService(loadMcpGatewayConfig(env)));
      this.running.push(this.gateway);
      this.url = new URL(`${this.gateway.httpUrl!}/mcp`);
    }
    this.journals = mkdtempSync(join(tmpdir(), 'mcp-gateway-test-'));
    this.devicesUrl = bridge.infra.endpoints.devices!;
    await this.connectPhone(DEVICE, 'secret-1');
  }

  /** Connects a simulated phone of the tenant and waits until the bridge has it. */
  async connectPhone(deviceId: string, token = deviceId === LATE_DEVICE ? 'secret-2' : 'secret-1'): Promise<void> {
    this.phones.push(
      runSimulatedDevice({
        url: this.devicesUrl,
        tenant: TENANT,
        deviceId,
        token,
        journalDir: join(this.journals, deviceId),
        backoff: { initialDelayMs: 20, maxDelayMs: 200 },
      }),
    );
    await waitFor(
      async () =>
        (await this.admin('device-bridge.devices', { tenant: TENANT })).devices.some((d) => d.device_id === deviceId),
      { timeoutMs: 20_000, message: `${deviceId} to connect` },
    );
  }

  /** A command run by an admin of the tenant. */
  admin<N extends RpcName>(name: N, body: NoInfer<RpcRequestOf<N>>): Promise<NoInfer<RpcReplyOf<N>>> {
    return adminFor(body).then((credential) => callRpc(this.nc, this.namespace, name, body, { credential }));
  }

  /** A fresh API key for `agentId`, as a tenant admin issues it. */
  async key(agentId: string): Promise<{ readonly apiKey: string; readonly keyId: string }> {
    const issued = await this.admin('policy.keys.issue', { tenant: TENANT, agent_id: agentId });
    return { apiKey: issued.api_key, keyId: issued.key.key_id };
  }

  /** An SDK client connected to the gateway with `apiKey`, acting on the phone unless `device` says otherwise. */
  async client(apiKey: string, device: string | null = DEVICE, url: URL = this.url): Promise<Client> {
    const headers: Record<string, string> = { authorization: `Bearer ${apiKey}` };
    if (device) headers['ormuz-device'] = device;
    const client = new Client({ name: 'ormuz-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
    this.clients.push(client);
    return client;
  }

  /** One raw HTTP request to the endpoint; the answer's JSON body when it has one. */
  async raw(
    method: string,
    headers: Record<string, string>,
    body?: string,
  ): Promise<{ readonly status: number; readonly headers: Headers; readonly json: JsonRpcAnswer }> {
    const res = await fetch(this.url, {
      method,
      headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body }),
    });
    const text = await res.text();
    let json: JsonRpcAnswer;
    try {
      json = JSON.parse(text) as JsonRpcAnswer;
    } catch {
      json = { error: { code: 0, message: text } };
    }
    return { status: res.status, headers: res.headers, json };
  }

  async close(): Promise<void> {
    for (const client of this.clients) await client.close().catch(() => undefined);
    for (const phone of this.phones) await phone.close();
    for (const svc of this.running.reverse()) await svc.close();
    for (const context of ['calls', 'devices', 'conversations'] as const) {
      await this.jsm?.streams.delete(streamName(this.namespace, context)).catch(() => false);
    }
    await this.nc?.close();
    await this.db?.drop();
    if (this.journals) rmSync(this.journals, { recursive: true, force: true });
  }
}

/** The body of an `initialize` request, as a client sends it first. */
export const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});
