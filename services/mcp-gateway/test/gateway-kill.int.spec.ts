/**
 * kill -9 of the MCP gateway in the middle of a call. The gateway runs as a process of its own (the compiled
 * service, as in production) beside the real policy, bridge and model-loop; a call waits for a phone that is not yet
 * connected, the gateway is killed and started again, the phone connects, and the client's retry with the same
 * operation id, in a new session, observes the original call: it was governed throughout, and ran once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { waitUntilServing } from '@ormuz/service-kit';
import { freePort, waitFor } from '@ormuz/testing';
import { GatewayPlatform, LATE_DEVICE, TENANT } from './gateway.fixture.js';

const ENTRY = join(import.meta.dirname, '..', 'dist', 'main.js');
const AGENT = 'mcp-kill-agent';

describe('mcp-gateway killed mid-call', () => {
  const platform = new GatewayPlatform();
  let gateway: ChildProcess | undefined;
  let url: URL;

  /** Starts the compiled gateway on `url`'s port and waits until it answers its health command. */
  async function startGateway(): Promise<void> {
    const child = spawn(process.execPath, [ENTRY], {
      env: { ...process.env, ...platform.env, MCP_GATEWAY_PORT: url.port, LOG_LEVEL: 'silent' },
      stdio: 'ignore',
    });
    let exited = false;
    child.once('exit', () => (exited = true));
    gateway = child;
    await waitUntilServing(platform.nc, platform.namespace, 'mcp-gateway', {
      timeoutMs: 30_000,
      stillStarting: () => !exited,
    });
  }

  beforeAll(async () => {
    if (!existsSync(ENTRY)) throw new Error(`${ENTRY} does not exist: run \`npm run build\` first.`);
    await platform.open({}, true);
    url = new URL(`http://127.0.0.1:${await freePort()}/mcp`);
    await startGateway();
    await platform.admin('policy.grants.set', { tenant: TENANT, agent_id: AGENT, allow: ['device'] });
  }, 120_000);
  afterAll(async () => {
    gateway?.kill('SIGKILL');
    await platform.close();
  }, 60_000);

  it('keeps the call governed, and the retry with the same operation id observes the original', async () => {
    const { apiKey } = await platform.key(AGENT);
    const _meta = { 'ormuz/operation_id': 'op-kill-1' };
    const request = { name: 'device.list_contacts', arguments: { limit: 2 }, _meta };
    const [identified] = (
      await platform.admin('policy.identify', {
        tenant: TENANT,
        calls: [{ tool: request.name, origin: { kind: 'operation', operation_id: 'op-kill-1' } }],
      })
    ).calls;
    const callId = identified!.call_id;

    const first = await platform.client(apiKey, LATE_DEVICE, url);
    const pending = first.callTool(request).then(
      () => 'answered',
      () => 'lost',
    );
    await waitFor(
      async () =>
        (await platform.admin('policy.status', { tenant: TENANT, call_id: callId }).catch(() => undefined))?.status
          .status === 'authorized',
      { timeoutMs: 15_000, message: 'the call to be authorized while its phone is away' },
    );

    const dead = gateway!;
    const exited = new Promise((resolve) => dead.once('exit', resolve));
    dead.kill('SIGKILL');
    await exited;
    // A dead gateway tells the client nothing (the SDK would wait out its 60 s request timeout): the client gives up
    // on the connection here, and an answer that had come before would still show.
    await first.close();
    expect(await pending).toBe('lost');
    // The call did not die with the gateway: it is on the log, still waiting for its phone.
    expect((await platform.admin('policy.status', { tenant: TENANT, call_id: callId })).status.status).toBe(
      'authorized',
    );

    await startGateway();
    await platform.connectPhone(LATE_DEVICE);
    const again = await platform.client(apiKey, LATE_DEVICE, url);
    const result = await again.callTool(request, undefined, { timeout: 30_000 });
    expect(result.structuredContent).toMatchObject({ status: 'succeeded', call_id: callId });

    const status = await platform.admin('policy.status', { tenant: TENANT, call_id: callId, timeline: true });
    const types = status.timeline!.map((e) => e.type.split('.')[2]);
    expect(types.filter((t) => t === 'requested')).toHaveLength(1);
    expect(types.filter((t) => t === 'started')).toHaveLength(1);
    expect(types.filter((t) => t === 'succeeded')).toHaveLength(1);
  }, 120_000);
});
