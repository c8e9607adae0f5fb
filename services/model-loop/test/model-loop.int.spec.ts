import type { NatsConnection } from '@nats-io/transport-node';
import {
  aggregateSubject,
  type AsOfV1,
  type ConversationViewV1,
  type RpcName,
  type RpcRequestOf,
} from '@ormuz/contracts';
import { streamName, type EventStore } from '@ormuz/event-log';
import { callRpc, type RunningService, type ToolCalls } from '@ormuz/service-kit';
import { waitFor, adminFor } from '@ormuz/testing';
import { TestPlatform } from './platform.fixture.js';

// Each case runs both services' loops end to end against real NATS and Postgres.
const TIMEOUT = 30_000;

describe('model-loop with policy', () => {
  const platform = new TestPlatform();
  const namespace = platform.namespace;
  const tenant = 'acme';
  let loop: RunningService;
  let nc: NatsConnection;
  /** The test acts as the device-bridge and the approvals service, appending through the tool-call decider. */
  let bridge: ToolCalls;
  let owner: ToolCalls;
  let store: EventStore;

  const startLoop = () => platform.startLoop();
  const rpc = <N extends RpcName>(name: N, body: NoInfer<RpcRequestOf<N>>) =>
    adminFor(body).then((credential) => callRpc(nc, namespace, name, body, { credential, checkReply: true }));
  // Some tests send what the schema refuses, to see the refusal: the body is not held to the request type.
  const start = (body: Record<string, unknown>) => rpc('model-loop.start', body as RpcRequestOf<'model-loop.start'>);
  const view = (conversationId: string) => rpc('model-loop.get', { tenant, conversation_id: conversationId });
  const callStatus = async (callId: string) => (await rpc('policy.status', { tenant, call_id: callId })).status;
  /** Polls the read model until `ready` holds for the conversation. */
  const viewWhen = (conversationId: string, ready: (v: ConversationViewV1) => boolean, message: string) =>
    waitFor(
      async () => {
        const v = await view(conversationId);
        return ready(v) && v;
      },
      { message, timeoutMs: 15_000 },
    );

  beforeAll(async () => {
    await platform.open('model-loop-test');
    ({ nc, store, bridge, owner } = platform);
    loop = await startLoop();
  }, TIMEOUT);

  afterAll(() => platform.close(loop), TIMEOUT);

  it('refuses a malformed start with a schema_violation that says what is wrong', async () => {
    await expect(start({ tenant, agent_id: 'agent-1', device_id: null, model: 'scripted:demo' })).rejects.toMatchObject(
      {
        code: 'schema_violation',
        message: expect.stringContaining("missing 'task'"),
      },
    );
    await expect(
      start({ tenant: 'acme.other', agent_id: 'agent-1', task: 'x', device_id: null, model: 'scripted:demo' }),
    ).rejects.toMatchObject({ code: 'schema_violation', message: expect.stringContaining('tenant') });
  });

  it('refuses an unknown model, naming the models that exist', async () => {
    await expect(
      start({ tenant, agent_id: 'agent-1', task: 'Hello', device_id: null, model: 'scripted:nonexistent' }),
    ).rejects.toMatchObject({ code: 'unknown_model', message: expect.stringContaining('scripted:demo') });
  });

  it('answers conversation_not_found for an id that was never started', async () => {
    await expect(view('conv_never')).rejects.toMatchObject({ code: 'conversation_not_found' });
  });

  it(
    'runs the demo: gates both requests, pauses on the staged one, and after a restart reports what really happened',
    async () => {
      const started = await start({
        tenant,
        agent_id: 'agent-1',
        task: 'Tell Alice I am running late.',
        device_id: 'phone-1',
        model: 'scripted:demo',
      });
      expect(started).toEqual({ conversation_id: expect.stringMatching(/^conv_[0-9a-f]{32}$/), status: 'running' });
      const id = started.conversation_id;

      // Steps 1–3: the model asked for two tools at once and both went to policy's gate.
      const gated = await viewWhen(
        id,
        (v) => v.messages.some((m) => m.provenance?.status === 'pending_confirmation'),
        'the staged call to come back to the model as pending_confirmation',
      );
      const [observe, send] = gated.messages.find((m) => m.role === 'assistant')!.tool_calls!;
      expect(observe).toMatchObject({
        index: 0,
        name: 'device.screen_observe',
        call_id: expect.stringMatching(/^call_/),
      });
      expect(send).toMatchObject({ index: 1, name: 'device.send_message', arguments: { recipient: 'Alice Martin' } });
      expect((await callStatus(observe!.call_id)).status).toBe('authorized');
      const staged = await callStatus(send!.call_id);
      expect(staged.status).toBe('staged');
      const approvalId = staged.pending_approval!.approval_id;
      // The loop waits for the observation before the model speaks again; the approval is already listed.
      expect(gated.status).toBe('running');
      expect(gated.pending).toEqual([
        { call_id: send!.call_id, approval_id: approvalId, summary: expect.stringContaining('Alice') },
      ]);
      const interim = gated.messages.find((m) => m.tool_call_id === send!.call_id)!;
      expect(JSON.parse(interim.content)).toMatchObject({ status: 'pending_confirmation', approval_id: approvalId });

      // Step 4, played by the device-bridge: deliver the observation, win the start claim, report the outcome.
      const cause = { correlationid: observe!.call_id, causationid: 'test-bridge' };
      const deadline = new Date(Date.now() + 60_000).toISOString();
      const callId = observe!.call_id;
      await bridge.execute(
        tenant,
        callId,
        {
          type: 'DispatchCall',
          data: { call_id: callId, request_id: 'req-1', executor: { kind: 'device', device_id: 'phone-1' }, deadline },
        },
        cause,
      );
      await bridge.execute(
        tenant,
        callId,
        {
          type: 'ClaimStart',
          data: { call_id: callId, request_id: 'req-1', executor_id: 'phone-1', boot_id: 'boot-1' },
        },
        cause,
      );
      await bridge.execute(
        tenant,
        callId,
        {
          type: 'RecordOutcome',
          data: {
            call_id: callId,
            request_id: 'req-1',
            outcome: {
              kind: 'succeeded',
              result: { foreground_package: 'com.android.launcher', elements: [{ ref: 'e1', text: 'Messages' }] },
            },
          },
        },
        cause,
      );

      // Steps 5–6: the result resumes the loop; the model says it waits for the owner, and the conversation pauses.
      const paused = await viewWhen(id, (v) => v.status === 'paused', 'the conversation to pause for the owner');
      expect(paused.pending).toEqual(gated.pending);
      const observation = paused.messages.find((m) => m.tool_call_id === callId)!;
      expect(observation.provenance).toMatchObject({ source: 'device:phone-1', status: 'succeeded', truncated: false });
      expect(observation.content).toContain(`<<<BEGIN UNTRUSTED DATA ${callId}>>>`);
      expect(paused.messages.at(-1)).toMatchObject({
        role: 'assistant',
        turn: 1,
        content: expect.stringMatching(/waiting for that decision/),
      });

      // A restart resumes without running anything twice: stop model-loop, let the owner decide meanwhile, start again.
      await loop.close();
      await owner.execute(
        tenant,
        send!.call_id,
        {
          type: 'DenyCall',
          data: { call_id: send!.call_id, approval_id: approvalId, decided_by: 'owner-1', reason: 'Not now' },
        },
        { correlationid: send!.call_id, causationid: 'test-owner' },
      );
      loop = await startLoop();

      const done = await viewWhen(id, (v) => v.status === 'completed', 'the conversation to complete after the denial');
      expect(done.completion_reason).toBe('answered');
      expect(done.final_text).toBe(
        'Here is what happened. Looking at the phone screen succeeded. Sending "Running 10 minutes late, sorry!" to ' +
          'Alice Martin did not happen: the owner denied it.',
      );
      expect(done.pending).toEqual([]);
      expect(done.messages.map((m) => `${m.turn}:${m.role}:${m.provenance?.status ?? ''}`)).toEqual([
        '0:user:',
        '0:assistant:',
        '0:tool:pending_confirmation',
        '0:tool:succeeded',
        '1:assistant:',
        '0:tool:denied',
        '2:assistant:',
      ]);
      const log: string[] = [];
      let pausedSeq = 0;
      for await (const { seq, event } of store.readSubject(
        streamName(namespace, 'conversations'),
        aggregateSubject(namespace, 'conversations', tenant, id),
      )) {
        log.push(event.type.split('.')[2]!);
        if (event.type.endsWith('.paused.v1')) pausedSeq = seq;
      }
      expect(log).toEqual([
        'started',
        'message_added', // the task
        'message_added', // turn 0: two tool requests
        'message_added', // pending_confirmation for the message
        'message_added', // the observation
        'message_added', // turn 1: waiting for the owner
        'paused',
        'message_added', // denied
        'resumed',
        'message_added', // turn 2: the final answer
        'completed',
      ]);
      // Time travel: folded from the log, the conversation as of its pause is what the read model showed then, and
      // as of now what it shows now; the log cannot answer for a time to come.
      const asOf = (as_of: AsOfV1) => rpc('model-loop.get', { tenant, conversation_id: id, as_of });
      expect(await asOf({ seq: pausedSeq })).toEqual(paused);
      expect(await asOf({ time: new Date().toISOString() })).toEqual(done);
      await expect(asOf({ time: new Date(Date.now() + 3_600_000).toISOString() })).rejects.toMatchObject({
        code: 'as_of_in_future',
      });
      for (const call of [observe!, send!]) {
        const { timeline } = await rpc('policy.status', {
          tenant,
          call_id: call.call_id,
          timeline: true,
        });
        expect(timeline!.filter((e) => e.type === 'ormuz.toolcall.requested.v1')).toHaveLength(1);
      }
    },
    TIMEOUT,
  );

  it(
    'treats a repeated start with the same id as a no-op that answers the current status',
    async () => {
      const body = {
        tenant,
        agent_id: 'agent-1',
        task: 'Say hi.',
        device_id: null,
        model: 'scripted:demo',
        conversation_id: 'conv-fixed-1',
      };
      await start(body);
      // Without a device, policy refuses both device tools; the refusals go back to the model as results.
      const done = await viewWhen(
        'conv-fixed-1',
        (v) => v.status === 'completed',
        'the device-less conversation to complete',
      );
      expect(done.messages.filter((m) => m.provenance?.status === 'refused')).toHaveLength(2);
      expect(done.final_text).toMatch(/did not happen: the runtime refused it/);
      expect(await start(body)).toEqual({ conversation_id: 'conv-fixed-1', status: 'completed' });
      await expect(start({ ...body, task: 'Something else.' })).rejects.toMatchObject({
        code: 'conversation_conflict',
      });
    },
    TIMEOUT,
  );
});
