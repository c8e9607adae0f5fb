import type { NatsConnection } from '@nats-io/transport-node';
import { internalCommandSubject, type SubmitCallRequestV1 } from '@ormuz/contracts';
import { connectNats } from '@ormuz/event-log';
import { isTransientRemoteError, ServiceUnavailableError, type Infrastructure } from '@ormuz/service-kit';
import { randomNamespace, testEnv } from '@ormuz/testing';
import { deriveCallId } from '@ormuz/tool-call';
import type { ModelLoopConfig } from '../src/config.js';
import { PolicyClient } from '../src/transport/policy.client.js';

describe('the policy client when a submit gets no answer', () => {
  const namespace = randomNamespace('policy_client');
  let nc: NatsConnection;
  let client: PolicyClient;
  const request: SubmitCallRequestV1 = {
    tenant: 'acme',
    agent_id: 'agent-1',
    tool: 'device.screen_observe',
    arguments: {},
    origin: { kind: 'conversation', conversation_id: 'conv-1', turn: 2, index: 0 },
    device_id: 'phone-1',
  };
  const callId = deriveCallId('acme', request.origin);

  beforeAll(async () => {
    nc = await connectNats({ url: testEnv().natsUrl, name: 'policy-client-test' });
    client = new PolicyClient(
      { nc } as Infrastructure,
      { namespace, policyTimeoutMs: 200, toolsCacheMs: 0 } as ModelLoopConfig,
    );
  });
  afterAll(async () => {
    await nc.drain();
  });

  it('throws a retryable error saying the call may have been recorded and that the retry observes it', async () => {
    // Policy takes the submit and its answer never comes back.
    const silent = nc.subscribe(internalCommandSubject(namespace, 'policy', 'submit'), { callback: () => undefined });
    try {
      const err = await client.submit(request).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ServiceUnavailableError);
      expect(isTransientRemoteError(err)).toBe(true);
      expect((err as Error).message).toContain(`call ${callId} may have been recorded, and may even have run`);
      expect((err as Error).message).toContain(`ormuz call status --tenant acme --call ${callId}`);
      expect((err as Error).message).toContain('it observes the original and never runs the call twice');
    } finally {
      silent.unsubscribe();
    }
  });

  it('names the call by the id policy gave it, when the caller has one', async () => {
    const silent = nc.subscribe(internalCommandSubject(namespace, 'policy', 'submit'), { callback: () => undefined });
    try {
      const err = await client.submit(request, 'call_identified_by_policy').catch((e: unknown) => e);
      expect((err as Error).message).toContain('call call_identified_by_policy may have been recorded');
    } finally {
      silent.unsubscribe();
    }
  });
});
