/**
 * Policy's two roles in two processes' worth of services (docs/decisions/0021-policy-roles.md): one answers commands
 * and runs no projection, the other runs the projections and answers no command; together they are one policy.
 */
import { sql } from 'kysely';
import { streamName } from '@ormuz/event-log';
import { callRpc, startService, waitUntilServing, type RunningService } from '@ormuz/service-kit';
import { adminFor, createTestDatabase, randomNamespace, testEnv, waitFor, type TestDatabase } from '@ormuz/testing';
import type { RpcName, RpcRequestOf } from '@ormuz/contracts';
import { loadPolicyConfig, POLICY_SCHEMA, policyService } from '../src/index.js';

describe('policy: the commands role and the read-models role, apart', () => {
  let db: TestDatabase;
  let commands: RunningService;
  let readModels: RunningService;
  const namespace = randomNamespace();
  const env = (roles: string) => ({
    NATS_URL: testEnv().natsUrl,
    DATABASE_URL: db.url,
    ORMUZ_NAMESPACE: namespace,
    LOG_LEVEL: 'silent',
    POLICY_ROLES: roles,
  });
  const call = <N extends RpcName>(name: N, body: NoInfer<RpcRequestOf<N>>) =>
    adminFor(body).then((credential) =>
      callRpc(commands.infra.nc, namespace, name, body, { credential, checkReply: true }),
    );

  beforeAll(async () => {
    db = await createTestDatabase();
    commands = await startService(policyService(loadPolicyConfig(env('commands'))));
    readModels = await startService(policyService(loadPolicyConfig(env('read-models'))));
    await waitUntilServing(commands.infra.nc, namespace, 'policy');
  });
  afterAll(async () => {
    await commands.infra.jsm.streams.delete(streamName(namespace, 'calls'));
    await readModels.close();
    await commands.close();
    await db.drop();
  });

  it('runs the projections only where the read-models role is', async () => {
    expect(await commands.infra.consumers.status()).toEqual([]);
    expect((await readModels.infra.consumers.status()).map((c) => c.name).sort()).toEqual([
      'policy_call_status',
      'policy_device_screens',
    ]);
  });

  it("answers a submit from the commands role, and the other role's read model follows it", async () => {
    await call('policy.grants.set', { tenant: 'acme', agent_id: 'a1', allow: ['device'] });
    const submitted = await call('policy.submit', {
      tenant: 'acme',
      agent_id: 'a1',
      tool: 'device.screen_observe',
      arguments: {},
      origin: { kind: 'operation', operation_id: 'op-roles-1' },
      device_id: 'phone-1',
    });
    expect(submitted).toMatchObject({ status: 'authorized', duplicate: false });
    await waitFor(
      async () => {
        const { rows } = await sql<{ status: string }>`
          select status from ${sql.table(`${POLICY_SCHEMA}.call_status`)} where call_id = ${submitted.call_id}`.execute(
          readModels.infra.db,
        );
        return rows[0]?.status === 'authorized';
      },
      { message: 'the read-models role to project the authorized call' },
    );
    const { consumers } = await call('policy.consumers.status', {});
    expect(consumers.map((c) => c.name).sort()).toEqual(['policy_call_status', 'policy_device_screens']);
  });

  it('refuses a role it does not know, naming the ones it does', () => {
    expect(() => loadPolicyConfig(env('commands,projections'))).toThrow(
      /POLICY_ROLES must name one or more of commands, read-models .*"commands,projections"/,
    );
    expect(() => loadPolicyConfig(env(' , '))).toThrow(/POLICY_ROLES/);
  });
});
