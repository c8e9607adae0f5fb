import { canonicalPayload, type CallOriginV1, type RpcName, type RpcRequestOf } from '@ormuz/contracts';
import { streamName } from '@ormuz/event-log';
import { callRpc, startService, ToolCalls, type RunningService } from '@ormuz/service-kit';
import { createTestDatabase, randomNamespace, testEnv, waitFor, type TestDatabase } from '@ormuz/testing';
import { deriveCallId } from '@ormuz/tool-call';
import { APPROVALS_SCHEMA, approvalsMigrations, ApprovalsModule, loadApprovalsConfig } from '../src/index.js';

describe('approvals service', () => {
  const namespace = randomNamespace('approvals');
  let db: TestDatabase;
  let svc: RunningService;
  let policy: ToolCalls;
  const ask = <N extends RpcName>(name: N, body: NoInfer<RpcRequestOf<N>>) =>
    callRpc(svc.infra.nc, namespace, name, body, { checkReply: true });
  const cause = () => ({ correlationid: 'test', causationid: `c-${Math.random().toString(36).slice(2)}` });

  /** Stages a high-risk call as policy would, and waits until the inbox shows its approval. */
  async function staged(operationId: string): Promise<{ callId: string; approvalId: string }> {
    const origin: CallOriginV1 = { kind: 'operation', operation_id: operationId };
    const callId = deriveCallId('acme', origin);
    const approvalId = `apr_${callId.slice(5)}`;
    const { payload, sha256 } = canonicalPayload({ recipient: 'Alice', message_body: 'hi' });
    await policy.execute(
      'acme',
      callId,
      {
        type: 'SubmitCall',
        data: {
          call_id: callId,
          tool: 'device.send_message',
          contract_version: '1',
          payload,
          payload_sha256: sha256,
          origin,
          agent_id: 'agent-1',
          target: { device_id: 'phone-1' },
        },
      },
      cause(),
    );
    await policy.execute(
      'acme',
      callId,
      {
        type: 'StageCall',
        data: {
          call_id: callId,
          approval_id: approvalId,
          summary: 'Send a text message to Alice: "hi"',
          expires_at: new Date(Date.now() + 10 * 60_000).toISOString(),
          verdict: { level: 'high', reasons: ['sends a message'] },
        },
      },
      cause(),
    );
    await waitFor(
      async () => {
        const { approvals } = await ask('approvals.list', { tenant: 'acme', status: 'all' });
        return approvals.some((a) => a.approval_id === approvalId);
      },
      { message: `approval ${approvalId} in the inbox` },
    );
    return { callId, approvalId };
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    const config = loadApprovalsConfig({
      NATS_URL: testEnv().natsUrl,
      DATABASE_URL: db.url,
      ORMUZ_NAMESPACE: namespace,
      LOG_LEVEL: 'silent',
      APPROVALS_PORT: '0',
    });
    svc = await startService({
      service: 'approvals',
      config,
      streams: ['calls'],
      schema: APPROVALS_SCHEMA,
      migrations: approvalsMigrations,
      module: (infra) => ApprovalsModule.with(infra, config),
      httpPort: 0,
    });
    policy = new ToolCalls(svc.infra.store, namespace, '/ormuz/policy');
  });
  afterAll(async () => {
    await svc.infra.jsm.streams.delete(streamName(namespace, 'calls'));
    await svc.close();
    await db.drop();
  });

  it('answers a second deny by another owner with who denied it first and when, changing nothing', async () => {
    const { approvalId } = await staged('op-deny-twice');
    const first = await ask('approvals.deny', {
      tenant: 'acme',
      approval_id: approvalId,
      decided_by: 'alice@acme',
    });
    expect(first).toMatchObject({ status: 'denied', decided_by: 'alice@acme', decided_at: expect.any(String) });

    const second = await ask('approvals.deny', {
      tenant: 'acme',
      approval_id: approvalId,
      decided_by: 'bob@acme',
    }).catch((e: unknown) => e);
    expect(second).toMatchObject({ code: 'approval_already_decided' });
    expect((second as Error).message).toContain(`was already denied by alice@acme at ${first.decided_at}`);

    const approve = await ask('approvals.approve', {
      tenant: 'acme',
      approval_id: approvalId,
      decided_by: 'bob@acme',
    }).catch((e: unknown) => e);
    expect((approve as Error).message).toContain(`was already denied by alice@acme at ${first.decided_at}`);
  });

  it('answers the same deny by the same owner again with the original decision and its time', async () => {
    const { approvalId } = await staged('op-deny-repeat');
    const first = await ask('approvals.deny', {
      tenant: 'acme',
      approval_id: approvalId,
      decided_by: 'alice@acme',
    });
    const again = await ask('approvals.deny', {
      tenant: 'acme',
      approval_id: approvalId,
      decided_by: 'alice@acme',
    });
    expect(again).toMatchObject({ status: 'denied', decided_by: 'alice@acme', decided_at: first.decided_at });
  });

  it('says who decided first over HTTP too, as a 409', async () => {
    const { approvalId } = await staged('op-deny-http');
    const deny = (by: string) =>
      fetch(`${svc.httpUrl}/v1/tenants/acme/approvals/${approvalId}/deny`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ decided_by: by }),
      });
    expect((await deny('alice@acme')).status).toBe(200);
    const second = await deny('bob@acme');
    expect(second.status).toBe(409);
    const body = (await second.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('approval_already_decided');
    expect(body.error.message).toMatch(/was already denied by alice@acme at \d{4}-\d{2}-\d{2}T/);
  });
});
