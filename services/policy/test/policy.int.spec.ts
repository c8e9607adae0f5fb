import { aggregateSubject, canonicalPayload, type RpcName, type RpcRequestOf } from '@ormuz/contracts';
import { headers as natsHeaders } from '@nats-io/transport-node';
import {
  loadBaseConfig,
  callRpc,
  RemoteError,
  submitUnansweredHint,
  ToolCalls,
  type RunningService,
} from '@ormuz/service-kit';
import { randomNamespace, waitFor, adminFor, bearerFor, scrapeMetrics } from '@ormuz/testing';
import { streamName } from '@ormuz/event-log';
import { deriveCallId } from '@ormuz/tool-call';
import { POLICY_SCHEMA } from '../src/index.js';
import { startPolicy, type TestPolicy } from './policy.fixture.js';

describe('policy service', () => {
  let policy: TestPolicy;
  let svc: RunningService;
  const namespace = randomNamespace();
  const call = <N extends RpcName>(name: N, body: NoInfer<RpcRequestOf<N>>) =>
    adminFor(body).then((credential) => callRpc(svc.infra.nc, namespace, name, body, { credential, checkReply: true }));
  const submit = (overrides: Record<string, unknown> = {}) =>
    call('policy.submit', {
      tenant: 'acme',
      agent_id: 'agent-1',
      tool: 'device.screen_observe',
      arguments: {},
      origin: { kind: 'operation', operation_id: `op-${Math.random().toString(36).slice(2)}` },
      device_id: 'phone-1',
      ...overrides,
    });

  beforeAll(async () => {
    policy = await startPolicy(namespace, { HEALTH_PORT: '0' });
    svc = policy.svc;
  });
  afterAll(async () => {
    await policy.stop();
  });

  it('authorizes a low-risk call and stages a high-risk one with an approval id and owner summary', async () => {
    const low = await submit();
    expect(low).toMatchObject({ status: 'authorized', duplicate: false });
    const high = await submit({ tool: 'device.send_message', arguments: { recipient: 'Alice', message_body: 'hi' } });
    expect(high).toMatchObject({ status: 'staged', approval_id: expect.stringMatching(/^apr_/) });
    expect(high.summary).toMatch(/Alice/);
    expect(high.message).toMatch(/pending_confirmation/);
  });

  it('refuses a misspelt tool with the closest real name, and a far-off one with how to search', async () => {
    const near = await submit({ tool: 'device.send_mesage', arguments: { recipient: 'A' } });
    expect(near).toMatchObject({ status: 'refused', message: expect.stringContaining('device.send_message') });
    const far = await submit({ tool: 'weather.forecast', arguments: { city: 'Paris' } });
    expect(far).toMatchObject({ status: 'refused', message: expect.stringContaining('ormuz.search_tools') });
  });

  it('normalises a tool name written in another case, and refuses a version that does not exist with the one offered', async () => {
    const args = { recipient: 'Alice', message_body: 'hi' };
    const upper = await submit({ tool: 'device.SEND_MESSAGE', arguments: args });
    expect(upper).toMatchObject({ status: 'staged', duplicate: false });
    const versioned = await submit({ tool: 'device.send_message@2', arguments: args });
    expect(versioned).toMatchObject({
      status: 'refused',
      message: expect.stringContaining('device.send_message has no version 2'),
    });
    const status = await call('policy.status', { tenant: 'acme', call_id: versioned.call_id });
    expect(status.status.tool).toBe('device.send_message');
  });

  it('refuses a name that is not a tool name with the closest real names, recording nothing', async () => {
    const operation_id = `op-bare-${Math.random().toString(36).slice(2)}`;
    const err = await submit({
      tool: 'send_message',
      arguments: {},
      origin: { kind: 'operation', operation_id },
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'unknown_tool',
      message: expect.stringContaining('Did you mean device.send_message?'),
    });
    expect((err as Error).message).not.toMatch(/is invalid|must match pattern/);
    const callId = deriveCallId('acme', { kind: 'operation', operation_id });
    await expect(call('policy.status', { tenant: 'acme', call_id: callId })).rejects.toMatchObject({
      code: 'call_not_found',
    });
  });

  it('lets a duplicate with the same bytes observe the original, and refuses different bytes naming the id', async () => {
    const origin = { kind: 'operation', operation_id: 'op-dup-1' };
    const first = await submit({ origin, arguments: {} });
    const again = await submit({ origin, arguments: {} });
    expect(again).toMatchObject({ call_id: first.call_id, status: 'authorized', duplicate: true });
    const timeline = await call('policy.status', { tenant: 'acme', call_id: first.call_id, timeline: true });
    expect(timeline.timeline).toHaveLength(2);
    await expect(
      submit({ origin, tool: 'device.list_contacts', arguments: { name_query: 'x' } }),
    ).rejects.toMatchObject({
      code: 'payload_conflict',
      message: expect.stringContaining(first.call_id),
    });
  });

  it.each([
    ['another agent', { agent_id: 'agent-2' }, /the agent was agent-1, now agent-2/],
    ['another device', { device_id: 'phone-2' }, /the device was phone-1, now phone-2/],
    ['no device', { device_id: null }, /the device was phone-1, now none/],
  ])('refuses the same operation id with %s as a conflict that says what differs', async (_what, change, message) => {
    const origin = { kind: 'operation', operation_id: `op-other-${Math.random().toString(36).slice(2)}` };
    const first = await submit({ origin });
    const err = await submit({ origin, ...change }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'payload_conflict', message: expect.stringContaining(first.call_id) });
    expect((err as Error).message).toMatch(message);
    // Nothing of the second request was recorded: the call is still the original.
    const timeline = await call('policy.status', { tenant: 'acme', call_id: first.call_id, timeline: true });
    expect(timeline.timeline).toHaveLength(2);
  });

  it('records a submit whose reply was lost, so the status the error points to shows it and a resubmit observes it', async () => {
    const operation_id = `op-lost-${Math.random().toString(36).slice(2)}`;
    const request = {
      tenant: 'acme',
      agent_id: 'agent-1',
      tool: 'device.screen_observe',
      arguments: {},
      origin: { kind: 'operation' as const, operation_id },
      device_id: 'phone-1',
    };
    // The caller's inbox is gone before policy answers: policy records and decides, and the reply goes nowhere.
    const signedIn = natsHeaders();
    signedIn.set('Authorization', `Bearer ${(await bearerFor('acme', ['operator'])).bearer}`);
    svc.infra.nc.publish(`${namespace}.cmd.policy.submit`, JSON.stringify(request), {
      reply: `_INBOX.lost.${operation_id}`,
      headers: signedIn,
    });
    const hint = submitUnansweredHint(request);
    const callId = deriveCallId('acme', request.origin);
    expect(hint.check).toContain(`ormuz call status --tenant acme --call ${callId}`);
    await waitFor(
      async () => {
        const r = await call('policy.status', { tenant: 'acme', call_id: callId }).catch(() => undefined);
        return r?.status.status === 'authorized';
      },
      { message: `call ${callId} recorded and decided although its reply was lost` },
    );
    const again = await submit({ ...request });
    expect(again).toMatchObject({ call_id: callId, status: 'authorized', duplicate: true });
  });

  it('identifies calls before they are submitted, with the ids submit records them under, recording nothing', async () => {
    const conversation_id = `conv-${Math.random().toString(36).slice(2)}`;
    const origin = (index: number) => ({ kind: 'conversation' as const, conversation_id, turn: 3, index });
    const sent = [
      'device__send_message',
      'device.sendMessage',
      'ormuz__search_tools',
      'weather__forecast',
      'send message',
    ];
    const { calls } = await call('policy.identify', {
      tenant: 'acme',
      calls: sent.map((tool, index) => ({ tool, origin: origin(index) })),
    });
    expect(calls.map((c) => c.tool)).toEqual([
      'device.send_message',
      'device.sendMessage',
      'ormuz.search_tools',
      'weather.forecast',
      'send message',
    ]);
    expect(new Set(calls.map((c) => c.call_id)).size).toBe(sent.length);
    await expect(call('policy.status', { tenant: 'acme', call_id: calls[0]!.call_id })).rejects.toMatchObject({
      code: 'call_not_found',
    });
    const submitted = await submit({
      tool: calls[0]!.tool,
      arguments: { recipient: 'Ana', message_body: 'hi' },
      origin: origin(0),
    });
    expect(submitted).toMatchObject({ call_id: calls[0]!.call_id, status: 'staged' });
    const unknown = await submit({ tool: calls[3]!.tool, arguments: {}, origin: origin(3) });
    expect(unknown).toMatchObject({ call_id: calls[3]!.call_id, status: 'refused' });
    await expect(
      call('policy.identify', { tenant: 'acme', calls: [{ tool: 'x', origin: { kind: 'model' } }] } as never),
    ).rejects.toMatchObject({
      code: 'schema_violation',
    });
  });

  it("targets the session's device only for tools the device runs, as their catalog entry says", async () => {
    const targetOf = async (r: { call_id: string }) => {
      const { timeline = [] } = await call('policy.status', {
        tenant: 'acme',
        call_id: r.call_id,
        timeline: true,
      });
      return (timeline![0]!.data as { target?: unknown }).target;
    };
    expect(await targetOf(await submit())).toEqual({ device_id: 'phone-1' });
    expect(await targetOf(await submit({ tool: 'ormuz.search_tools', arguments: { query: 'send text' } }))).toBeNull();
    const noDevice = await submit({ device_id: null });
    expect(noDevice).toMatchObject({ status: 'refused', message: expect.stringContaining('no device attached') });
    expect(await targetOf(noDevice)).toBeNull();
    const platform = await submit({ tool: 'ormuz.search_tools', arguments: { query: 'send text' }, device_id: null });
    expect(platform).toMatchObject({ status: 'authorized' });
  });

  it('treats argument key order and Unicode composition as the same bytes', async () => {
    const origin = { kind: 'operation', operation_id: 'op-nfc' };
    const a = await submit({ origin, tool: 'device.list_contacts', arguments: { name_query: 'Zoe\u0301' } });
    const b = await submit({ origin, tool: 'device.list_contacts', arguments: { name_query: 'Zo\u00e9' } });
    expect(b).toMatchObject({ duplicate: true, payload_sha256: canonicalPayload({ name_query: 'Zo\u00e9' }).sha256 });
    expect(a.call_id).toBe(b.call_id);
  });

  it('seals an unstarted call, and a status query only reads', async () => {
    const r = await submit();
    const sealed = await call('policy.seal', { tenant: 'acme', call_id: r.call_id, reason: 'test' });
    expect(sealed.status).toBe('sealed');
    const status = await call('policy.status', { tenant: 'acme', call_id: r.call_id });
    expect(status.status.status).toBe('sealed');
    const again = await call('policy.status', { tenant: 'acme', call_id: r.call_id });
    expect(again.version).toBe(status.version);
  });

  it('answers a second seal by another operator with who sealed it first, when and why, changing nothing', async () => {
    const r = await submit();
    const sealAs = async (subject: string, reason: string) =>
      callRpc(
        svc.infra.nc,
        namespace,
        'policy.seal',
        { tenant: 'acme', call_id: r.call_id, reason },
        { credential: await bearerFor('acme', ['operator'], subject), checkReply: true },
      );
    const first = await sealAs('alice@acme', 'wrong phone');
    expect(first).toMatchObject({ status: 'sealed', sealed_by: 'alice@acme', already_sealed: false });
    expect(first.sealed_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    const second = await sealAs('bob@acme', 'me too');
    expect(second).toMatchObject({
      status: 'sealed',
      sealed_by: 'alice@acme',
      sealed_at: first.sealed_at,
      already_sealed: true,
    });
    expect(second.message).toBe(
      `Call ${r.call_id} was already sealed by alice@acme at ${first.sealed_at} (wrong phone); this seal changed nothing. It will not run.`,
    );
    const timeline = await call('policy.status', { tenant: 'acme', call_id: r.call_id, timeline: true });
    expect(timeline.timeline!.filter((e) => e.type.endsWith('.sealed.v1'))).toHaveLength(1);
  });

  it.each([
    ['a dot', 'acme.evil'],
    ['a star', 'acme*'],
    ['a greater-than', 'acme>'],
    ['whitespace', 'ac me'],
    ['129 characters', 'a'.repeat(129)],
  ])('refuses a tenant with %s before it touches a subject', async (_what, tenant) => {
    await expect(submit({ tenant })).rejects.toMatchObject({ code: 'schema_violation' });
  });

  it('refuses an operation id with a wildcard', async () => {
    await expect(submit({ origin: { kind: 'operation', operation_id: 'op.>' } })).rejects.toMatchObject({
      code: 'schema_violation',
    });
  });

  it('answers malformed JSON and wrong types with a clear error', async () => {
    const reply = await svc.infra.nc.request(`${namespace}.cmd.policy.submit`, '{"tenant":', { timeout: 2000 });
    expect(JSON.parse(reply.string())).toMatchObject({ ok: false, error: { code: 'malformed_json' } });
    await expect(submit({ arguments: 'not an object' })).rejects.toBeInstanceOf(RemoteError);
    await expect(submit({ arguments: { n: 1 }, extra: true })).rejects.toMatchObject({
      message: expect.stringContaining("unexpected property 'extra'"),
    });
  });

  it('reports an unknown call as not found with the next step', async () => {
    await expect(call('policy.status', { tenant: 'acme', call_id: 'call_nope' })).rejects.toMatchObject({
      code: 'call_not_found',
    });
  });

  it('keeps tenants apart: another tenant cannot read a call', async () => {
    const r = await submit();
    await expect(call('policy.status', { tenant: 'other', call_id: r.call_id })).rejects.toMatchObject({
      code: 'call_not_found',
    });
  });

  it('projects every call into policy.call_status', async () => {
    const r = await submit({ origin: { kind: 'operation', operation_id: 'op-projected' } });
    await waitFor(async () => {
      const row = await svc.infra.db
        .withSchema(POLICY_SCHEMA)
        .selectFrom('call_status')
        .selectAll()
        .where('call_id', '=', r.call_id)
        .executeTakeFirst();
      return row?.status === 'authorized';
    });
  });

  it('records the request and the decision in one append: one message per submit, whatever the decision', async () => {
    const stream = streamName(namespace, 'calls');
    const messagesOf = async (callId: string) => {
      const subject = aggregateSubject(namespace, 'calls', 'acme', callId);
      return (await svc.infra.jsm.streams.info(stream, { subjects_filter: subject })).state.subjects?.[subject] ?? 0;
    };
    const low = await submit();
    const high = await submit({ tool: 'device.send_message', arguments: { recipient: 'Alice', message_body: 'hi' } });
    const refused = await submit({ tool: 'weather.forecast', arguments: { city: 'Paris' } });
    expect([low.status, high.status, refused.status]).toEqual(['authorized', 'staged', 'refused']);
    for (const r of [low, high, refused]) {
      expect(await messagesOf(r.call_id)).toBe(1);
      const { timeline = [] } = await call('policy.status', {
        tenant: 'acme',
        call_id: r.call_id,
        timeline: true,
      });
      expect(timeline.map((e) => e.type.split('.')[2])).toEqual(['requested', r.status]);
      expect(timeline[0]!.seq).toBe(timeline[1]!.seq);
      // The read model takes both events of the message: the row shows the decision, at the message's sequence.
      await waitFor(async () => {
        const row = await svc.infra.db
          .withSchema(POLICY_SCHEMA)
          .selectFrom('call_status')
          .select(['status', 'last_seq', 'approval_id'])
          .where('call_id', '=', r.call_id)
          .executeTakeFirst();
        return (
          row?.status === r.status && row.last_seq === timeline[1]!.seq && row.approval_id === (r.approval_id ?? null)
        );
      });
    }
    // A duplicate appends nothing.
    await submit({ origin: { kind: 'operation', operation_id: 'op-one-message' } });
    const again = await submit({ origin: { kind: 'operation', operation_id: 'op-one-message' } });
    expect(again.duplicate).toBe(true);
    expect(await messagesOf(again.call_id)).toBe(1);
  });

  it('still decides a call an older version recorded alone and left in requested', async () => {
    const origin = { kind: 'operation' as const, operation_id: `op-legacy-${Math.random().toString(36).slice(2)}` };
    const callId = deriveCallId('acme', origin);
    const { payload, sha256 } = canonicalPayload({});
    const current = await submit();
    const recorded = await call('policy.status', {
      tenant: 'acme',
      call_id: current.call_id,
      timeline: true,
    });
    // What an older policy appended before it stopped: the request alone, without its decision.
    await new ToolCalls(svc.infra.store, namespace, '/ormuz/policy').execute(
      'acme',
      callId,
      {
        type: 'SubmitCall',
        data: {
          call_id: callId,
          tool: 'device.screen_observe',
          contract_version: (recorded.timeline![0]!.data as { contract_version: string }).contract_version,
          payload,
          payload_sha256: sha256,
          origin,
          agent_id: 'agent-1',
          target: { device_id: 'phone-1' },
        },
      },
      { correlationid: callId, causationid: 'legacy' },
    );
    const again = await submit({ origin });
    expect(again).toMatchObject({ call_id: callId, status: 'authorized', duplicate: true });
    const { timeline = [] } = await call('policy.status', {
      tenant: 'acme',
      call_id: callId,
      timeline: true,
    });
    expect(timeline.map((e) => e.type.split('.')[2])).toEqual(['requested', 'authorized']);
  });

  it('counts decisions by risk, times the gate and shows its consumers on GET /metrics', async () => {
    const metrics = () => scrapeMetrics(`${svc.healthUrl}/metrics`);
    const before = await metrics();
    const decided = (decision: string, risk: string, scrape = before) =>
      scrape.value('ormuz_policy_calls_total', { service: 'policy', decision, risk });
    const low = await submit();
    await submit({
      origin: { kind: 'operation', operation_id: `op-m-${low.call_id}` },
      tool: 'device.send_message',
      arguments: { recipient: 'A', message_body: 'b' },
    });
    await submit({ tool: 'weather.forecast', arguments: {} });
    await submit({
      origin: { kind: 'operation', operation_id: `op-m-${low.call_id}` },
      tool: 'device.send_message',
      arguments: { recipient: 'A', message_body: 'b' },
    });
    const after = await waitFor(
      async () => {
        const s = await metrics();
        return s.value('ormuz_consumer_lag_messages', { consumer: 'policy_call_status' }) === 0 && s;
      },
      { message: 'policy_call_status to show no lag' },
    );
    expect(decided('authorize', 'low', after) - decided('authorize', 'low')).toBe(1);
    // The duplicate is timed, not counted again.
    expect(decided('stage', 'high', after) - decided('stage', 'high')).toBe(1);
    expect(decided('refuse', 'none', after) - decided('refuse', 'none')).toBe(1);
    const timed = (scrape: typeof before) => scrape.value('ormuz_policy_gate_seconds_count', { decision: 'stage' });
    expect(timed(after) - timed(before)).toBe(2);
    expect(after.value('ormuz_consumer_parked_messages', { consumer: 'policy_call_status' })).toBe(0);
    expect(after.value('ormuz_consumer_running', { consumer: 'policy_device_screens' })).toBe(1);
    expect(after.types.get('ormuz_process_cpu_seconds_total')).toBe('counter');
  });

  it('validates its configuration at boot', () => {
    expect(() => loadBaseConfig({ ORMUZ_NAMESPACE: 'a.b' })).toThrow(/ORMUZ_NAMESPACE/);
  });

  describe('the dispatch gate', () => {
    const tap = (args: Record<string, unknown>, op = `op-${Math.random().toString(36).slice(2)}`) =>
      submit({ tool: 'device.tap', arguments: args, origin: { kind: 'operation', operation_id: op } });

    it('maps camelCase and kebab-case keys to the schema before hashing, so both spellings are the same call', async () => {
      const origin = { kind: 'operation', operation_id: 'op-camel' };
      const camel = await submit({
        origin,
        tool: 'device.send_message',
        arguments: { recipient: 'Bob', messageBody: 'hi' },
      });
      const kebab = await submit({
        origin,
        tool: 'device.send_message',
        arguments: { recipient: 'Bob', 'message-body': 'hi' },
      });
      expect(camel.status).toBe('staged');
      expect(kebab).toMatchObject({ duplicate: true, payload_sha256: camel.payload_sha256 });
      expect(camel.payload_sha256).toBe(canonicalPayload({ recipient: 'Bob', message_body: 'hi' }).sha256);
    });

    it('refuses an argument that matches nothing, naming the allowed ones', async () => {
      const r = await submit({
        tool: 'device.send_message',
        arguments: { recipient: 'Bob', message_body: 'hi', urgent: true },
      });
      expect(r).toMatchObject({
        status: 'refused',
        message: expect.stringMatching(/urgent[\s\S]*recipient[\s\S]*message_body/),
      });
    });

    it('refuses a designer-controlled argument sent by the model', async () => {
      const r = await submit({ tool: 'ormuz.read_more', arguments: { continuation: 'c1', max_result_chars: 999999 } });
      expect(r).toMatchObject({ status: 'refused', message: expect.stringContaining('max_result_chars') });
    });

    it('answers wrong types with an instruction naming the argument', async () => {
      const r = await tap({ foreground_package: 'com.example.messages', x: '12', y: 40 });
      expect(r).toMatchObject({ status: 'refused', message: expect.stringMatching(/`x` must be a number/) });
    });

    it('stages a tap whose target text means pay, in any language, and authorizes a harmless one with its verdict', async () => {
      const pay = await tap({ foreground_package: 'com.example.shop', ref: 'e4', target_text: 'Jetzt bezahlen' });
      expect(pay).toMatchObject({ status: 'staged', summary: expect.stringContaining('Jetzt bezahlen') });
      const open = await tap({ foreground_package: 'com.example.shop', ref: 'e5', target_text: 'Sender details' });
      expect(open.status).toBe('authorized');
      const { status } = await call('policy.status', { tenant: 'acme', call_id: open.call_id, timeline: true });
      expect(status.status).toBe('authorized');
    });

    it('stages any screen action in a banking app', async () => {
      expect((await tap({ foreground_package: 'com.example.bank', ref: 'e1', target_text: 'Accounts' })).status).toBe(
        'staged',
      );
    });

    it('refuses a screen action without its foreground app, saying to pass it from the latest observation', async () => {
      const r = await tap({ ref: 'e1', target_text: 'Open' });
      expect(r).toMatchObject({ status: 'refused', message: expect.stringContaining('device.screen_observe') });
    });

    it('never offers a denied tool, and refuses it at dispatch as not permitted here', async () => {
      await call('policy.grants.set', {
        tenant: 'acme',
        agent_id: 'restricted',
        allow: ['device', 'ormuz'],
        deny: ['device.send_message'],
      });
      const offered = await call('policy.tools', { tenant: 'acme', agent_id: 'restricted' });
      expect(offered.tools.map((t) => t.name)).not.toContain('device.send_message');
      expect(offered.tools.map((t) => t.name)).toContain('device.tap');
      const r = await submit({
        agent_id: 'restricted',
        tool: 'device.send_message',
        arguments: { recipient: 'Bob', message_body: 'hi' },
      });
      expect(r).toMatchObject({ status: 'refused', message: expect.stringMatching(/not permitted/) });
    });

    it('pins grants to the versions that exist when they are set', async () => {
      const grant = await call('policy.grants.set', { tenant: 'acme', agent_id: 'pinned', allow: ['device.tap'] });
      expect(grant.pins).toEqual({ 'device.tap': 1 });
    });

    it('offers the latest device.delete_contacts_verified, and keeps a grant pinned to version 1 on version 1', async () => {
      const tool = 'device.delete_contacts_verified';
      const latest = await call('policy.grants.set', { tenant: 'acme', agent_id: 'cleaner', allow: [tool] });
      expect(latest.pins).toEqual({ [tool]: 2 });
      const v2 = await call('policy.tools', { tenant: 'acme', agent_id: 'cleaner' });
      const granted = (tools: typeof v2.tools) => tools.filter((t) => !t.name.startsWith('ormuz.'));
      expect(v2.tools.map((t) => t.name)).toContain('ormuz.search_tools');
      expect(granted(v2.tools)).toEqual([
        expect.objectContaining({
          name: tool,
          version: 2,
          description: expect.stringContaining('changed_since_listed'),
        }),
      ]);

      const pinned = await call('policy.grants.set', { tenant: 'acme', agent_id: 'cleaner-v1', allow: [`${tool}@1`] });
      expect(pinned.pins).toEqual({ [tool]: 1 });
      const v1 = await call('policy.tools', { tenant: 'acme', agent_id: 'cleaner-v1' });
      expect(granted(v1.tools)).toEqual([expect.objectContaining({ name: tool, version: 1 })]);
      expect(granted(v1.tools)[0]!.description).not.toContain('changed_since_listed');

      const contractVersion = async (agent_id: string) => {
        const r = await submit({ agent_id, tool, arguments: { contact_names: ['Bob Chen'] } });
        expect(r).toMatchObject({ status: 'staged', summary: expect.stringContaining('Bob Chen') });
        const { timeline = [] } = await call('policy.status', {
          tenant: 'acme',
          call_id: r.call_id,
          timeline: true,
        });
        return (timeline![0]!.data as { contract_version?: string }).contract_version;
      };
      expect(await contractVersion('cleaner')).toBe('2');
      expect(await contractVersion('cleaner-v1')).toBe('1');
    });

    it('refuses a malformed grant rule with a clear error', async () => {
      await expect(
        call('policy.grants.set', { tenant: 'acme', agent_id: 'x', allow: ['device.*'] }),
      ).rejects.toMatchObject({
        message: expect.stringContaining('device.*'),
      });
    });

    it('refuses an allow rule that matches no tool, naming the installed extensions', async () => {
      await expect(
        call('policy.grants.set', { tenant: 'acme', agent_id: 'x', allow: ['weather'] }),
      ).rejects.toMatchObject({
        message: expect.stringMatching(/"weather" match no tool[\s\S]*device/),
      });
    });

    it('searches the granted directory', async () => {
      const r = await call('policy.tools.search', {
        tenant: 'acme',
        agent_id: 'agent-1',
        query: 'send a text message',
      });
      expect(r.hits[0]?.name).toBe('device.send_message');
    });
  });
});
