/**
 * The device's half of "risk is judged on what the device will really act on": the platform stamps into a screen
 * action's verdict the app and element text it judged (`judged_on`); right before acting, the executor resolves what
 * it would act on and calls {@link judgedTargetRefusal}. Pure: no I/O.
 */
import type { RiskVerdictV1 } from '@ormuz/contracts';
import { DeviceToolError } from './device-executor.js';

/** What a screen action is about to act on, as the executor resolved it on the screen shown now. */
export interface ActingOn {
  /** The app in front now. */
  readonly foregroundPackage: string;
  /**
   * The texts the element acted on answers to (its visible text; for an input also its field name), or `null` when
   * the action acts on no element (a tap on empty space, a swipe, a key that activates nothing).
   */
  readonly texts: readonly string[] | null;
}

const fold = (text: string): string => text.normalize('NFC').trim().toLocaleLowerCase();

/**
 * The refusal for acting on something other than what the verdict was judged on, or `undefined` when it may act.
 * A verdict without `judged_on` (an older server, or a tool that is not a screen action) is not checked here.
 *
 * - `foreground_changed` when another app is in front than the one judged;
 * - `target_mismatch` when the action would act on an element whose text is not the judged text, including an
 *   element when none was judged. Acting on no element is never refused here: it activates nothing.
 *
 * `nothing` completes the message with what was not done (`nothing was tapped`). The message tells the model to
 * observe and call again naming the element.
 */
export function judgedTargetRefusal(
  verdict: RiskVerdictV1 | undefined,
  acting: ActingOn,
  nothing: string,
): DeviceToolError | undefined {
  const judged = verdict?.judged_on;
  if (!judged) return undefined;
  if (judged.foreground_package !== acting.foregroundPackage) {
    return new DeviceToolError(
      'foreground_changed',
      `This action was judged for ${judged.foreground_package}, but ${acting.foregroundPackage} is in front now; ` +
        `${nothing}. Call device.screen_observe, then call again naming the element you mean (ref and target_text).`,
    );
  }
  if (acting.texts === null) return undefined;
  const shown = acting.texts[0] ?? '';
  if (judged.target_text !== null && acting.texts.some((t) => fold(t) === fold(judged.target_text as string))) {
    return undefined;
  }
  const was = judged.target_text === null ? 'no element' : `an element showing ${JSON.stringify(judged.target_text)}`;
  return new DeviceToolError(
    'target_mismatch',
    `This action was judged as acting on ${was}, but it would act on ${JSON.stringify(shown)}; ${nothing}. ` +
      'Call device.screen_observe, then call again naming the element you mean (ref and target_text).',
  );
}
