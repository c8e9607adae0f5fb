/**
 * The real policy service as NATS user `policy`, on a nats-server running the shipped authorization
 * (infra/nats/authorization.conf), asked by user `cli`: it declares its stream, records its decisions, runs both of
 * its projections to the head of the log and answers, and the server refuses it nothing.
 */
import { randomBytes } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import type { RpcName, RpcRequestOf } from '@ormuz/contracts';
import { connectNats } from '@ormuz/event-log';
import { callRpc, startService, type RunningService } from '@ormuz/service-kit';
import {
  createTestDatabase,
  randomNamespace,
  startAuthorizedNatsServer,
  waitFor,
  type NatsServerHandle,
  type TestDatabase,
  adminFor,
} from '@ormuz/testing';
import { loadPolicyConfig, policyService } from '../src/index.js';

describe('policy under its own NATS user', () => {
  let server: NatsServerHandle;
  let db: TestDatabase;
  let svc: RunningService;
  let cli: NatsConnection;
  const violations: string[] = [];
  const namespace = randomNamespace();
  const call = <N extends RpcName>(name: N, body: NoInfer<RpcRequestOf<N>>) =>
    adminFor(body).then((credential) => callRpc(cli, namespace, name, body, { credential, checkReply: true }));

  beforeAll(async () => {
    const nats = await startAuthorizedNatsServer(['policy', 'cli']);
    server = nats.server;
    db = await createTestDatabase();
    const config = loadPolicyConfig({
      NATS_URL: server.url,
      NATS_USER: 'policy',
      NATS_PASSWORD: nats.passwords.policy,
      DATABASE_URL: db.url,
      ORMUZ_NAMESPACE: namespace,
      LOG_LEVEL: 'silent',
    });
    svc = await startService(policyService(config));
    void (async () => {
      for await (const s of svc.infra.nc.status()) if (s.type === 'error') violations.push(String(s.error));
    })();
    cli = await connectNats({ url: server.url, name: 'test-cli', user: 'cli', password: nats.passwords.cli });
  });
  afterAll(async () => {
    await cli?.close();
    await svc?.close();
    await db?.drop();
    await server?.stop();
  });

  it('decides calls the CLI submits, runs its projections to the head, and is refused nothing', async () => {
    const submit = (tool: string, args: Record<string, unknown>) =>
      call('policy.submit', {
        tenant: 'acme',
        agent_id: 'agent-1',
        tool,
        arguments: args,
        origin: { kind: 'operation', operation_id: `op-${randomBytes(4).toString('hex')}` },
        device_id: 'phone-1',
      });
    const low = await submit('device.screen_observe', {});
    expect(low).toMatchObject({ status: 'authorized', duplicate: false });
    const high = await submit('device.send_message', { recipient: 'Alice', message_body: 'hi' });
    expect(high).toMatchObject({ status: 'staged' });

    const status = await call('policy.status', { tenant: 'acme', call_id: low.call_id, timeline: true });
    expect(status.timeline?.map((t) => t.type)).toEqual([
      expect.stringMatching(/requested/),
      expect.stringMatching(/authorized/),
    ]);
    // Both projections (policy_call_status, policy_device_screens) consumed every message: create, pull, acknowledge.
    await waitFor(
      async () => {
        const { consumers } = await call('policy.consumers.status', {});
        return consumers.length === 2 && consumers.every((c) => c.running && c.lag === 0 && c.checkpoint > 0);
      },
      { message: "policy's two projections to reach the head of the calls stream" },
    );
    expect(violations).toEqual([]);
  });
});
