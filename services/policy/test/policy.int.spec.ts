import { canonicalPayload } from '@ormuz/contracts';
import { loadBaseConfig, callService, RemoteError, startService, type RunningService } from '@ormuz/service-kit';
import { createTestDatabase, randomNamespace, testEnv, waitFor, type TestDatabase } from '@ormuz/testing';
import { streamName } from '@ormuz/event-log';
import { loadPolicyConfig, POLICY_SCHEMA, policyMigrations, PolicyModule } from '../src/index.js';

describe('policy service', () => {
  let db: TestDatabase;
  let svc: RunningService;
  const namespace = randomNamespace();
  const call = <T>(name: string, body: unknown) => callService<T>(svc.infra.nc, namespace, 'policy', name, body);
  const submit = (overrides: Record<string, unknown> = {}) =>
    call<Record<string, unknown> & { call_id: string; status: string; duplicate: boolean }>('submit', {
      tenant: 'acme',
      agent_id: 'agent-1',
      tool: 'device.screen_observe',
      arguments: {},
      origin: { kind: 'operation', operation_id: `op-${Math.random().toString(36).slice(2)}` },
      device_id: 'phone-1',
      ...overrides,
    });

  beforeAll(async () => {
    db = await createTestDatabase();
    const config = loadPolicyConfig({ NATS_URL: testEnv().natsUrl, DATABASE_URL: db.url, ORMUZ_NAMESPACE: namespace, LOG_LEVEL: 'silent' });
    svc = await startService({
      service: 'policy',
      config,
      streams: ['calls'],
      schema: POLICY_SCHEMA,
      migrations: policyMigrations,
      module: (infra) => PolicyModule.with(infra, config),
    });
  });
  afterAll(async () => {
    await svc.infra.jsm.streams.delete(streamName(namespace, 'calls'));
    await svc.close();
    await db.drop();
  });

  it('authorizes a low-risk call and stages a high-risk one with an approval id and owner summary', async () => {
    const low = await submit();
    expect(low).toMatchObject({ status: 'authorized', duplicate: false });
    const high = await submit({ tool: 'device.send_message', arguments: { recipient: 'Alice', message_body: 'hi' } });
    expect(high).toMatchObject({ status: 'staged', approval_id: expect.stringMatching(/^apr_/) });
    expect(high.summary).toMatch(/Alice/);
    expect(high.message).toMatch(/pending_confirmation/);
  });

  it('refuses an unknown tool with the closest real names', async () => {
    const r = await submit({ tool: 'device.send_mesage', arguments: { recipient: 'A' } });
    expect(r.status).toBe('refused');
    expect(r.message).toMatch(/device\.send_message/);
    expect(r.message).toMatch(/ormuz\.search_tools/);
  });

  it('lets a duplicate with the same bytes observe the original, and refuses different bytes naming the id', async () => {
    const origin = { kind: 'operation', operation_id: 'op-dup-1' };
    const first = await submit({ origin, arguments: {} });
    const again = await submit({ origin, arguments: {} });
    expect(again).toMatchObject({ call_id: first.call_id, status: 'authorized', duplicate: true });
    const timeline = await call<{ timeline: unknown[] }>('status', { tenant: 'acme', call_id: first.call_id, timeline: true });
    expect(timeline.timeline).toHaveLength(2);
    await expect(submit({ origin, tool: 'device.list_contacts', arguments: { name_query: 'x' } })).rejects.toMatchObject({
      code: 'payload_conflict',
      message: expect.stringContaining(first.call_id),
    });
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
    const sealed = await call<{ status: string }>('seal', { tenant: 'acme', call_id: r.call_id, sealed_by: 'ops@acme', reason: 'test' });
    expect(sealed.status).toBe('sealed');
    const status = await call<{ status: { status: string }; version: number }>('status', { tenant: 'acme', call_id: r.call_id });
    expect(status.status.status).toBe('sealed');
    const again = await call<{ version: number }>('status', { tenant: 'acme', call_id: r.call_id });
    expect(again.version).toBe(status.version);
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
    await expect(submit({ origin: { kind: 'operation', operation_id: 'op.>' } })).rejects.toMatchObject({ code: 'schema_violation' });
  });

  it('answers malformed JSON and wrong types with a clear error', async () => {
    const reply = await svc.infra.nc.request(`${namespace}.cmd.policy.submit`, '{"tenant":', { timeout: 2000 });
    expect(JSON.parse(reply.string())).toMatchObject({ ok: false, error: { code: 'malformed_json' } });
    await expect(submit({ arguments: 'not an object' })).rejects.toBeInstanceOf(RemoteError);
    await expect(submit({ arguments: { n: 1 }, extra: true })).rejects.toMatchObject({ message: expect.stringContaining("unexpected property 'extra'") });
  });

  it('reports an unknown call as not found with the next step', async () => {
    await expect(call('status', { tenant: 'acme', call_id: 'call_nope' })).rejects.toMatchObject({ code: 'call_not_found' });
  });

  it('keeps tenants apart: another tenant cannot read a call', async () => {
    const r = await submit();
    await expect(call('status', { tenant: 'other', call_id: r.call_id })).rejects.toMatchObject({ code: 'call_not_found' });
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

  it('validates its configuration at boot', () => {
    expect(() => loadBaseConfig({ ORMUZ_NAMESPACE: 'a.b' })).toThrow(/ORMUZ_NAMESPACE/);
  });
});
