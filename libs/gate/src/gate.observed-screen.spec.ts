import { loadShippedCatalog, type Grant } from '@ormuz/catalog';
import { TenantAppLists } from '@ormuz/risk';
import { decideGate, type GateContext, type GateDecision } from './gate.js';
import type { ObservedElement, ScreenObservation } from './screen-target.js';

const catalog = loadShippedCatalog();
const grant: Grant = { tenant: 'acme', agent_id: 'agent-1', allow: ['ormuz', 'device'] };
const ctx: GateContext = { catalog, grant, approvalTtlMs: 60_000 };
const now = new Date('2026-12-01T12:00:00Z');
const SETTINGS = 'com.android.settings';
const NOTES = 'com.y.notes';

const row = (n: number, ref: string, role: string, text: string): ObservedElement => ({
  ref,
  role,
  text,
  clickable: true,
  bounds: { left: 40, top: 120 + n * 140, right: 1040, bottom: 240 + n * 140 },
});
const screen = (pkg: string, elements: ObservedElement[], changed_by: string | null = null): ScreenObservation => ({
  foreground_package: pkg,
  screen: 'main',
  elements,
  changed_by,
});
const SETTINGS_MAIN = screen(SETTINGS, [
  row(0, 'e1', 'list_item', 'Battery'),
  row(1, 'e2', 'switch', 'Wi-Fi'),
  row(2, 'e3', 'list_item', 'About phone'),
]);
const BALANCE = screen(NOTES, [
  row(0, 'e1', 'text', 'Balance'),
  row(1, 'e2', 'text', '$2,310.07'),
  row(2, 'e3', 'button', 'Open'),
]);

function decide(
  args: Record<string, unknown>,
  observation: ScreenObservation | null,
  c: GateContext = ctx,
): GateDecision {
  const d = decideGate(c, { tool: 'device.tap', arguments: args, deviceId: 'phone-1', observation }, now);
  if (d.kind === 'needs_observation') throw new Error('expected a decision');
  return d;
}

describe('gate: the classifier sees what the latest observation shows', () => {
  it('authorizes a tap on an information page in Settings, by ref or by its text', () => {
    expect(decide({ ref: 'e1', foreground_package: SETTINGS }, SETTINGS_MAIN).kind).toBe('authorize');
    expect(decide({ ref: 'e3', target_text: 'About phone', foreground_package: SETTINGS }, SETTINGS_MAIN).kind).toBe(
      'authorize',
    );
  });

  it('stages a tap on a switch in Settings, naming the switch', () => {
    const d = decide({ ref: 'e2', foreground_package: SETTINGS }, SETTINGS_MAIN);
    expect(d.kind).toBe('stage');
    if (d.kind !== 'stage') throw new Error('not staged');
    expect(d.verdict.reasons.join('\n')).toMatch(/the target is a switch: tapping it changes a setting/);
  });

  it('uses the element role only from a current observation; after a change the label decides', () => {
    // A switch labelled like an information page: once the screen may have changed, its role is not used.
    const odd = screen(SETTINGS, [row(0, 'e1', 'switch', 'Battery')]);
    expect(decide({ ref: 'e1', target_text: 'Battery', foreground_package: SETTINGS }, odd).kind).toBe('stage');
    const stale = screen(SETTINGS, [row(0, 'e1', 'switch', 'Battery')], 'device.tap');
    expect(decide({ ref: 'e1', target_text: 'Battery', foreground_package: SETTINGS }, stale).kind).toBe('authorize');
  });

  it('stages a tap in an unknown app whose screen shows a balance, and not for a screen of another app', () => {
    expect(decide({ ref: 'e3', target_text: 'Open', foreground_package: NOTES }, BALANCE).kind).toBe('stage');
    expect(decide({ ref: 'e3', target_text: 'Open', foreground_package: 'com.other.app' }, BALANCE).kind).toBe(
      'authorize',
    );
  });

  it("applies the tenant's lists", () => {
    const apps = new TenantAppLists({ finance: ['com.x.kasse'], not_finance: [NOTES] });
    expect(decide({ ref: 'e3', target_text: 'Open', foreground_package: NOTES }, BALANCE, { ...ctx, apps }).kind).toBe(
      'authorize',
    );
    expect(
      decide({ ref: 'e1', target_text: 'Open', foreground_package: 'com.x.kasse' }, null, { ...ctx, apps }).kind,
    ).toBe('stage');
  });
});
