import { loadShippedCatalog, type Grant } from '@ormuz/catalog';
import { decideGate, type GateDecision, type GateRequest } from './gate.js';
import { resolveScreenTarget, type ObservedElement, type ScreenObservation } from './screen-target.js';

const catalog = loadShippedCatalog();
const grant: Grant = { tenant: 'acme', agent_id: 'agent-1', allow: ['ormuz', 'device'] };
const ctx = { catalog, grant, approvalTtlMs: 60_000 };
const now = new Date('2026-12-01T12:00:00Z');
const MESSAGES = 'com.example.messages';

/** An element laid out as the simulated phone lays out row `row` (120 px from the top, 140 px per row). */
const row = (n: number, ref: string, role: string, text: string, clickable = true): ObservedElement => ({
  ref,
  role,
  text,
  clickable,
  bounds: { left: 40, top: 120 + n * 140, right: 1040, bottom: 240 + n * 140 },
});

/** The messages app's compose screen with the recipient and text typed, as device.screen_observe returns it. */
const COMPOSE: ScreenObservation = {
  foreground_package: MESSAGES,
  screen: 'compose',
  elements: [
    row(0, 'e1', 'header', 'New message', false),
    row(1, 'e2', 'input', 'Alice Martin'),
    row(2, 'e3', 'input', 'On my way'),
    row(3, 'e4', 'button', 'Send'),
    row(4, 'e5', 'button', 'Back'),
  ],
  changed_by: null,
};

const request = (tool: string, args: Record<string, unknown>, observation?: ScreenObservation | null): GateRequest => ({
  tool,
  arguments: args,
  deviceId: 'phone-1',
  ...(observation === undefined ? {} : { observation }),
});

function decided(r: GateRequest): GateDecision {
  const d = decideGate(ctx, r, now);
  if (d.kind === 'needs_observation') throw new Error('expected a decision');
  return d;
}

const TAP_SEND = { x: 540, y: 600, foreground_package: MESSAGES };

describe('gate: a screen action is judged on what the device will act on', () => {
  describe('given the compose screen with recipient and text typed', () => {
    it('asks for the observation before judging a coordinate tap', () => {
      expect(decideGate(ctx, request('device.tap', TAP_SEND), now)).toEqual({ kind: 'needs_observation' });
    });

    it('stages the coordinate tap on Send, judged on "Send" in the messages app', () => {
      const d = decided(request('device.tap', TAP_SEND, COMPOSE));
      expect(d).toMatchObject({
        kind: 'stage',
        summary: 'Tap "Send" in com.example.messages',
        verdict: {
          level: 'high',
          judged_on: { foreground_package: MESSAGES, target_text: 'Send', source: 'observation' },
        },
      });
      if (d.kind !== 'stage') throw new Error('not staged');
      expect(d.verdict.reasons[0]).toMatch(/target resolved from the device's latest observation: e4 "Send"/);
      expect(d.verdict.reasons.join('\n')).toMatch(/target text means send/);
    });

    it('stages a tap by ref without target_text on Send the same way', () => {
      const d = decided(request('device.tap', { ref: 'e4', foreground_package: MESSAGES }, COMPOSE));
      expect(d).toMatchObject({ kind: 'stage', verdict: { judged_on: { target_text: 'Send' } } });
    });

    it("stages press_key enter as a tap on the screen's submit button", () => {
      const d = decided(request('device.press_key', { key: 'enter', foreground_package: MESSAGES }, COMPOSE));
      expect(d).toMatchObject({
        kind: 'stage',
        summary: 'Press enter in com.example.messages, which taps "Send"',
        verdict: { level: 'high', judged_on: { target_text: 'Send', source: 'observation' } },
      });
      if (d.kind !== 'stage') throw new Error('not staged');
      expect(d.verdict.reasons[0]).toMatch(/key enter in a text field acts like tapping "Send"/);
    });

    it('authorizes a coordinate tap on the message field, judged on its text', () => {
      const d = decided(request('device.tap', { x: 540, y: 460, foreground_package: MESSAGES }, COMPOSE));
      expect(d).toMatchObject({
        kind: 'authorize',
        verdict: {
          level: 'low',
          judged_on: { foreground_package: MESSAGES, target_text: 'On my way', source: 'observation' },
        },
      });
    });

    it("authorizes enter when the screen's submit button is harmless, judged on that button", () => {
      const search: ScreenObservation = {
        ...COMPOSE,
        screen: 'search',
        elements: [
          row(0, 'e1', 'input', 'pizza'),
          row(1, 'e2', 'button', 'Search'),
          row(2, 'e3', 'button', 'Send feedback'),
        ],
      };
      const d = decided(request('device.press_key', { key: 'enter', foreground_package: MESSAGES }, search));
      expect(d).toMatchObject({ kind: 'authorize', verdict: { judged_on: { target_text: 'Search' } } });
    });
  });

  describe('refuses with "observe and call again naming the element" when it cannot tell', () => {
    it.each([
      ['no observation on record', null, /this device has no observation on record/],
      [
        'a screen that may have changed',
        { ...COMPOSE, changed_by: 'device.type_text' },
        /device\.type_text ran after it/,
      ],
      [
        'another app in front',
        { ...COMPOSE, foreground_package: 'com.example.contacts' },
        /shows com\.example\.contacts, not com\.example\.messages/,
      ],
    ])('a coordinate tap with %s', (_what, observation, why) => {
      const d = decided(request('device.tap', TAP_SEND, observation));
      expect(d).toMatchObject({ kind: 'refuse', reasonCode: 'target_unresolved' });
      if (d.kind !== 'refuse') throw new Error('not refused');
      expect(d.message).toMatch(why);
      expect(d.message).toMatch(/nothing was done\. Call device\.screen_observe, then call again naming the element/);
    });

    it('a ref that is not in the observation, and a point with nothing under it', () => {
      const byRef = decided(request('device.tap', { ref: 'e9', foreground_package: MESSAGES }, COMPOSE));
      expect(byRef).toMatchObject({
        kind: 'refuse',
        message: expect.stringMatching(/No element "e9" is in the device's latest observation \(compose/),
      });
      const empty = decided(request('device.tap', { x: 540, y: 2300, foreground_package: MESSAGES }, COMPOSE));
      expect(empty).toMatchObject({ kind: 'refuse', message: expect.stringMatching(/Nothing is at x=540, y=2300/) });
    });
  });

  describe('the screen, not the model, says what a tap acts on', () => {
    it('stages a tap on Send that the model calls "OK", judged on "Send" with both texts in the reasons', () => {
      const d = decided(request('device.tap', { ref: 'e4', target_text: 'OK', foreground_package: MESSAGES }, COMPOSE));
      expect(d).toMatchObject({
        kind: 'stage',
        verdict: { level: 'high', judged_on: { target_text: 'Send', source: 'observation' } },
      });
      if (d.kind !== 'stage') throw new Error('not staged');
      expect(d.verdict.reasons.join(' ')).toMatch(/named "OK", but .* shows e4 as "Send"/);
    });

    it('judges a coordinate tap named "Back" that lands on Send on "Send"', () => {
      const d = decided(request('device.tap', { ...TAP_SEND, target_text: 'Back' }, COMPOSE));
      expect(d).toMatchObject({
        kind: 'stage',
        verdict: { judged_on: { target_text: 'Send', source: 'observation' } },
      });
    });

    it('judges a tap whose name matches the element on the element, from the observation', () => {
      const d = decided(
        request('device.tap', { ref: 'e5', target_text: 'Back', foreground_package: MESSAGES }, COMPOSE),
      );
      expect(d).toMatchObject({
        kind: 'authorize',
        verdict: { judged_on: { target_text: 'Back', source: 'observation' } },
      });
    });

    it('leaves the named text for the device to check when the screen may have changed since the observation', () => {
      const stale = { ...COMPOSE, changed_by: 'device.tap' };
      const d = decided(request('device.tap', { ref: 'e4', target_text: 'OK', foreground_package: MESSAGES }, stale));
      expect(d).toMatchObject({ verdict: { judged_on: { target_text: 'OK', source: 'arguments' } } });
    });
  });

  describe('needs no observation when the call names its element or acts on none', () => {
    it('judges a tap that names its text on that text, for the device to check, when no observation shows it', () => {
      expect(decideGate(ctx, request('device.tap', { ...TAP_SEND, target_text: 'Send' }), now)).toEqual({
        kind: 'needs_observation',
      });
      const d = decided(request('device.tap', { ...TAP_SEND, target_text: 'Send' }, null));
      expect(d).toMatchObject({ kind: 'stage', verdict: { judged_on: { target_text: 'Send', source: 'arguments' } } });
    });

    it.each([
      ['device.press_key', { key: 'back', foreground_package: MESSAGES }],
      ['device.swipe', { direction: 'up', foreground_package: MESSAGES }],
      ['device.type_text', { text: 'hello', foreground_package: MESSAGES }],
    ])('%s is judged on the app and no element', (tool, args) => {
      expect(decided(request(tool, args))).toMatchObject({
        kind: 'authorize',
        verdict: { judged_on: { foreground_package: MESSAGES, target_text: null, source: 'arguments' } },
      });
    });

    it('stages enter when no screen can be read, with nothing stamped for the device to compare', () => {
      const d = decided(request('device.press_key', { key: 'enter', foreground_package: MESSAGES }, null));
      expect(d.kind).toBe('stage');
      if (d.kind !== 'stage') throw new Error('not staged');
      expect(d.verdict.judged_on).toBeUndefined();
    });

    it('leaves tools that are not screen actions alone', () => {
      expect(resolveScreenTarget('device.screen_observe', {}, undefined)).toBeUndefined();
      const d = decided(request('device.screen_observe', {}));
      expect(d).toMatchObject({ kind: 'authorize' });
      if (d.kind !== 'authorize') throw new Error('not authorized');
      expect(d.verdict.judged_on).toBeUndefined();
    });
  });
});
