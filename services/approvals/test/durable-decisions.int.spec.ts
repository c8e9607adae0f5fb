/**
 * Expiry and decisions are durable: what is due is read from the log's projection, never from a timer in memory, so
 * an approval that falls due while approvals is down expires when it is back; and a decision is single-use, bound to
 * what was staged, refused once the approval expired or the call was sealed.
 */
import { ToolCallEventType, type RpcName, type RpcRequestOf } from '@ormuz/contracts';
import { callRpc } from '@ormuz/service-kit';
import { bearerFor, waitFor } from '@ormuz/testing';
import { ApprovalsUnderTest } from './approvals-under-test.js';
import { stageCall } from './support/calls.js';

describe('durable expiry and decisions', () => {
  /** A sweep interval far longer than any test: the only sweep that runs is the one at start. */
  const app = new ApprovalsUnderTest('durable', { APPROVAL_SWEEP_MS: '3600000' });
  const tenant = 'acme';

  const asOwner = async <N extends RpcName>(subject: string, name: N, body: NoInfer<RpcRequestOf<N>>) =>
    callRpc(app.nc, app.namespace, name, body, {
      credential: await bearerFor(tenant, ['owner'], subject),
      checkReply: true,
    });
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => 'accepted',
      (err: { code?: string }) => err.code,
    );
  const inboxStatus = async (approvalId: string) =>
    (await asOwner('alice@acme', 'approvals.list', { tenant, status: 'all' })).approvals.find(
      (a) => a.approval_id === approvalId,
    )?.status;
  const decide = (subject: string, verb: 'approve' | 'deny', approvalId: string) =>
    refusal(asOwner(subject, `approvals.${verb}`, { tenant, approval_id: approvalId }));

  beforeAll(() => app.open());
  afterAll(() => app.close());

  it('expires, at restart, an approval that fell due while approvals was down; later decisions are refused', async () => {
    const call = await stageCall(app.policy, tenant, 'op-expire-while-down', { expiresInMs: 2500 });
    await waitFor(async () => (await inboxStatus(call.approvalId)) === 'pending', { message: 'the pending approval' });
    await app.stop();
    expect((await app.policy.load(tenant, call.callId)).state.status).toBe('staged');

    // Down until the approval is due: nothing in any process is counting down to it.
    await waitFor(() => Date.now() > Date.parse(call.expiresAt), { timeoutMs: 30_000, message: 'the expiry time' });
    await app.start();
    await waitFor(async () => (await app.policy.load(tenant, call.callId)).state.status === 'expired', {
      message: 'the expiry on the log',
    });
    const expired = (await app.policy.timeline(tenant, call.callId)).filter(
      (e) => e.event.type === ToolCallEventType.Expired,
    );
    expect(expired).toHaveLength(1);
    await waitFor(async () => (await inboxStatus(call.approvalId)) === 'expired', { message: 'the inbox to show it' });

    expect(await decide('alice@acme', 'approve', call.approvalId)).toBe('approval_expired');
    expect(await decide('alice@acme', 'deny', call.approvalId)).toBe('approval_expired');
    expect((await app.policy.load(tenant, call.callId)).state.status).toBe('expired');
  });

  it('refuses a decision on a call that was sealed while staged', async () => {
    const call = await stageCall(app.policy, tenant, 'op-sealed');
    await waitFor(async () => (await inboxStatus(call.approvalId)) === 'pending', { message: 'the pending approval' });
    await app.policy.execute(
      tenant,
      call.callId,
      { type: 'SealCall', data: { call_id: call.callId, sealed_by: 'operator@acme', reason: 'incident' } },
      { correlationid: 'op-sealed', causationid: 'seal-1' },
    );
    await waitFor(async () => (await inboxStatus(call.approvalId)) === 'sealed', { message: 'the inbox to show it' });

    expect(await decide('alice@acme', 'approve', call.approvalId)).toBe('call_sealed');
    expect(await decide('alice@acme', 'deny', call.approvalId)).toBe('call_sealed');
    expect((await app.policy.load(tenant, call.callId)).state.status).toBe('sealed');
  });

  it('lets the first approval win once, bound to the staged payload hash and contract version', async () => {
    const call = await stageCall(app.policy, tenant, 'op-approve-once');
    await waitFor(async () => (await inboxStatus(call.approvalId)) === 'pending', { message: 'the pending approval' });

    expect(await decide('alice@acme', 'approve', call.approvalId)).toBe('accepted');
    expect(await decide('bob@acme', 'approve', call.approvalId)).toBe('approval_already_decided');
    expect(await decide('bob@acme', 'deny', call.approvalId)).toBe('approval_already_decided');
    // The same approver again observes the original: nothing is appended.
    expect(await decide('alice@acme', 'approve', call.approvalId)).toBe('accepted');

    const timeline = await app.policy.timeline(tenant, call.callId);
    const approved = timeline.filter((e) => e.event.type === ToolCallEventType.Approved);
    expect(approved).toHaveLength(1);
    expect(approved[0]!.event.data).toMatchObject({
      decided_by: 'alice@acme',
      payload_sha256: call.payloadSha256,
      contract_version: '1',
    });
    expect(timeline.filter((e) => e.event.type === ToolCallEventType.Authorized)).toHaveLength(1);
  });
});
