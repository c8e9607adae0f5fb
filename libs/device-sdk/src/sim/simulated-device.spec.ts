import { SIM_PACKAGES, SimulatedDevice } from './simulated-device.js';

type Observation = {
  foreground_package: string;
  elements: { ref: string; text: string; bounds: { left: number; top: number } }[];
  partial: boolean;
  continuation?: string;
  total_elements: number;
};

describe('SimulatedDevice', () => {
  it('bounds an observation and hands out a continuation for the rest', async () => {
    const device = new SimulatedDevice();
    const first = (await device.execute('device.screen_observe', { max_elements: 2 })) as Observation;
    expect(first).toMatchObject({ foreground_package: SIM_PACKAGES.launcher, partial: true, total_elements: 5 });
    expect(first.elements.map((e) => e.text)).toEqual(['Home', 'Messages']);

    const rest = (await device.execute('device.screen_observe', {
      max_elements: 10,
      continuation: first.continuation!,
    })) as Observation;
    expect(rest.partial).toBe(false);
    expect(rest.continuation).toBeUndefined();
    expect(rest.elements.map((e) => e.text)).toEqual(['Contacts', 'Bank', 'Settings']);
  });

  it('refuses a continuation once the screen has changed', async () => {
    const device = new SimulatedDevice();
    const first = (await device.execute('device.screen_observe', { max_elements: 1 })) as Observation;
    await device.execute('device.open_app', { package_name: SIM_PACKAGES.settings });
    await expect(device.execute('device.screen_observe', { continuation: first.continuation! })).rejects.toMatchObject({
      code: 'stale_continuation',
    });
  });

  it('taps by ref and says what changed', async () => {
    const device = new SimulatedDevice();
    const screen = (await device.execute('device.screen_observe', {})) as Observation;
    const messages = screen.elements.find((e) => e.text === 'Messages')!;
    expect(await device.execute('device.tap', { ref: messages.ref })).toEqual({
      succeeded: true,
      strategy: 'ref',
      target: { ref: messages.ref, text: 'Messages' },
      changed: true,
      foreground_package: SIM_PACKAGES.messages,
      screen: 'inbox',
      settled: true,
    });
  });

  it('falls back to the element text when the ref is from an earlier screen', async () => {
    const device = new SimulatedDevice({ foreground: { package: SIM_PACKAGES.settings, screen: 'main' } });
    const screen = (await device.execute('device.screen_observe', {})) as Observation;
    const bluetooth = screen.elements.find((e) => e.text === 'Bluetooth')!;
    await device.execute('device.tap', { ref: bluetooth.ref });
    const again = (await device.execute('device.tap', { ref: bluetooth.ref })) as {
      strategy: string;
      changed: boolean;
    };
    expect(again).toMatchObject({ strategy: 'text', changed: true });
    expect(device.settings.bluetooth).toBe(false);
  });

  it('reports a tap that landed on nothing as unchanged', async () => {
    const device = new SimulatedDevice();
    expect(await device.execute('device.tap', { x: 5, y: 2300 })).toMatchObject({
      succeeded: true,
      strategy: 'coordinates',
      target: null,
      changed: false,
    });
  });

  it('asks for ref or both coordinates', async () => {
    await expect(new SimulatedDevice().execute('device.tap', { x: 5 })).rejects.toThrow(
      /Provide ref .* or both x and y/,
    );
  });

  it('sends a message to a contact by name or number, and refuses an unknown recipient', async () => {
    const device = new SimulatedDevice({ now: () => new Date('2026-05-01T10:00:00.000Z') });
    expect(await device.execute('device.send_message', { recipient: 'alice martin', message_body: 'Hello' })).toEqual({
      message_id: 'msg-1',
      to: { name: 'Alice Martin', number: '+33612345678' },
      sent_at: '2026-05-01T10:00:00.000Z',
    });
    expect(await device.execute('device.send_message', { recipient: '+1 415 555 0123', message_body: 'Hi' })).toMatchObject({
      message_id: 'msg-2',
      to: { name: 'Bob Chen' },
    });
    await expect(device.execute('device.send_message', { recipient: 'Zed', message_body: 'Hi' })).rejects.toMatchObject({
      code: 'unknown_recipient',
      message: expect.stringMatching(/device\.list_contacts/),
    });
    expect(device.messages).toHaveLength(2);
  });

  it('names the installed apps when asked to open a missing one', async () => {
    await expect(
      new SimulatedDevice().execute('device.open_app', { package_name: 'com.example.nope' }),
    ).rejects.toMatchObject({
      code: 'app_not_installed',
      message: expect.stringMatching(/com\.example\.bank/),
    });
  });

  it('tells the device policy which app each action targets', () => {
    const device = new SimulatedDevice({ foreground: null });
    expect(device.targetPackage('device.tap', { ref: 'e1' })).toBeNull();
    expect(device.targetPackage('device.screen_observe', {})).toBeUndefined();
    expect(device.targetPackage('device.open_app', { package_name: SIM_PACKAGES.bank })).toBe(SIM_PACKAGES.bank);
    device.setForeground({ package: SIM_PACKAGES.bank, screen: 'accounts' });
    expect(device.targetPackage('device.tap', { ref: 'e1' })).toBe(SIM_PACKAGES.bank);
  });

  it('fails an unknown tool with the list of real ones', async () => {
    await expect(new SimulatedDevice().execute('device.reboot', {})).rejects.toMatchObject({
      code: 'unknown_tool',
      message: expect.stringMatching(/device\.screen_observe, device\.tap/),
    });
  });
});
