import type { RpcName, RpcRequestOf } from '@ormuz/contracts';
import { callRpc } from '@ormuz/service-kit';
import { waitFor, adminFor, bearerFor, testToken } from '@ormuz/testing';
import { ApprovalsUnderTest } from './approvals-under-test.js';
import { stageCall } from './support/calls.js';

describe('approvals service', () => {
  const app = new ApprovalsUnderTest('approvals');
  const { namespace } = app;
  const ask = <N extends RpcName>(name: N, body: NoInfer<RpcRequestOf<N>>) =>
    adminFor(body).then((credential) => callRpc(app.nc, namespace, name, body, { credential, checkReply: true }));
  /** Decides as owner `subject` of tenant acme (the approver the log records is the token's subject). */
  const decideAs = async (subject: string, verb: 'approve' | 'deny', approvalId: string, reason?: string) =>
    callRpc(
      app.nc,
      namespace,
      `approvals.${verb}`,
      { tenant: 'acme', approval_id: approvalId, ...(reason ? { reason } : {}) },
      { credential: await bearerFor('acme', ['owner'], subject), checkReply: true },
    );

  /** Stages a high-risk call as policy would, and waits until the inbox shows its approval. */
  async function staged(operationId: string): Promise<{ callId: string; approvalId: string }> {
    const { callId, approvalId } = await stageCall(app.policy, 'acme', operationId);
    await waitFor(
      async () => {
        const { approvals } = await ask('approvals.list', { tenant: 'acme', status: 'all' });
        return approvals.some((a) => a.approval_id === approvalId);
      },
      { message: `approval ${approvalId} in the inbox` },
    );
    return { callId, approvalId };
  }

  beforeAll(() => app.open());
  afterAll(() => app.close());

  it('answers a second deny by another owner with who denied it first and when, changing nothing', async () => {
    const { approvalId } = await staged('op-deny-twice');
    const first = await decideAs('alice@acme', 'deny', approvalId);
    expect(first).toMatchObject({ status: 'denied', decided_by: 'alice@acme', decided_at: expect.any(String) });

    const second = await decideAs('bob@acme', 'deny', approvalId).catch((e: unknown) => e);
    expect(second).toMatchObject({ code: 'approval_already_decided' });
    expect((second as Error).message).toContain(`was already denied by alice@acme at ${first.decided_at}`);

    const approve = await decideAs('bob@acme', 'approve', approvalId).catch((e: unknown) => e);
    expect((approve as Error).message).toContain(`was already denied by alice@acme at ${first.decided_at}`);
  });

  it('answers the same deny by the same owner again with the original decision and its time', async () => {
    const { approvalId } = await staged('op-deny-repeat');
    const first = await decideAs('alice@acme', 'deny', approvalId);
    const again = await decideAs('alice@acme', 'deny', approvalId);
    expect(again).toMatchObject({ status: 'denied', decided_by: 'alice@acme', decided_at: first.decided_at });
  });

  it('says who decided first over HTTP too, as a 409', async () => {
    const { approvalId } = await staged('op-deny-http');
    const deny = async (by: string) =>
      fetch(`${app.url}/v1/tenants/acme/approvals/${approvalId}/deny`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${(await bearerFor('acme', ['owner'], by)).bearer}`,
        },
        body: JSON.stringify({}),
      });
    expect((await deny('alice@acme')).status).toBe(200);
    const second = await deny('bob@acme');
    expect(second.status).toBe(409);
    const body = (await second.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('approval_already_decided');
    expect(body.error.message).toMatch(/was already denied by alice@acme at \d{4}-\d{2}-\d{2}T/);
  });

  describe('who may decide', () => {
    const post = (approvalId: string, verb: 'approve' | 'deny', body: unknown, authorization?: string) =>
      fetch(`${app.url}/v1/tenants/acme/approvals/${approvalId}/${verb}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
        body: JSON.stringify(body),
      });
    const bearer = async (tenant: string, roles: Parameters<typeof bearerFor>[1], subject?: string) =>
      `Bearer ${(await bearerFor(tenant, roles, subject)).bearer}`;
    const statusOf = async (approvalId: string) =>
      (await ask('approvals.list', { tenant: 'acme', status: 'all' })).approvals.find(
        (a) => a.approval_id === approvalId,
      )?.status;
    const errorOf = async (res: Response) => ((await res.json()) as { error: { code: string; message: string } }).error;

    it('refuses an anonymous approval with 401, and the call stays staged', async () => {
      const { approvalId } = await staged('op-anon');
      const res = await post(approvalId, 'approve', { decided_by: 'mallory@nowhere' });
      expect(res.status).toBe(401);
      expect(await errorOf(res)).toMatchObject({
        code: 'unauthenticated',
        message: expect.stringContaining('credential'),
      });
      expect(await statusOf(approvalId)).toBe('pending');
    });

    it('refuses forged, expired and garbage tokens with 401', async () => {
      const { approvalId } = await staged('op-forged');
      const expired = await testToken({ tenant: 'acme', roles: ['owner'], subject: 'alice@acme', ttlSeconds: -120 });
      for (const authorization of [
        `Bearer ${expired}`,
        'Bearer not-a-token',
        'Basic YWxpY2U6c2VjcmV0',
        `Bearer ${expired}x`,
      ]) {
        const res = await post(approvalId, 'approve', {}, authorization);
        expect(res.status).toBe(401);
      }
      expect(await statusOf(approvalId)).toBe('pending');
    });

    it("refuses another tenant's owner, an analyst and an operator with 403", async () => {
      const { approvalId } = await staged('op-wrong-people');
      const globex = await post(approvalId, 'approve', {}, await bearer('globex', ['owner'], 'eve@globex'));
      expect(globex.status).toBe(403);
      expect((await errorOf(globex)).message).toContain('acts for tenant globex');
      expect((await post(approvalId, 'approve', {}, await bearer('acme', ['analyst']))).status).toBe(403);
      expect((await post(approvalId, 'approve', {}, await bearer('acme', ['operator']))).status).toBe(403);
      expect(await statusOf(approvalId)).toBe('pending');
    });

    it('refuses a decided_by in the body: the approver is the verified subject', async () => {
      const { approvalId } = await staged('op-decided-by');
      const res = await post(
        approvalId,
        'approve',
        { decided_by: 'mallory@nowhere' },
        await bearer('acme', ['owner'], 'alice@acme'),
      );
      expect(res.status).toBe(400);
      expect(await errorOf(res)).toMatchObject({
        code: 'schema_violation',
        message: expect.stringContaining('decided_by'),
      });
      const ok = await post(approvalId, 'approve', {}, await bearer('acme', ['owner'], 'alice@acme'));
      expect(ok.status).toBe(200);
      expect(await ok.json()).toMatchObject({ status: 'approved', decided_by: 'alice@acme' });
    });

    it('lets an owner of named agents decide only their calls, and list only theirs', async () => {
      const { approvalId } = await staged('op-agent-scope');
      const otherAgent = `Bearer ${await testToken({ tenant: 'acme', roles: ['owner'], subject: 'carol@acme', agents: ['agent-2'] })}`;
      const refused = await post(approvalId, 'approve', {}, otherAgent);
      expect(refused.status).toBe(403);
      expect((await errorOf(refused)).message).toContain('agent agent-1');
      const listed = await fetch(`${app.url}/v1/tenants/acme/approvals?status=all`, {
        headers: { authorization: otherAgent },
      });
      expect(((await listed.json()) as { approvals: unknown[] }).approvals).toEqual([]);
      const mine = `Bearer ${await testToken({ tenant: 'acme', roles: ['owner'], subject: 'dave@acme', agents: ['agent-1'] })}`;
      expect((await post(approvalId, 'approve', {}, mine)).status).toBe(200);
    });

    it('refuses an approval replayed after a denial, and one after expiry', async () => {
      const { approvalId } = await staged('op-replay');
      const alice = await bearer('acme', ['owner'], 'alice@acme');
      expect((await post(approvalId, 'deny', { reason: 'no' }, alice)).status).toBe(200);
      const replay = await post(approvalId, 'approve', {}, alice);
      expect(replay.status).toBe(409);
      expect((await errorOf(replay)).code).toBe('approval_already_decided');
    });

    it('shows the owner who asked, on which device, with which arguments, and why it is high risk', async () => {
      const { approvalId } = await staged('op-detail');
      const { approvals } = await ask('approvals.list', { tenant: 'acme' });
      expect(approvals.find((a) => a.approval_id === approvalId)).toMatchObject({
        agent_id: 'agent-1',
        device_id: 'phone-1',
        arguments: { recipient: 'Alice', message_body: 'hi' },
        risk_reasons: ['sends a message'],
        staged_at: expect.any(String),
      });
    });

    it('refuses the same commands over NATS without a credential', async () => {
      const { approvalId } = await staged('op-nats-anon');
      const err = await callRpc(app.nc, namespace, 'approvals.approve', {
        tenant: 'acme',
        approval_id: approvalId,
      }).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'unauthenticated' });
      expect(await statusOf(approvalId)).toBe('pending');
    });
  });
});
