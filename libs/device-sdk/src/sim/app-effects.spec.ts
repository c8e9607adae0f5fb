import { SIM_PACKAGES } from './sim-apps.js';
import { COMPOSE, composed, observe, refOf } from './simulated-device.fixtures.js';
import { SimulatedDevice } from './simulated-device.js';

describe('SimulatedDevice buttons do what their labels say', () => {
  it('Send sends what is typed to the contact, clears the form and shows the conversation', async () => {
    const device = await composed();
    const result = await device.execute('device.tap', { x: 540, y: 600, foreground_package: SIM_PACKAGES.messages });
    expect(result).toMatchObject({ strategy: 'coordinates', target: { text: 'Send' }, changed: true, screen: 'inbox' });
    expect(device.messages).toHaveLength(1);
    expect(device.messages[0]).toMatchObject({ to: { name: 'Alice Martin' }, body: 'On my way' });
    expect(device.fieldText(SIM_PACKAGES.messages, 'compose', 'Message')).toBe('');
    const inbox = await observe(device);
    expect(inbox.elements.map((e) => e.text)).toContain('Alice Martin: On my way');
  });

  it('Send with an empty form or an unknown recipient sends nothing and says what to type', async () => {
    const empty = new SimulatedDevice({ foreground: COMPOSE });
    await expect(empty.execute('device.tap', { ref: await refOf(empty, 'Send') })).rejects.toMatchObject({
      code: 'nothing_to_send',
      message: expect.stringMatching(/nothing was sent\. Type them, then tap Send/),
    });
    const stranger = new SimulatedDevice({ foreground: COMPOSE });
    await stranger.execute('device.type_text', { ref: await refOf(stranger, 'To'), text: 'Zed Nobody' });
    await stranger.execute('device.type_text', { ref: await refOf(stranger, 'Message'), text: 'hi' });
    await expect(stranger.execute('device.tap', { ref: await refOf(stranger, 'Send') })).rejects.toMatchObject({
      code: 'unknown_recipient',
    });
    expect([...empty.messages, ...stranger.messages]).toEqual([]);
  });

  it('Confirm transfer moves the typed amount out of the account, and the accounts screen shows it', async () => {
    const device = new SimulatedDevice({ foreground: { package: SIM_PACKAGES.bank, screen: 'transfer' } });
    await device.execute('device.type_text', { ref: await refOf(device, 'Amount'), text: '25.50' });
    await device.execute('device.tap', { ref: await refOf(device, 'Confirm transfer') });
    expect(device.balanceCents).toBe(231_055 - 2_550);
    expect(device.transfers).toEqual([expect.objectContaining({ amountCents: 2_550 })]);
    expect((await observe(device)).elements.map((e) => e.text)).toContain('Current account •••• 4821: €2,285.05');
  });

  it('Confirm transfer refuses an amount that is not one, or more than the balance, and moves nothing', async () => {
    for (const amount of ['lots', '0', '999999']) {
      const device = new SimulatedDevice({ foreground: { package: SIM_PACKAGES.bank, screen: 'transfer' } });
      await device.execute('device.type_text', { ref: await refOf(device, 'Amount'), text: amount });
      await expect(device.execute('device.press_key', { key: 'enter' })).rejects.toMatchObject({
        code: 'transfer_refused',
        message: expect.stringMatching(/no money was moved/),
      });
      expect(device.balanceCents).toBe(231_055);
    }
  });
});
