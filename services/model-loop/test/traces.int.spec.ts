// One governed device call's whole trace, from the model's tool request to the device's outcome and back, with every
// service in this process (the MCP gateway's platform: policy, the bridge, model-loop, approvals and a simulated
// phone) and an in-memory exporter registered as the process's tracer provider.
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { callRpc } from '@ormuz/service-kit';
import { registerTracing, type Tracing } from '@ormuz/tracing';
import { adminFor, waitFor } from '@ormuz/testing';
// The platform the MCP gateway's tests boot, without the gateway.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { DEVICE, GatewayPlatform, TENANT } from '../../mcp-gateway/test/gateway.fixture.js';

const SEND = 'device.send_message';

describe('traces', () => {
  const exporter = new InMemorySpanExporter();
  const platform = new GatewayPlatform();
  let tracing: Tracing;

  beforeAll(async () => {
    tracing = registerTracing('ormuz-test', [new SimpleSpanProcessor({ exporter })]);
    await platform.open({}, true);
  }, 60_000);

  afterAll(async () => {
    await platform.close();
    await tracing?.shutdown();
  }, 60_000);

  const spans = () => exporter.getFinishedSpans();
  const named = (name: string, where: (s: ReadableSpan) => boolean = () => true) =>
    spans().find((s) => s.name === name && where(s));
  const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

  it('follows one staged call from execute_tool through the gate, the owner, the device and back as one trace', async () => {
    await platform.admin('policy.grants.set', { tenant: TENANT, agent_id: 'agent-1', allow: ['device'] });
    const { conversation_id } = await platform.admin('model-loop.start', {
      tenant: TENANT,
      agent_id: 'agent-1',
      task: 'Tell Alice I am running late.',
      device_id: DEVICE,
      model: 'scripted:demo',
    });
    // The owner approves the staged send, as over the approvals API.
    const staged = await waitFor(
      async () => (await platform.admin('approvals.list', { tenant: TENANT })).approvals.find((a) => a.tool === SEND),
      { timeoutMs: 20_000, message: 'the send to be staged' },
    );
    await adminFor({ tenant: TENANT }).then((credential) =>
      callRpc(
        platform.nc,
        platform.namespace,
        'approvals.approve',
        { tenant: TENANT, approval_id: staged.approval_id },
        { credential },
      ),
    );
    const result = await waitFor(
      () => named(`tool_result ${SEND}`, (s) => s.attributes['ormuz.call.status'] === 'succeeded'),
      { timeoutMs: 20_000, message: `the device's outcome to come back to conversation ${conversation_id}` },
    );

    const root = named(`execute_tool ${SEND}`)!;
    const callId = root.attributes['gen_ai.tool.call.id'];
    expect(root.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': SEND,
      'gen_ai.tool.type': 'function',
      'gen_ai.conversation.id': conversation_id,
      'gen_ai.agent.id': 'agent-1',
      'ormuz.tenant': TENANT,
      'ormuz.call.status': 'staged',
    });
    expect(callId).toMatch(/^call_/);
    expect(parentOf(root)).toBeUndefined();
    const traceId = root.spanContext().traceId;
    const inTrace = spans().filter((s) => s.spanContext().traceId === traceId);
    const one = (name: string) => {
      const found = inTrace.filter((s) => s.name === name);
      expect(found.map((s) => s.name)).toEqual([name]);
      return found[0]!;
    };

    // The hops, each the child of the one before, across NATS commands, the log and the device's frames.
    const submit = one('policy/submit');
    const gate = one(`gate ${SEND}`);
    const stagedSpan = one(`approval_staged ${SEND}`);
    const decision = one(`approval_decision ${SEND}`);
    const dispatch = one(`dispatch ${SEND}`);
    const device = one(`device_execute ${SEND}`);
    const outcome = one(`outcome ${SEND}`);
    expect(result.spanContext().traceId).toBe(traceId);
    expect(parentOf(submit)).toBe(root.spanContext().spanId);
    expect(parentOf(gate)).toBe(submit.spanContext().spanId);
    expect(parentOf(stagedSpan)).toBe(gate.spanContext().spanId);
    expect(parentOf(decision)).toBe(gate.spanContext().spanId);
    expect(parentOf(dispatch)).toBe(decision.spanContext().spanId);
    expect(parentOf(device)).toBe(dispatch.spanContext().spanId);
    expect(parentOf(outcome)).toBe(device.spanContext().spanId);
    expect(parentOf(result)).toBe(outcome.spanContext().spanId);

    // Every hop names the call; Ormuz's own attributes say what was decided where.
    for (const span of [gate, stagedSpan, decision, dispatch, device, outcome, result]) {
      expect(span.attributes).toMatchObject({
        'gen_ai.tool.name': SEND,
        'gen_ai.tool.call.id': callId,
        'ormuz.tenant': TENANT,
      });
    }
    expect(submit.attributes).toMatchObject({ 'rpc.service': 'policy', 'rpc.method': 'submit' });
    expect(gate.attributes).toMatchObject({
      'ormuz.decision': 'stage',
      'ormuz.risk_level': 'high',
      'ormuz.call.status': 'staged',
    });
    expect(decision.attributes).toMatchObject({ 'ormuz.decision': 'approve', 'ormuz.approval_id': staged.approval_id });
    // The owner's request is another trace, linked from the decision.
    const approve = named('approvals/approve')!;
    expect(approve.spanContext().traceId).not.toBe(traceId);
    expect(decision.links.map((l) => l.context.spanId)).toEqual([approve.spanContext().spanId]);
    expect(dispatch.attributes).toMatchObject({ 'ormuz.device_id': DEVICE, 'ormuz.risk_level': 'high' });
    expect(device.attributes).toMatchObject({ 'ormuz.call.status': 'succeeded' });
    expect(outcome.attributes).toMatchObject({ 'ormuz.device_id': DEVICE, 'ormuz.call.status': 'succeeded' });
    // Each service's spans come from its own tracer.
    expect(gate.instrumentationScope.name).toBe('@ormuz/policy');
    expect(device.instrumentationScope.name).toBe('@ormuz/device-sdk');
  });
});
