/**
 * A tenant's finance app lists (`policy.risk.apps.set`) and what the device's latest observation shows: both reach the
 * risk classifier at submit. Observations are recorded on the log as a bridge records them.
 */
import type { JsonValue, RpcName, RpcRequestOf } from '@ormuz/contracts';
import { callRpc, ToolCalls, type RunningService } from '@ormuz/service-kit';
import { randomNamespace, adminFor } from '@ormuz/testing';
import { startPolicy, type TestPolicy } from './policy.fixture.js';

const NOTES = 'com.y.notes';
const LENDER = 'com.x.kasse';
const row = (n: number, ref: string, role: string, text: string) => ({
  ref,
  role,
  text,
  clickable: true,
  depth: 0,
  bounds: { left: 40, top: 120 + n * 140, right: 1040, bottom: 240 + n * 140 },
});

describe('policy: tenant finance app lists and observed screens', () => {
  let policy: TestPolicy;
  let svc: RunningService;
  let bridge: ToolCalls;
  const namespace = randomNamespace();
  const cause = { correlationid: 'test', causationid: 'test' };
  let n = 0;
  const call = <N extends RpcName>(name: N, body: NoInfer<RpcRequestOf<N>>) =>
    adminFor(body).then((credential) => callRpc(svc.infra.nc, namespace, name, body, { credential, checkReply: true }));
  const submit = (tenant: string, tool: string, args: Record<string, unknown>) =>
    call('policy.submit', {
      tenant,
      agent_id: 'agent-1',
      tool,
      arguments: args,
      origin: { kind: 'operation', operation_id: `op-${++n}` },
      device_id: 'phone-1',
    });
  const tap = (tenant: string, pkg: string, target_text: string, ref = 'e3') =>
    submit(tenant, 'device.tap', { foreground_package: pkg, target_text, ref });

  /** Records a finished device.screen_observe with `result`, as the bridge does. */
  async function observe(tenant: string, result: JsonValue) {
    const r = await submit(tenant, 'device.screen_observe', {});
    expect(r.status).toBe('authorized');
    const requestId = `req-${r.call_id.slice(5)}`;
    const deadline = new Date(Date.now() + 60_000).toISOString();
    const executor = { kind: 'device' as const, device_id: 'phone-1' };
    await bridge.execute(
      tenant,
      r.call_id,
      { type: 'DispatchCall', data: { call_id: r.call_id, request_id: requestId, executor, deadline } },
      cause,
    );
    await bridge.execute(
      tenant,
      r.call_id,
      {
        type: 'ClaimStart',
        data: { call_id: r.call_id, request_id: requestId, executor_id: 'phone-1', boot_id: 'boot-1' },
      },
      cause,
    );
    await bridge.execute(
      tenant,
      r.call_id,
      {
        type: 'RecordOutcome',
        data: { call_id: r.call_id, request_id: requestId, outcome: { kind: 'succeeded', result } },
      },
      cause,
    );
  }
  const screen = (foreground_package: string, elements: ReturnType<typeof row>[]): JsonValue => ({
    foreground_package,
    screen: 'main',
    elements,
    total_elements: elements.length,
    partial: false,
  });

  beforeAll(async () => {
    policy = await startPolicy(namespace);
    svc = policy.svc;
    bridge = new ToolCalls(svc.infra.store, namespace, '/test/device-bridge');
  });
  afterAll(async () => {
    await policy.stop();
  });

  it('stages a tap in an app the tenant lists as finance, and only for that tenant', async () => {
    expect((await tap('acme', LENDER, 'Open')).status).toBe('authorized');
    const saved = await call('policy.risk.apps.set', {
      tenant: 'acme',
      finance: ['com.X.Kasse.*'],
      not_finance: [NOTES],
    });
    expect(saved).toEqual({ tenant: 'acme', finance: [LENDER], not_finance: [NOTES] });
    expect(await call('policy.risk.apps.get', { tenant: 'acme' })).toEqual(saved);
    expect((await tap('acme', LENDER, 'Open')).status).toBe('staged');
    expect((await tap('acme', `${LENDER}.beta`, 'Open')).status).toBe('staged');
    expect((await tap('globex', LENDER, 'Open')).status).toBe('authorized');
    expect(await call('policy.risk.apps.get', { tenant: 'globex' })).toEqual({
      tenant: 'globex',
      finance: [],
      not_finance: [],
    });
  });

  it('stages a tap in an unknown app whose observed screen shows a balance, unless the tenant says it is not finance', async () => {
    const money = screen(NOTES, [
      row(0, 'e1', 'text', 'Available balance'),
      row(1, 'e2', 'text', '€1,204.50'),
      row(2, 'e3', 'button', 'Open'),
    ]);
    await observe('globex', money);
    expect((await tap('globex', NOTES, 'Open')).status).toBe('staged');
    await observe('acme', money);
    expect((await tap('acme', NOTES, 'Open')).status).toBe('authorized');
  });

  it('judges a Settings tap by the observed element: an information page is low, a switch is high', async () => {
    await observe(
      'initech',
      screen('com.android.settings', [
        row(0, 'e1', 'list_item', 'Battery'),
        row(1, 'e2', 'switch', 'Display'),
        row(2, 'e3', 'list_item', 'Reset options'),
      ]),
    );
    expect((await tap('initech', 'com.android.settings', 'Battery', 'e1')).status).toBe('authorized');
    expect(
      (await submit('initech', 'device.tap', { foreground_package: 'com.android.settings', ref: 'e2' })).status,
    ).toBe('staged');
    expect((await tap('initech', 'com.android.settings', 'Reset options')).status).toBe('staged');
  });

  it('refuses bad lists with the fix, storing nothing', async () => {
    await expect(
      call('policy.risk.apps.set', { tenant: 'hooli', finance: ['my bank'], not_finance: [] }),
    ).rejects.toMatchObject({
      message: expect.stringMatching(
        /--finance entry "my bank" is not an Android package name; write it as the app's package.*Nothing was stored\./,
      ),
    });
    await expect(
      call('policy.risk.apps.set', { tenant: 'hooli', finance: ['com.a.b'], not_finance: ['com.a.b'] }),
    ).rejects.toMatchObject({
      message: expect.stringMatching(/in both --finance and --not-finance/),
    });
    await expect(
      call('policy.risk.apps.set', { tenant: 'hoo.li', finance: [], not_finance: [] }),
    ).rejects.toMatchObject({
      code: 'schema_violation',
    });
    expect(await call('policy.risk.apps.get', { tenant: 'hooli' })).toEqual({
      tenant: 'hooli',
      finance: [],
      not_finance: [],
    });
  });
});
