/**
 * Agents' API keys over policy's NATS commands (`policy.keys.*`): policy migrates libs/auth's schema at start, a key
 * is shown once and verifies as its agent, a rotation overlaps, a revocation holds from the next verification on, and
 * lists and refusals never show a key.
 */
import { ApiKeyStore, hashApiKey } from '@ormuz/auth';
import type { RpcName, RpcRequestOf } from '@ormuz/contracts';
import { callRpc, callService, RemoteError, type RunningService } from '@ormuz/service-kit';
import { randomNamespace, adminFor } from '@ormuz/testing';
import { startPolicy, type TestPolicy } from './policy.fixture.js';

const TENANT = 'acme';

describe('policy: API keys', () => {
  let policy: TestPolicy;
  let svc: RunningService;
  /** How any service checks a presented key: against the same table, through libs/auth. */
  let verifier: ApiKeyStore;
  const namespace = randomNamespace();
  const call = <N extends RpcName>(name: N, body: NoInfer<RpcRequestOf<N>>) =>
    adminFor(body).then((credential) => callRpc(svc.infra.nc, namespace, name, body, { credential, checkReply: true }));
  /** A body sent untyped, to see the refusal. */
  const refusal = (name: string, body: unknown) =>
    adminFor(body)
      .then((credential) => callService(svc.infra.nc, namespace, 'policy', name, body, { credential }))
      .then(
        () => undefined,
        (err: unknown) => err,
      );

  beforeAll(async () => {
    policy = await startPolicy(namespace);
    svc = policy.svc;
    verifier = new ApiKeyStore(svc.infra.db);
  });
  afterAll(async () => {
    await policy.stop();
  });

  it('issues a key once; it verifies as its agent until it is revoked', async () => {
    const issued = await call('policy.keys.issue', { tenant: TENANT, agent_id: 'a1', label: 'ci' });
    expect(issued.key).toMatchObject({ tenant: TENANT, agent_id: 'a1', label: 'ci', via: 'issue', state: 'active' });
    expect(await verifier.verify(issued.api_key)).toEqual({
      kind: 'agent',
      subject: 'agent:a1',
      tenant: TENANT,
      agent_id: 'a1',
      key_id: issued.key.key_id,
    });

    const { keys } = await call('policy.keys.list', { tenant: TENANT, agent_id: 'a1' });
    expect(keys).toEqual([issued.key]);
    const text = JSON.stringify(keys);
    expect(text).not.toContain(issued.api_key.slice(22));
    expect(text).not.toContain(hashApiKey(issued.api_key).toString('hex'));

    expect(await call('policy.keys.revoke', { tenant: TENANT, agent_id: 'a1', key_id: issued.key.key_id })).toEqual({
      revoked: [issued.key.key_id],
    });
    await expect(verifier.verify(issued.api_key)).rejects.toMatchObject({
      code: 'unauthenticated',
      message: expect.stringMatching(
        new RegExp(`^API key ${issued.key.key_id} \\(agent a1 of tenant acme\\) was revoked at `),
      ),
    });
    expect((await call('policy.keys.list', { tenant: TENANT, agent_id: 'a1' })).keys[0]?.state).toBe('revoked');
  });

  it('rotates: the new key and the old one both verify during the grace period', async () => {
    const first = await call('policy.keys.issue', { tenant: TENANT, agent_id: 'a2' });
    const second = await call('policy.keys.rotate', { tenant: TENANT, agent_id: 'a2', grace_seconds: 600 });
    expect(second.key).toMatchObject({ via: 'rotate', state: 'active' });
    expect((await verifier.verify(first.api_key)).key_id).toBe(first.key.key_id);
    expect((await verifier.verify(second.api_key)).key_id).toBe(second.key.key_id);
    const old = (await call('policy.keys.list', { tenant: TENANT, agent_id: 'a2' })).keys.find(
      (k) => k.key_id === first.key.key_id,
    );
    expect(old).toMatchObject({ state: 'active', replaced_by: second.key.key_id });
    expect(Date.parse(old!.expires_at!) - Date.parse(old!.rotated_at!)).toBe(600_000);

    // Without grace the old key ends at once.
    const third = await call('policy.keys.rotate', { tenant: TENANT, agent_id: 'a2', grace_seconds: 0 });
    await expect(verifier.verify(second.api_key)).rejects.toMatchObject({ code: 'unauthenticated' });
    expect((await verifier.verify(third.api_key)).key_id).toBe(third.key.key_id);
  });

  it("lists one tenant's keys only, and reaches no other tenant's key by its id", async () => {
    const theirs = await call('policy.keys.issue', { tenant: 'globex', agent_id: 'a1' });
    expect((await call('policy.keys.list', { tenant: 'globex' })).keys.map((k) => k.tenant)).toEqual(['globex']);
    expect((await call('policy.keys.list', { tenant: TENANT })).keys.map((k) => k.key_id)).not.toContain(
      theirs.key.key_id,
    );
    const missing = await refusal('keys.revoke', { tenant: TENANT, agent_id: 'a1', key_id: theirs.key.key_id });
    expect(missing).toBeInstanceOf(RemoteError);
    expect(missing).toMatchObject({ code: 'api_key_not_found' });
    expect(await verifier.verify(theirs.api_key)).toMatchObject({ tenant: 'globex', agent_id: 'a1' });
  });

  it("authenticates an agent's commands with its key, for its own agent and tenant only, until it is revoked", async () => {
    await call('policy.grants.set', { tenant: 'acme', agent_id: 'k-agent', allow: ['device'] });
    const { api_key } = await call('policy.keys.issue', { tenant: 'acme', agent_id: 'k-agent' });
    const asAgent = <N extends RpcName>(name: N, body: NoInfer<RpcRequestOf<N>>) =>
      callRpc(svc.infra.nc, namespace, name, body, { credential: { bearer: api_key }, checkReply: true });
    const submit = (agentId: string, tenant = 'acme') =>
      asAgent('policy.submit', {
        tenant,
        agent_id: agentId,
        tool: 'device.screen_observe',
        arguments: {},
        origin: { kind: 'operation', operation_id: `op-key-${agentId}-${tenant}` },
        device_id: 'phone-1',
      });
    await expect(submit('k-agent')).resolves.toMatchObject({ status: 'authorized' });
    await expect(submit('other-agent')).rejects.toMatchObject({
      code: 'forbidden',
      message: expect.stringContaining('k-agent'),
    });
    await expect(submit('k-agent', 'globex')).rejects.toMatchObject({ code: 'forbidden' });
    // An agent's key is not a person's: it cannot change grants or decide approvals.
    await expect(
      asAgent('policy.grants.set', { tenant: 'acme', agent_id: 'k-agent', allow: ['device', 'ormuz'] }),
    ).rejects.toMatchObject({
      code: 'forbidden',
    });
    await call('policy.keys.revoke', { tenant: 'acme', agent_id: 'k-agent' });
    // Revocation takes effect on the very next request.
    await expect(submit('k-agent')).rejects.toMatchObject({
      code: 'unauthenticated',
      message: expect.stringContaining('revoked'),
    });
  });

  it('refuses bad requests with a clear error', async () => {
    expect(await refusal('keys.issue', { tenant: TENANT, agent_id: 'a.b' })).toMatchObject({
      code: 'schema_violation',
    });
    expect(await refusal('keys.issue', { tenant: TENANT, agent_id: 'a', label: '' })).toMatchObject({
      code: 'schema_violation',
    });
    expect(await refusal('keys.rotate', { tenant: TENANT, agent_id: 'a', grace_seconds: -1 })).toMatchObject({
      code: 'schema_violation',
    });
    expect(await refusal('keys.list', { tenant: 'a>b' })).toMatchObject({ code: 'schema_violation' });
    expect(await refusal('keys.issue', { tenant: TENANT, agent_id: 'a', api_key: 'mine' })).toMatchObject({
      code: 'schema_violation',
    });
  });
});
