/**
 * The screen tools of the simulated device: `device.screen_observe`, `device.tap`, `device.type_text`,
 * `device.swipe` and `device.press_key`, with the checks every screen action makes before it acts (the app in front,
 * the target's text, what the verdict was judged on) and the outcome each reports.
 */
import type { JsonValue, RiskVerdictV1 } from '@ormuz/contracts';
import { DeviceToolError, type ToolArguments } from '../device-executor.js';
import { judgedTargetRefusal } from '../judged-target.js';
import { applyEffect } from './app-effects.js';
import {
  APPS,
  LAUNCHER_HOME,
  SIM_PACKAGES,
  SIM_SCREEN,
  VIEWPORT_ROWS,
  textsOf,
  type PlacedElement,
  type SimForeground,
  type SimKey,
} from './sim-apps.js';
import {
  decodeHandle,
  encodeHandle,
  fold,
  invalid,
  oneOf,
  optionalInteger,
  optionalRef,
  requiredText,
} from './sim-arguments.js';
import type { SimState } from './sim-state.js';

const DEFAULT_OBSERVE_LIMIT = 40;
const MAX_OBSERVE_LIMIT = 200;
const MAX_TYPED_LENGTH = 5000;
const KEYS: readonly SimKey[] = ['back', 'home', 'enter', 'recent_apps'];
const DIRECTIONS = ['up', 'down', 'left', 'right'] as const;

function unavailableScreen(consequence: string): DeviceToolError {
  return new DeviceToolError(
    'screen_unavailable',
    `The device cannot tell which app is in front (a system overlay is showing), so ${consequence}. ` +
      'Open an app with device.open_app, then observe again.',
  );
}

/**
 * The check every screen action makes first: an app must be identifiably in front and, when the call names the
 * app it expects (`foreground_package`), it must be that one. The call was decided and risk-classified for that app;
 * acting in another one would act on something nobody judged.
 */
function requireForeground(s: SimState, args: ToolArguments, nothing: string): SimForeground {
  const expected = args['foreground_package'];
  if (expected !== undefined && expected !== null && typeof expected !== 'string')
    throw invalid('foreground_package must be the package name from the latest device.screen_observe.');
  if (!s.fg) throw unavailableScreen(nothing);
  if (typeof expected === 'string' && expected !== s.fg.package) {
    throw new DeviceToolError(
      'foreground_changed',
      `The app in front is ${s.fg.package}, not ${expected}; ${nothing}. Call device.screen_observe and decide again.`,
    );
  }
  return s.fg;
}

/**
 * When the call names the visible text of its target (`target_text`), the element acted on must show it (or, for
 * an input, be the field of that name): the risk verdict was given for that text.
 */
function checkTargetText(args: ToolArguments, target: PlacedElement | undefined, nothing: string): void {
  const expected = args['target_text'];
  if (expected === undefined || expected === null) return;
  if (typeof expected !== 'string')
    throw invalid('target_text must be the visible text of the element, copied from device.screen_observe.');
  const shown = target ? [target.text, ...(target.field === undefined ? [] : [target.field])] : [''];
  const wanted = fold(expected.trim());
  if (shown.some((text) => fold(text.trim()) === wanted)) return;
  throw new DeviceToolError(
    'target_mismatch',
    `${target ? `Element ${target.ref} shows ${JSON.stringify(target.text)}` : 'Nothing with text is at that point'}, ` +
      `not ${JSON.stringify(expected)}; ${nothing}. Observe the screen again and decide again with the element you mean.`,
  );
}

/** Refuses to act when the verdict was judged on another app or element than the one about to be acted on. */
function checkJudged(
  verdict: RiskVerdictV1 | undefined,
  fg: SimForeground,
  texts: readonly string[] | null,
  nothing: string,
): void {
  const refusal = judgedTargetRefusal(verdict, { foregroundPackage: fg.package, texts }, nothing);
  if (refusal) throw refusal;
}

/** Finds an element by ref; a ref from an older screen falls back to the element with the same text. */
function byRef(
  s: SimState,
  ref: string,
  elements: readonly PlacedElement[],
): { target: PlacedElement; strategy: 'ref' | 'text' } {
  const observedHere = s.lastObservation === undefined || s.lastObservation.token === s.screenToken();
  const direct = observedHere ? elements.find((e) => e.ref === ref) : undefined;
  if (direct) return { target: direct, strategy: 'ref' };
  const text = s.lastObservation?.texts.get(ref);
  const byText =
    text === undefined
      ? undefined
      : elements.find((e) => (e.clickable && e.text === text) || (e.field !== undefined && e.field === text));
  if (byText) return { target: byText, strategy: 'text' };
  const where = s.fg ? `${s.fg.package}/${s.fg.screen}` : 'no screen';
  throw new DeviceToolError(
    'stale_ref',
    `No element ${ref} is on the current screen (${where}). Observe the screen again and use a ref from that observation.`,
  );
}

/** What every screen action returns: the outcome, not just "success" (`changed` may be false). */
function screenResult(s: SimState, before: number, extra: { [key: string]: JsonValue } = {}): JsonValue {
  return {
    succeeded: true,
    ...extra,
    changed: s.version !== before,
    foreground_package: s.fg?.package ?? null,
    screen: s.fg?.screen ?? null,
    settled: true,
  };
}

export function observe(s: SimState, args: ToolArguments): JsonValue {
  if (!s.fg) throw unavailableScreen('there is no screen to read');
  const limit = optionalInteger(args, 'max_elements', 1, MAX_OBSERVE_LIMIT) ?? DEFAULT_OBSERVE_LIMIT;
  const token = s.screenToken();
  const handle = decodeHandle(args['continuation']);
  if (handle && handle.token !== token) {
    throw new DeviceToolError(
      'stale_continuation',
      'The screen changed since that observation; observe again without continuation.',
    );
  }
  const all = s.elements();
  const offset = handle?.offset ?? 0;
  const page = all.slice(offset, offset + limit);
  const partial = offset + page.length < all.length;
  const texts = handle && s.lastObservation?.token === token ? s.lastObservation.texts : new Map<string, string>();
  for (const e of page) texts.set(e.ref, e.text);
  s.lastObservation = { token, texts };
  return {
    foreground_package: s.fg.package,
    screen: s.fg.screen,
    elements: page.map(({ effect: _effect, field: _field, row: _row, ...e }) => ({ ...e, bounds: { ...e.bounds } })),
    total_elements: all.length,
    partial,
    ...(partial ? { continuation: encodeHandle({ token, offset: offset + page.length }) } : {}),
  };
}

export function tap(s: SimState, args: ToolArguments, verdict: RiskVerdictV1 | undefined): JsonValue {
  const ref = args['ref'];
  const x = args['x'];
  const y = args['y'];
  const hasRef = typeof ref === 'string' && ref !== '';
  const hasPoint = typeof x === 'number' && typeof y === 'number';
  if (!hasRef && !hasPoint) {
    throw invalid('Provide ref (an element ref from the latest device.screen_observe), or both x and y (pixels).');
  }
  const fg = requireForeground(s, args, 'nothing was tapped');
  const elements = s.elements();
  let target: PlacedElement | undefined;
  let strategy: 'ref' | 'text' | 'coordinates';
  if (hasRef) {
    ({ target, strategy } = byRef(s, ref, elements));
  } else {
    const px = x as number;
    const py = y as number;
    if (px < 0 || py < 0 || px >= SIM_SCREEN.width || py >= SIM_SCREEN.height) {
      throw invalid(`x and y must be inside the screen, 0 ≤ x < ${SIM_SCREEN.width} and 0 ≤ y < ${SIM_SCREEN.height}.`);
    }
    const hits = elements.filter(
      (e) => px >= e.bounds.left && px < e.bounds.right && py >= e.bounds.top && py < e.bounds.bottom,
    );
    target = hits.findLast((e) => e.clickable) ?? hits.at(-1);
    strategy = 'coordinates';
  }
  checkTargetText(args, target, 'nothing was tapped');
  checkJudged(verdict, fg, target ? textsOf(target) : null, 'nothing was tapped');
  const before = s.version;
  if (target?.effect) applyEffect(s, target.effect);
  return screenResult(s, before, {
    strategy,
    target: target ? { ref: target.ref, text: target.text } : null,
  });
}

export function typeText(s: SimState, args: ToolArguments, verdict: RiskVerdictV1 | undefined): JsonValue {
  const text = requiredText(args, 'text', 'the exact text to type into the field');
  if (text.length > MAX_TYPED_LENGTH)
    throw invalid(`text is ${text.length} characters; type at most ${MAX_TYPED_LENGTH} at once.`);
  const ref = optionalRef(args);
  const fg = requireForeground(s, args, 'nothing was typed');
  let target: PlacedElement | undefined;
  if (ref !== undefined) {
    target = byRef(s, ref, s.elements()).target;
    if (target.field === undefined) {
      throw new DeviceToolError(
        'not_an_input',
        `Element ${target.ref} is a ${target.role} (${JSON.stringify(target.text)}), not an input field; nothing ` +
          'was typed. Pass the ref of an input from device.screen_observe.',
      );
    }
  } else {
    target = s.focus === undefined ? undefined : s.layout().find((e) => e.field === s.focus);
    if (!target) {
      throw new DeviceToolError(
        'no_focused_field',
        'No input field has focus, so nothing was typed. Pass the ref of the field from device.screen_observe.',
      );
    }
  }
  checkTargetText(args, target, 'nothing was typed');
  // Typing into the focused field with no element judged activates nothing; only the app is checked then.
  const judgedField = ref !== undefined || (verdict?.judged_on?.target_text ?? null) !== null;
  checkJudged(verdict, fg, judgedField ? textsOf(target) : null, 'nothing was typed');
  const field = target.field!;
  const before = s.version;
  s.fields.set(`${fg.package}/${fg.screen}/${field}`, s.fieldText(fg.package, fg.screen, field) + text);
  s.focus = field;
  s.version += 1;
  return screenResult(s, before, { target: { ref: target.ref, text: target.text } });
}

export function swipe(s: SimState, args: ToolArguments, verdict: RiskVerdictV1 | undefined): JsonValue {
  const direction = oneOf(args, 'direction', DIRECTIONS);
  const ref = optionalRef(args);
  const fg = requireForeground(s, args, 'nothing was swiped');
  checkJudged(verdict, fg, null, 'nothing was swiped');
  // The simulated screens have one scrolling list each: a ref only has to be on screen.
  if (ref !== undefined) byRef(s, ref, s.elements());
  const before = s.version;
  if (direction === 'up' || direction === 'down') {
    const last = Math.max(0, s.layout().length - VIEWPORT_ROWS);
    const step = (VIEWPORT_ROWS - 1) * (direction === 'up' ? 1 : -1);
    const next = Math.min(last, Math.max(0, s.scroll + step));
    if (next !== s.scroll) {
      s.scroll = next;
      s.version += 1;
    }
  }
  return screenResult(s, before);
}

export function pressKey(s: SimState, args: ToolArguments, verdict: RiskVerdictV1 | undefined): JsonValue {
  const key = oneOf(args, 'key', KEYS);
  const fg = requireForeground(s, args, 'nothing was pressed');
  const app = APPS[fg.package];
  if (app?.blockedKeys?.[fg.screen]?.includes(key)) {
    throw new DeviceToolError(
      'key_blocked',
      `${app.label} blocks the ${key} key on its ${fg.screen} screen; nothing happened. Use a button on the screen ` +
        'instead (observe it first).',
    );
  }
  // Enter in a field is the keyboard's send/done action: it taps the screen's submit button, if it has one.
  const submit = key === 'enter' ? submitButton(s, fg) : undefined;
  checkJudged(verdict, fg, submit ? textsOf(submit) : null, 'nothing was pressed');
  const before = s.version;
  switch (key) {
    case 'back':
      if (s.focus !== undefined) unfocus(s);
      else back(s, fg);
      break;
    case 'home':
      if (fg.package !== LAUNCHER_HOME.package || fg.screen !== LAUNCHER_HOME.screen) s.show(LAUNCHER_HOME);
      break;
    case 'enter':
      if (submit?.effect) applyEffect(s, submit.effect);
      else if (s.focus !== undefined) unfocus(s);
      break;
    case 'recent_apps':
      if (fg.package === SIM_PACKAGES.systemui) s.show(s.beforeRecents ?? LAUNCHER_HOME);
      else s.show({ package: SIM_PACKAGES.systemui, screen: 'recents' });
      break;
    default: {
      const unknown: never = key;
      throw new Error(`unknown key ${String(unknown)}`);
    }
  }
  return screenResult(s, before);
}

/** The button `enter` activates on this screen: its submit button, when a field has focus and the screen has one. */
function submitButton(s: SimState, fg: SimForeground): PlacedElement | undefined {
  const text = APPS[fg.package]?.submits?.[fg.screen];
  if (s.focus === undefined || text === undefined) return undefined;
  return s.layout().find((e) => e.clickable && e.text === text);
}

function unfocus(s: SimState): void {
  s.focus = undefined;
  s.version += 1;
}

function back(s: SimState, fg: SimForeground): void {
  if (fg.package === SIM_PACKAGES.systemui) return s.show(s.beforeRecents ?? LAUNCHER_HOME);
  const parent = APPS[fg.package]?.parents?.[fg.screen];
  if (parent !== undefined) return s.show({ package: fg.package, screen: parent });
  if (fg.package === LAUNCHER_HOME.package && fg.screen === LAUNCHER_HOME.screen) return;
  s.show(LAUNCHER_HOME);
}
