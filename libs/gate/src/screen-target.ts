/**
 * What a screen action will really act on, decided before its risk is: a tap by coordinates, or by ref without the
 * element's text, is resolved against the device's latest observation on the log, and `press_key enter` is judged as
 * a tap on the screen's submit button. Pure: the observation is passed in.
 *
 * The result says which text and app the verdict is judged on ({@link JudgedTargetV1}); it is stamped into the verdict
 * and the device refuses to act when its screen no longer shows it.
 */
import type { JudgedTargetV1 } from '@ormuz/contracts';

/** Pixel rectangle of an element, as `device.screen_observe` reports it. */
export interface ObservedBounds {
  readonly left: number;
  readonly top: number;
  readonly right: number;
  readonly bottom: number;
}

/** One element of an observation (the fields policy reads). */
export interface ObservedElement {
  readonly ref: string;
  readonly role: string;
  readonly text: string;
  readonly bounds: ObservedBounds;
  readonly clickable: boolean;
}

/** The device's latest `device.screen_observe` result on the log, with whether the screen may have changed since. */
export interface ScreenObservation {
  readonly foreground_package: string;
  readonly screen: string;
  /** Elements of every page read of this screen, in screen order. */
  readonly elements: readonly ObservedElement[];
  /**
   * The tool of a screen action that started or finished after the observation (so the screen may show something
   * else now), or `null` when none did.
   */
  readonly changed_by: string | null;
}

/**
 * How a screen action's target was settled.
 * - `judged`: classify with `targetText` and stamp `judged` into the verdict (`judged` may be absent when nothing
 *   could be resolved and the classifier's own rule applies, as for `enter` with no observation); `reasons` say how
 *   it was resolved.
 * - `needs_observation`: resolving needs the device's latest observation, which the caller did not pass.
 * - `refuse`: it cannot be judged; `message` says to observe and call again naming the element.
 */
export type TargetResolution =
  | {
      readonly kind: 'judged';
      readonly targetText: string | null;
      readonly judged: JudgedTargetV1 | undefined;
      readonly reasons: readonly string[];
    }
  | { readonly kind: 'needs_observation' }
  | { readonly kind: 'refuse'; readonly reasonCode: string; readonly message: string };

/** The screen actions whose target this module settles; other tools are not screen actions. */
const SCREEN_ACTIONS = new Set(['device.tap', 'device.type_text', 'device.swipe', 'device.press_key']);

/** What to do when the element cannot be told: the next step for the model. */
const OBSERVE_AND_NAME =
  'Call device.screen_observe, then call again naming the element: its ref and its target_text from that observation.';

const quote = (s: string, max = 80) => JSON.stringify(s.length > max ? `${s.slice(0, max)}…` : s);

/** Whether `tool` is a screen action whose verdict says what it was judged on. */
export function isScreenAction(tool: string): boolean {
  return SCREEN_ACTIONS.has(tool);
}

/**
 * Settles what `tool` with (validated, normalised) `args` acts on. `observation` is the device's latest observation
 * (`null` when it has none on record), or `undefined` when the caller has not loaded it: then a call that needs it
 * gets `needs_observation`, and one that does not is settled at once.
 *
 * Returns `undefined` for tools that are not screen actions.
 */
export function resolveScreenTarget(
  tool: string,
  args: Readonly<Record<string, unknown>>,
  observation: ScreenObservation | null | undefined,
): TargetResolution | undefined {
  if (!SCREEN_ACTIONS.has(tool)) return undefined;
  const foreground = typeof args.foreground_package === 'string' ? args.foreground_package : '';
  const named = typeof args.target_text === 'string' && args.target_text.trim() !== '' ? args.target_text : null;
  const ref = typeof args.ref === 'string' && args.ref !== '' ? args.ref : null;
  const fromArguments = (targetText: string | null): TargetResolution => ({
    kind: 'judged',
    targetText,
    judged: { foreground_package: foreground, target_text: targetText, source: 'arguments' },
    reasons: [],
  });

  switch (tool) {
    case 'device.tap':
    case 'device.type_text': {
      // Typing into the focused field activates nothing; the device checks the app.
      if (tool === 'device.type_text' && ref === null && named === null) return fromArguments(null);
      // The model's words are not evidence of what it acts on: the element is read from the device's latest
      // observation whenever there is one, and the text the model gave only stands (for the device to check against
      // the element) when no usable observation shows the element.
      if (observation === undefined) return { kind: 'needs_observation' };
      const usable = usableObservation(tool, foreground, observation);
      if (typeof usable === 'string') {
        if (named !== null) return fromArguments(named);
        return { kind: 'refuse', reasonCode: 'target_unresolved', message: usable };
      }
      const element =
        ref !== null
          ? usable.elements.find((e) => e.ref === ref)
          : args.x !== undefined || args.y !== undefined
            ? elementAt(usable, args.x, args.y)
            : undefined;
      if (!element) {
        if (named !== null) return fromArguments(named);
        const what =
          ref !== null ? `No element ${quote(ref)} is` : `Nothing is at x=${String(args.x)}, y=${String(args.y)}`;
        return {
          kind: 'refuse',
          reasonCode: 'target_unresolved',
          message: `${what} in the device's latest observation (${usable.screen} of ${usable.foreground_package}); nothing was done. ${OBSERVE_AND_NAME}`,
        };
      }
      if (named !== null && named.trim() !== element.text.trim()) {
        return {
          kind: 'judged',
          targetText: element.text,
          judged: { foreground_package: foreground, target_text: element.text, source: 'observation' },
          reasons: [
            `the request named ${quote(named)}, but the device's latest observation shows ${element.ref} as ${quote(element.text)} on ${usable.screen}: judged on what the screen shows`,
          ],
        };
      }
      return {
        kind: 'judged',
        targetText: element.text,
        judged: { foreground_package: foreground, target_text: element.text, source: 'observation' },
        reasons: [
          `target resolved from the device's latest observation: ${element.ref} ${quote(element.text)} on ${usable.screen}`,
        ],
      };
    }
    case 'device.swipe':
      return fromArguments(null);
    case 'device.press_key': {
      if (args.key !== 'enter') return fromArguments(null);
      if (observation === undefined) return { kind: 'needs_observation' };
      const usable = usableObservation(tool, foreground, observation);
      const submit = typeof usable === 'string' ? undefined : submitButton(usable);
      // Without a screen to read, the key's own rule applies (enter with nothing to say what it activates is high)
      // and the owner judges; nothing is stamped for the device to compare.
      if (!submit) return { kind: 'judged', targetText: null, judged: undefined, reasons: [] };
      return {
        kind: 'judged',
        targetText: submit.text,
        judged: { foreground_package: foreground, target_text: submit.text, source: 'observation' },
        reasons: [`key enter in a text field acts like tapping ${quote(submit.text)}, the screen's submit button`],
      };
    }
    default:
      return undefined;
  }
}

/** The observation when it describes the screen the call expects, else why it cannot be used (a sentence). */
function usableObservation(
  tool: string,
  foreground: string,
  observation: ScreenObservation | null,
): ScreenObservation | string {
  const why = (reason: string) =>
    `${tool} needs to know what it acts on, and ${reason}; nothing was done. ${OBSERVE_AND_NAME}`;
  if (observation === null) return why('this device has no observation on record');
  if (observation.changed_by !== null) {
    return why(
      `the screen may have changed since the device's latest observation (${observation.changed_by} ran after it)`,
    );
  }
  if (observation.foreground_package !== foreground) {
    return why(`the device's latest observation shows ${observation.foreground_package}, not ${foreground}`);
  }
  return observation;
}

/** The element a finger at (x, y) lands on: the topmost clickable one there, else the topmost one. */
function elementAt(observation: ScreenObservation, x: unknown, y: unknown): ObservedElement | undefined {
  if (typeof x !== 'number' || typeof y !== 'number') return undefined;
  const hits = observation.elements.filter(
    (e) => x >= e.bounds.left && x < e.bounds.right && y >= e.bounds.top && y < e.bounds.bottom,
  );
  return hits.findLast((e) => e.clickable) ?? hits.at(-1);
}

/**
 * The button `enter` in a text field activates: the first clickable button after the last input field, as forms lay
 * out their send or submit action. `undefined` when the screen has no input field or no button after it.
 */
function submitButton(observation: ScreenObservation): ObservedElement | undefined {
  const lastInput = observation.elements.findLastIndex((e) => e.role === 'input');
  if (lastInput === -1) return undefined;
  return observation.elements.slice(lastInput + 1).find((e) => e.clickable && e.role === 'button');
}

/**
 * What the latest observation shows of the app a screen action acts on: the texts of its elements (so the risk
 * classifier can tell a finance screen) and the role of the target element (`switch`, `list_item`…), found by ref or
 * else by its exact text. Texts are given whenever the observation is of that app, even if the screen may have changed
 * since (the app showed them); the role only when the observation is current. Empty when nothing is known.
 */
export function observedScreen(
  observation: ScreenObservation | null | undefined,
  foreground: string,
  args: Readonly<Record<string, unknown>>,
  targetText: string | null,
): { readonly screenText?: readonly string[]; readonly targetRole?: string } {
  if (!observation || observation.foreground_package !== foreground) return {};
  const screenText = observation.elements.map((e) => e.text);
  if (observation.changed_by !== null) return { screenText };
  const ref = typeof args.ref === 'string' && args.ref !== '' ? args.ref : null;
  const element =
    ref !== null
      ? observation.elements.find((e) => e.ref === ref)
      : targetText !== null
        ? observation.elements.find((e) => e.text === targetText)
        : undefined;
  return element ? { screenText, targetRole: element.role } : { screenText };
}
