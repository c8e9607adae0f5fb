import type { JsonValue } from '@ormuz/contracts';
import {
  CORE_EXTENSION,
  Catalog,
  DEFAULT_DESIGNER_CONFIG,
  DEVICE_EXTENSION,
  normalizeArguments,
  outputProblems,
  validateArguments,
} from '@ormuz/catalog';
import { SIM_PACKAGES } from './sim-apps.js';
import { SIM_TOOLS, SimulatedDevice, type SimulatedDeviceOptions } from './simulated-device.js';

const catalog = Catalog.load([DEVICE_EXTENSION], { core: CORE_EXTENSION, designer: DEFAULT_DESIGNER_CONFIG });

/**
 * Runs a call the way the platform would: only with arguments the catalog accepts; returns the problems of its result
 * against the tool's latest contract version (what an unpinned grant offers), which the simulator implements.
 */
async function run(device: SimulatedDevice, tool: string, args: Record<string, JsonValue>): Promise<string[]> {
  return (await runFor(device, tool, args)).problems;
}

/** {@link run}, also giving the result, for a row that must show it exercised what it names. */
async function runFor(
  device: SimulatedDevice,
  tool: string,
  args: Record<string, JsonValue>,
): Promise<{ result: JsonValue; problems: string[] }> {
  const entry = catalog.resolve(tool);
  if (!entry) throw new Error(`the catalog has no ${tool}`);
  const normalized = normalizeArguments(entry, args);
  if (!normalized.ok) throw new Error(normalized.message);
  const verdict = validateArguments(entry, normalized.args);
  if (!verdict.ok) throw new Error(`${tool}: ${verdict.message}`);
  const result = await device.execute(tool, normalized.args);
  return { result, problems: outputProblems(entry, result) };
}

/** Replaces Alice Martin's record (same name, new number) between the device's listing and its re-check. */
const EDIT_ALICE_MIDWAY: SimulatedDeviceOptions = {
  beforeContactCheck: (name, d) => {
    if (name === 'Alice Martin')
      d.contacts[d.contacts.findIndex((c) => c.name === name)] = { name, number: '+33600000000' };
  },
};

const LAUNCHER = { foreground_package: SIM_PACKAGES.launcher };
const MESSAGES = { foreground_package: SIM_PACKAGES.messages };

describe('the simulated device against the catalog device extension', () => {
  it('runs every device tool the catalog declares', () => {
    expect([...SIM_TOOLS].sort()).toEqual(
      catalog
        .toolNames()
        .filter((name) => name.startsWith('device.'))
        .sort(),
    );
  });

  it.each<[string, (d: SimulatedDevice) => Promise<string[]>]>([
    ['device.screen_observe', (d) => run(d, 'device.screen_observe', { max_elements: 2 })],
    ['device.tap by ref', (d) => run(d, 'device.tap', { ...LAUNCHER, ref: 'e2', target_text: 'Messages' })],
    ['device.tap by coordinates', (d) => run(d, 'device.tap', { ...LAUNCHER, x: 5, y: 2300 })],
    [
      'device.type_text',
      async (d) => {
        d.setForeground({ package: SIM_PACKAGES.messages, screen: 'compose' });
        await d.execute('device.screen_observe', {});
        return run(d, 'device.type_text', { ...MESSAGES, text: 'On my way', ref: 'e3', target_text: 'Message' });
      },
    ],
    ['device.swipe', (d) => run(d, 'device.swipe', { ...LAUNCHER, direction: 'up' })],
    ['device.press_key', (d) => run(d, 'device.press_key', { ...LAUNCHER, key: 'recent_apps' })],
    ['device.open_app', (d) => run(d, 'device.open_app', { package_name: SIM_PACKAGES.contacts })],
    ['device.toggle_setting', (d) => run(d, 'device.toggle_setting', { setting: 'wifi', desired_state: 'on' })],
    ['device.list_contacts', (d) => run(d, 'device.list_contacts', { name_query: 'a', limit: 1 })],
    [
      'device.delete_contacts_verified',
      (d) => {
        d.contacts.push({ name: 'Bob Chen', number: '+14155550999' });
        return run(d, 'device.delete_contacts_verified', { contact_names: ['Alice Martin', 'Bob Chen', 'Zoe'] });
      },
    ],
    [
      'device.delete_contacts_verified skipping a contact changed since listed',
      async () => {
        const d = new SimulatedDevice(EDIT_ALICE_MIDWAY);
        const { result, problems } = await runFor(d, 'device.delete_contacts_verified', {
          contact_names: ['Alice Martin', 'Bob Chen'],
        });
        expect(result).toEqual({
          deleted: ['Bob Chen'],
          skipped: [{ name: 'Alice Martin', reason: 'changed_since_listed' }],
        });
        return problems;
      },
    ],
    ['device.send_message', (d) => run(d, 'device.send_message', { recipient: 'Alice Martin', message_body: 'Hello' })],
  ])('%s takes the catalog arguments and returns its output contract', async (_name, call) => {
    expect(await call(new SimulatedDevice())).toEqual([]);
  });

  it('checks device.delete_contacts_verified against version 2, the first to list changed_since_listed', () => {
    expect(catalog.resolve('device.delete_contacts_verified')?.version).toBe(2);
  });
});
