import { SIM_PACKAGES } from './sim-apps.js';
import {
  COMPOSE,
  composed,
  judged,
  manyContacts,
  observe,
  refOf,
  type Observation,
  type ScreenResult,
} from './simulated-device.fixtures.js';
import { SimulatedDevice } from './simulated-device.js';

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
});

describe('SimulatedDevice checks the verdict it was given (judged_on)', () => {
  it('refuses a coordinate tap judged on another element, and sends nothing', async () => {
    const device = await composed();
    await expect(
      device.execute('device.tap', { x: 540, y: 600, foreground_package: SIM_PACKAGES.messages }, judged('Message')),
    ).rejects.toMatchObject({
      code: 'target_mismatch',
      message: expect.stringMatching(
        /judged as acting on an element showing "Message", but it would act on "Send"; nothing was tapped\. Call device\.screen_observe/,
      ),
    });
    expect(device.messages).toEqual([]);
  });

  it('refuses a tap judged on no element when the finger lands on one', async () => {
    const device = await composed();
    await expect(device.execute('device.tap', { x: 540, y: 600 }, judged(null))).rejects.toMatchObject({
      code: 'target_mismatch',
    });
    expect(device.messages).toEqual([]);
  });

  it('refuses an action judged for another app', async () => {
    const device = await composed();
    await expect(
      device.execute('device.swipe', { direction: 'up' }, judged(null, SIM_PACKAGES.contacts)),
    ).rejects.toMatchObject({
      code: 'foreground_changed',
      message: expect.stringMatching(/judged for com\.example\.contacts/),
    });
  });

  it('refuses enter judged on another submit action than the screen has', async () => {
    const device = await composed();
    await expect(device.execute('device.press_key', { key: 'enter' }, judged('Search'))).rejects.toMatchObject({
      code: 'target_mismatch',
      message: expect.stringMatching(/would act on "Send"/),
    });
    expect(device.messages).toEqual([]);
  });

  it('acts when the screen shows what was judged (ignoring case), typing included', async () => {
    const device = await composed();
    await device.execute('device.type_text', { ref: await refOf(device, 'On my way'), text: '!' }, judged('message'));
    await device.execute('device.tap', { x: 540, y: 600 }, judged('send'));
    expect(device.messages).toEqual([expect.objectContaining({ body: 'On my way!' })]);
  });
});

describe('SimulatedDevice screen actions', () => {
  describe('foreground check', () => {
    it.each([
      ['device.tap', { ref: 'e2' }],
      ['device.type_text', { text: 'hello' }],
      ['device.swipe', { direction: 'up' }],
      ['device.press_key', { key: 'home' }],
    ])('%s refuses when another app is in front than the call names, and changes nothing', async (tool, args) => {
      const device = new SimulatedDevice();
      await expect(device.execute(tool, { ...args, foreground_package: SIM_PACKAGES.bank })).rejects.toMatchObject({
        code: 'foreground_changed',
        message: expect.stringMatching(/com\.android\.launcher, not com\.example\.bank; nothing was .*screen_observe/),
      });
      expect(device.foreground).toEqual({ package: SIM_PACKAGES.launcher, screen: 'home' });
    });

    it.each(['device.tap', 'device.type_text', 'device.swipe', 'device.press_key'])(
      '%s refuses when no app is identifiably in front',
      async (tool) => {
        const device = new SimulatedDevice({ foreground: null });
        const args = { ref: 'e1', x: 1, y: 1, text: 'a', direction: 'up', key: 'back' };
        await expect(device.execute(tool, args)).rejects.toMatchObject({ code: 'screen_unavailable' });
        expect(device.targetPackage(tool, args)).toBeNull();
      },
    );
  });

  describe('target_text', () => {
    it('acts when the element shows the text the call was judged on, ignoring case', async () => {
      const device = new SimulatedDevice();
      const ref = await refOf(device, 'Messages');
      const result = (await device.execute('device.tap', {
        ref,
        target_text: 'messages',
        foreground_package: SIM_PACKAGES.launcher,
      })) as ScreenResult;
      expect(result).toMatchObject({ succeeded: true, changed: true, foreground_package: SIM_PACKAGES.messages });
    });

    it('refuses a tap whose element shows other text than the call names', async () => {
      const device = new SimulatedDevice();
      const ref = await refOf(device, 'Bank');
      await expect(device.execute('device.tap', { ref, target_text: 'Messages' })).rejects.toMatchObject({
        code: 'target_mismatch',
        message: expect.stringMatching(/shows "Bank", not "Messages"; nothing was tapped/),
      });
      expect(device.foreground?.package).toBe(SIM_PACKAGES.launcher);
    });
  });

  describe('device.type_text', () => {
    it('types into the field given by ref and reports the field, not a strategy', async () => {
      const device = new SimulatedDevice({ foreground: COMPOSE });
      const ref = await refOf(device, 'Message');
      const result = await device.execute('device.type_text', {
        text: 'Running late',
        ref,
        target_text: 'Message',
        foreground_package: SIM_PACKAGES.messages,
      });
      expect(result).toEqual({
        succeeded: true,
        target: { ref, text: 'Message' },
        changed: true,
        foreground_package: SIM_PACKAGES.messages,
        screen: 'compose',
        settled: true,
      });
      expect(device.fieldText(SIM_PACKAGES.messages, 'compose', 'Message')).toBe('Running late');
      expect((await observe(device)).elements.map((e) => e.text)).toContain('Running late');
    });

    it('types into the focused field when no ref is given, appending to what is there', async () => {
      const device = new SimulatedDevice({ foreground: COMPOSE });
      await device.execute('device.tap', { ref: await refOf(device, 'To') });
      await device.execute('device.type_text', { text: 'Alice' });
      await device.execute('device.type_text', { text: ' Martin', target_text: 'To' });
      expect(device.fieldText(SIM_PACKAGES.messages, 'compose', 'To')).toBe('Alice Martin');
    });

    it('refuses without a ref when no field has focus', async () => {
      const device = new SimulatedDevice({ foreground: COMPOSE });
      await expect(device.execute('device.type_text', { text: 'hi' })).rejects.toMatchObject({
        code: 'no_focused_field',
      });
    });

    it('refuses a ref that is not an input field', async () => {
      const device = new SimulatedDevice({ foreground: COMPOSE });
      const ref = await refOf(device, 'Send');
      await expect(device.execute('device.type_text', { text: 'hi', ref })).rejects.toMatchObject({
        code: 'not_an_input',
        message: expect.stringMatching(/is a button \("Send"\), not an input field; nothing was typed/),
      });
    });

    it('asks for the text to type', async () => {
      await expect(
        new SimulatedDevice({ foreground: COMPOSE }).execute('device.type_text', { text: '' }),
      ).rejects.toMatchObject({ code: 'invalid_arguments', message: expect.stringMatching(/Provide text/) });
    });
  });

  describe('device.swipe', () => {
    it('scrolls a long list and says when the end is reached', async () => {
      const device = new SimulatedDevice({
        contacts: manyContacts(30),
        foreground: { package: SIM_PACKAGES.contacts, screen: 'list' },
      });
      const first = await observe(device);
      expect(first.elements[0]?.text).toBe('Contacts');
      expect(first.total_elements).toBeLessThan(31);

      const args = { direction: 'up', foreground_package: SIM_PACKAGES.contacts };
      expect(await device.execute('device.swipe', args)).toEqual({
        succeeded: true,
        changed: true,
        foreground_package: SIM_PACKAGES.contacts,
        screen: 'list',
        settled: true,
      });
      const second = await observe(device);
      expect(second.elements.map((e) => e.text)).toContain('Contact 30');
      expect(second.elements[0]!.bounds.top).toBeGreaterThanOrEqual(0);

      expect(await device.execute('device.swipe', args)).toMatchObject({ changed: false });
      expect(await device.execute('device.swipe', { ...args, direction: 'down' })).toMatchObject({ changed: true });
      expect((await observe(device)).elements[0]?.text).toBe('Contacts');
    });

    it('reports a swipe with nothing to scroll as unchanged', async () => {
      const device = new SimulatedDevice();
      for (const direction of ['up', 'down', 'left', 'right']) {
        expect(await device.execute('device.swipe', { direction })).toMatchObject({ succeeded: true, changed: false });
      }
    });

    it('refuses a ref that is not on the screen, and an unknown direction', async () => {
      const device = new SimulatedDevice();
      await expect(device.execute('device.swipe', { direction: 'up', ref: 'e99' })).rejects.toMatchObject({
        code: 'stale_ref',
      });
      await expect(device.execute('device.swipe', { direction: 'sideways' })).rejects.toMatchObject({
        code: 'invalid_arguments',
        message: 'direction must be one of up, down, left, right, not "sideways".',
      });
    });
  });

  describe('device.press_key', () => {
    it('goes back through an app to the launcher, then has nothing left to go back to', async () => {
      const device = new SimulatedDevice({ foreground: COMPOSE });
      const back = { key: 'back' };
      expect(await device.execute('device.press_key', back)).toMatchObject({ changed: true, screen: 'inbox' });
      expect(await device.execute('device.press_key', back)).toMatchObject({
        changed: true,
        foreground_package: SIM_PACKAGES.launcher,
        screen: 'home',
      });
      expect(await device.execute('device.press_key', back)).toMatchObject({ succeeded: true, changed: false });
    });

    it('closes the keyboard with back before navigating', async () => {
      const device = new SimulatedDevice({ foreground: COMPOSE });
      await device.execute('device.tap', { ref: await refOf(device, 'Message') });
      expect(await device.execute('device.press_key', { key: 'back' })).toMatchObject({
        changed: true,
        screen: 'compose',
      });
      await expect(device.execute('device.type_text', { text: 'x' })).rejects.toMatchObject({
        code: 'no_focused_field',
      });
    });

    it("enter in a field taps the screen's Send button: the message goes out", async () => {
      const device = await composed();
      expect(await device.execute('device.press_key', { key: 'enter' })).toMatchObject({
        changed: true,
        screen: 'inbox',
      });
      expect(device.messages).toEqual([
        expect.objectContaining({ to: expect.objectContaining({ name: 'Alice Martin' }), body: 'On my way' }),
      ]);
    });

    it('enter with no field focused submits nothing', async () => {
      const device = new SimulatedDevice({ foreground: COMPOSE });
      expect(await device.execute('device.press_key', { key: 'enter' })).toMatchObject({ changed: false });
      expect(device.messages).toEqual([]);
    });

    it('shows the recent apps and returns from them', async () => {
      const device = new SimulatedDevice();
      await device.execute('device.open_app', { package_name: SIM_PACKAGES.settings });
      await device.execute('device.open_app', { package_name: SIM_PACKAGES.messages });
      expect(await device.execute('device.press_key', { key: 'recent_apps' })).toMatchObject({
        changed: true,
        foreground_package: SIM_PACKAGES.systemui,
        screen: 'recents',
      });
      expect((await observe(device)).elements.map((e) => e.text)).toEqual(['Recent apps', 'Messages', 'Settings']);
      expect(await device.execute('device.press_key', { key: 'back' })).toMatchObject({
        foreground_package: SIM_PACKAGES.messages,
        screen: 'inbox',
      });
      expect(await device.execute('device.press_key', { key: 'home' })).toMatchObject({
        changed: true,
        foreground_package: SIM_PACKAGES.launcher,
      });
      expect(await device.execute('device.press_key', { key: 'home' })).toMatchObject({ changed: false });
    });

    it('fails when the app blocks the key', async () => {
      const device = new SimulatedDevice({ foreground: { package: SIM_PACKAGES.bank, screen: 'transfer' } });
      await expect(device.execute('device.press_key', { key: 'recent_apps' })).rejects.toMatchObject({
        code: 'key_blocked',
      });
      await expect(device.execute('device.press_key', { key: 'power' })).rejects.toMatchObject({
        code: 'invalid_arguments',
      });
    });
  });
});
