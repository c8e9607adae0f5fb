// The MCP gateway under test, in-process on a fresh namespace and database, beside the real policy, device-bridge,
// model-loop (the executor of the platform's own tools) and approvals (the owner's decisions), and a simulated phone
// connected to the bridge. Tests talk to the gateway over HTTP with the SDKs' own clients: v1's for 2025 sessions,
// v2's for the stateless 2026-07-28 revision.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  Client as StatelessClient,
  StreamableHTTPClientTransport as StatelessHTTPClientTransport,
} from '@modelcontextprotocol/client';
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

/** The stateless protocol revision the gateway serves with the v2 SDK. */
export const STATELESS_REVISION = '2026-07-28';

/** What a `tools/call` answered, as either SDK's client gives it. */
export interface CallAnswer {
  readonly isError?: boolean;
  readonly content?: readonly unknown[];
  readonly structuredContent?: unknown;
  readonly [key: string]: unknown;
}

/** The gateway's `structuredContent` of a call. */
export interface Structured {
  readonly status: string;
  readonly call_id: string | null;
  readonly tool: string;
  readonly outcome: unknown;
  readonly approval_id?: string;
  readonly summary?: string;
  readonly message?: string;
}

export const structured = (answer: CallAnswer) => answer.structuredContent as Structured;

/** The text of an answer's content, one block a line. */
export const textOf = (answer: CallAnswer) =>
  ((answer.content ?? []) as { type: string; text?: string }[]).map((c) => c.text ?? `[${c.type}]`).join('\n');

/** Every tool of a listing, asking `page` for one page after the other; and how many pages that took. */
export async function allPages<T>(
  page: (cursor: string | undefined) => Promise<{ readonly tools: readonly T[]; readonly nextCursor?: string }>,
): Promise<{ readonly tools: T[]; readonly pages: number }> {
  const tools: T[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const answer = await page(cursor);
    tools.push(...answer.tools);
    cursor = answer.nextCursor;
    pages += 1;
  } while (cursor !== undefined);
  return { tools, pages };
}

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
  private readonly clients: { close(): Promise<void> }[] = [];

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

  /** The call id policy gives operation `operationId` of the tenant (what the gateway submits a call under). */
  async callIdOf(operationId: string, tool: string): Promise<string> {
    const identified = await this.admin('policy.identify', {
      tenant: TENANT,
      calls: [{ tool, origin: { kind: 'operation', operation_id: operationId } }],
    });
    return identified.calls[0]!.call_id;
  }

  /**
   * Cancels the request `call` with `abort` once its call `callId` is authorized (and, waiting for a phone that is not
   * connected, not started); resolves when the call is sealed, never started, and rejects otherwise.
   */
  async cancelBeforeStart(callId: string, call: Promise<unknown>, abort: AbortController): Promise<void> {
    const status = () => this.admin('policy.status', { tenant: TENANT, call_id: callId });
    await waitFor(async () => (await status().catch(() => undefined))?.status.status === 'authorized', {
      timeoutMs: 15_000,
      message: 'the call to be authorized',
    });
    abort.abort('the user changed their mind');
    if (
      await call.then(
        () => true,
        () => false,
      )
    )
      throw new Error('the cancelled request was answered');
    await waitFor(async () => (await status()).status.status === 'sealed', {
      timeoutMs: 15_000,
      message: 'the cancelled call to be sealed',
    });
    const timeline = await this.admin('policy.status', { tenant: TENANT, call_id: callId, timeline: true });
    const types = timeline.timeline!.map((e) => e.type.split('.')[2]);
    if (types.includes('started')) throw new Error(`the cancelled call started: ${types.join(', ')}`);
  }

  /**
   * Expects `answer` to be `device.list_contacts` run on the phone: succeeded, its data fenced as untrusted from the
   * device, as recorded. Its structured content.
   */
  async expectRanOnPhone(answer: CallAnswer): Promise<Structured> {
    expect(answer.isError).toBe(false);
    const s = structured(answer);
    expect(s).toMatchObject({ status: 'succeeded', tool: 'device.list_contacts' });
    expect(s.call_id).toMatch(/^call_[0-9a-f]{32}$/);
    expect(s.outcome).toEqual(expect.objectContaining({ contacts: expect.any(Array) }));
    expect(textOf(answer)).toContain(`<<<BEGIN UNTRUSTED DATA ${s.call_id}>>>`);
    expect(textOf(answer)).toContain(`device:${DEVICE}`);
    const status = await this.admin('policy.status', { tenant: TENANT, call_id: s.call_id! });
    expect(status.status.status).toBe('succeeded');
    return s;
  }

  /**
   * Expects `answer` to be `device.send_message` answered at once as pending the owner's approval, and the call to
   * stay staged with that approval. Its structured content.
   */
  async expectStaged(answer: CallAnswer): Promise<Structured> {
    expect(answer.isError).toBe(false);
    const s = structured(answer);
    expect(s.status).toBe('pending_confirmation');
    expect(s.approval_id).toEqual(expect.any(String));
    expect(s.summary).toEqual(expect.any(String));
    expect(textOf(answer)).toContain('ormuz.check_call_status');
    expect(textOf(answer)).toContain('Do not call device.send_message again');
    const status = await this.admin('policy.status', { tenant: TENANT, call_id: s.call_id! });
    expect(status.status.status).toBe('staged');
    expect(status.status.pending_approval?.approval_id).toBe(s.approval_id);
    return s;
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

  /**
   * A v2 SDK client of the stateless 2026-07-28 revision (pinned: `server/discover`, never `initialize`) with
   * `apiKey`, acting on the phone unless `device` says otherwise; rejects as the SDK does when the gateway refuses.
   */
  async statelessClient(apiKey: string | null, device: string | null = DEVICE): Promise<StatelessClient> {
    const headers: Record<string, string> = {};
    if (apiKey) headers.authorization = `Bearer ${apiKey}`;
    if (device) headers['ormuz-device'] = device;
    const client = new StatelessClient(
      { name: 'ormuz-test', version: '2.0.0' },
      { versionNegotiation: { mode: { pin: STATELESS_REVISION } } },
    );
    await client.connect(new StatelessHTTPClientTransport(this.url, { requestInit: { headers } }));
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
