/**
 * The device's own checks of a submitted call, whatever the platform decided: before it claims the call (deadline,
 * package denylist, a foreground app it can tell, the app the risk was judged for), and again right before it runs.
 * A refusal is a wire error that says nothing was done and what to do instead.
 */
import type { RiskVerdictV1, SubmitFrameV1, WireErrorV1 } from '@ormuz/contracts';
import type { DeviceClientLogger, DeviceClientOptions } from './device-client.js';
import type { ToolArguments } from './device-executor.js';

/**
 * Apps the device never lets an agent control, whatever policy the platform has (or has never) synced: banking,
 * payments and wallets. Extend it with {@link DeviceClientOptions.deniedPackages}; it cannot be shortened.
 */
export const DEFAULT_DENIED_PACKAGES: readonly string[] = [
  'com.example.bank',
  'com.google.android.apps.walletnfcrel',
  'com.paypal.android.p2pmobile',
  'com.venmo',
  'com.squareup.cash',
  'com.revolut.revolut',
  'com.chase.sig.android',
  'com.wf.wellsfargomobile',
  'com.bankofamerica.cashpromobile',
  'com.infonow.bofa',
];

const DEFAULT_DENIED_SET: ReadonlySet<string> = new Set(DEFAULT_DENIED_PACKAGES);

/** The package policy of one device: the default denylist, extended by its options. */
export class PackagePolicy {
  private readonly denied: ReadonlySet<string>;

  constructor(
    private readonly options: Pick<DeviceClientOptions, 'targetPackage' | 'deniedPackages'>,
    private readonly logger: DeviceClientLogger,
  ) {
    // Shared when not extended: a fleet of simulated devices should not hold a copy each.
    this.denied = options.deniedPackages?.length
      ? new Set([...DEFAULT_DENIED_PACKAGES, ...options.deniedPackages])
      : DEFAULT_DENIED_SET;
  }

  /**
   * The checks before the device claims anything: deadline (on the server's clock, `clockOffsetMs` ahead of the
   * device's), package denylist, known foreground app.
   */
  preflight(frame: SubmitFrameV1, args: ToolArguments, clockOffsetMs: number): WireErrorV1 | undefined {
    if (Date.parse(frame.deadline) <= Date.now() + clockOffsetMs) {
      return {
        code: 'deadline_passed',
        message:
          `The request reached the device after its deadline (${frame.deadline}); nothing was run. Check the ` +
          `action's real state before submitting it again.`,
      };
    }
    return this.refusal(frame.tool, args, frame.verdict);
  }

  /** Why the device will not act in the app this action targets, if it will not. */
  refusal(tool: string, args: ToolArguments, verdict?: RiskVerdictV1): WireErrorV1 | undefined {
    let target: string | null | undefined;
    try {
      target = this.options.targetPackage(tool, args);
    } catch (err) {
      target = null;
      this.logger.warn?.('could not tell which app an action targets', { tool, error: (err as Error).message });
    }
    if (target === null) {
      return {
        code: 'foreground_unknown',
        message:
          'The device cannot tell which app is in front, so it did not act. Observe the screen with ' +
          'device.screen_observe, then retry passing the foreground_package from that observation.',
      };
    }
    if (target !== undefined && this.denied.has(target)) {
      return {
        code: 'package_denied',
        message: `This device never lets an agent control ${target}; nothing was done. Ask the owner to do this in the app themselves.`,
      };
    }
    // The risk of a screen action was judged for the app in front then; in another app it acts on what nobody judged.
    const judged = verdict?.judged_on?.foreground_package;
    if (judged !== undefined && target !== undefined && target !== judged) {
      return {
        code: 'foreground_changed',
        message:
          `This action was judged for ${judged}, but ${target} is in front now; nothing was done. Call ` +
          'device.screen_observe, then call again naming the element you mean (ref and target_text).',
      };
    }
    return undefined;
  }
}
