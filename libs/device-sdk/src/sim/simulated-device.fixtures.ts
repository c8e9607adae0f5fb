/** Helpers of the simulated device's specs: observing, finding refs, a composed message, a judged verdict. */
import { SIM_PACKAGES } from './sim-apps.js';
import { SimulatedDevice } from './simulated-device.js';

export type Observation = {
  foreground_package: string;
  elements: { ref: string; text: string; bounds: { left: number; top: number } }[];
  partial: boolean;
  continuation?: string;
  total_elements: number;
};

export type ScreenResult = {
  succeeded: boolean;
  changed: boolean;
  foreground_package: string | null;
  screen: string | null;
  settled: boolean;
  target?: { ref: string; text: string } | null;
};

export async function observe(device: SimulatedDevice): Promise<Observation> {
  return (await device.execute('device.screen_observe', { max_elements: 200 })) as Observation;
}

export async function refOf(device: SimulatedDevice, text: string): Promise<string> {
  const found = (await observe(device)).elements.find((e) => e.text === text);
  if (!found) throw new Error(`no element ${text} on screen`);
  return found.ref;
}

export const COMPOSE = { package: SIM_PACKAGES.messages, screen: 'compose' };
export const manyContacts = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ name: `Contact ${String(i + 1).padStart(2, '0')}`, number: `+3361000${i}` }));

/** The messages app's compose screen with Alice Martin in To and "On my way" typed in Message (focused). */
export async function composed(): Promise<SimulatedDevice> {
  const device = new SimulatedDevice({ foreground: COMPOSE });
  await device.execute('device.type_text', { ref: await refOf(device, 'To'), text: 'Alice Martin' });
  await device.execute('device.type_text', { ref: await refOf(device, 'Message'), text: 'On my way' });
  return device;
}

const noSignal = new AbortController().signal;
export const judged = (target_text: string | null, foreground_package: string = SIM_PACKAGES.messages) => ({
  signal: noSignal,
  verdict: {
    level: 'low' as const,
    reasons: ['test'],
    judged_on: { foreground_package, target_text, source: 'observation' as const },
  },
});
