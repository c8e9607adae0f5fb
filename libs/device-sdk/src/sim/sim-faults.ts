/**
 * Fault knobs of a simulated device: cut the connection at a protocol step, slow an execution down, or make it
 * never answer. Used by tests and load runs to show that every fault leaves the platform with a truthful record.
 */
import type { ExecutionContext } from '../device-executor.js';
import type { ProtocolStep, ProtocolStepHook } from '../execution-protocol.js';
import type { DeviceScheduler } from '../scheduler.js';

/**
 * Knobs to turn. An absent knob is left as it is; `false` or `0` turns it off.
 *
 * Protocol effect of each (see docs/device-protocol.md, "Fault knobs"):
 * - `dropBeforeClaim`: the request is journaled `claimed` but the connection is cut instead of sending the claim.
 *   The bridge sees a disconnect with nothing started; on reconnect the device claims again (and the bridge resends
 *   the submit, which the journal answers as a duplicate). Nothing runs until a claim is granted.
 * - `dropAfterGrant`: the connection is cut right after `start_granted`; the run goes on. The bridge must record
 *   the started request as outcome unknown (connection lost); the device journals the outcome and sends it after it
 *   reconnects, where it is recorded as a late real outcome.
 * - `dropAfterOutcome`: the connection is cut once an `outcome` frame has left the device, so the bridge records it
 *   but the `outcome_ack` is lost. The device resends it after reconnecting; the bridge must take the duplicate
 *   without recording a second outcome, and ack it.
 * - `delayMs`: each execution waits this long before acting (a slow phone); cancel and deadline still stop it.
 * - `hang`: each execution never answers until its signal fires (cancel, deadline, or the client closing), then fails
 *   with `cancelled` or `deadline_exceeded`; after a crash or reboot it leaves the journal at `started`.
 */
export interface SimFaultSettings {
  readonly dropBeforeClaim?: boolean;
  readonly dropAfterGrant?: boolean;
  readonly dropAfterOutcome?: boolean;
  /** Milliseconds, 0 to turn off. */
  readonly delayMs?: number;
  readonly hang?: boolean;
  /** Each knob set in this call fires once, then turns itself off. Default false: it stays on until changed. */
  readonly once?: boolean;
}

/** Names of the knobs. */
export type SimFaultName = 'dropBeforeClaim' | 'dropAfterGrant' | 'dropAfterOutcome' | 'delayMs' | 'hang';

/** A fault that took effect, for a test to check it happened where it expected. */
export interface SimFaultEvent {
  readonly fault: SimFaultName;
  readonly requestId: string;
}

const STEP_KNOBS: Record<ProtocolStep, SimFaultName> = {
  before_claim: 'dropBeforeClaim',
  after_grant: 'dropAfterGrant',
  after_outcome: 'dropAfterOutcome',
};
const MAX_EVENTS = 100;

/** The fault knobs of one simulated device. Everything is off until {@link set} turns it on. */
export class SimFaultKnobs {
  private knobs: Map<SimFaultName, { readonly value: number; readonly once: boolean }> | undefined;
  private events: SimFaultEvent[] | undefined;

  /** Turns knobs on or off (see {@link SimFaultSettings}); knobs not named keep their setting. */
  set(settings: SimFaultSettings): void {
    const once = settings.once ?? false;
    for (const name of ['dropBeforeClaim', 'dropAfterGrant', 'dropAfterOutcome', 'delayMs', 'hang'] as const) {
      const raw = settings[name];
      if (raw === undefined) continue;
      const value = typeof raw === 'number' ? Math.max(0, raw) : raw ? 1 : 0;
      if (value === 0) this.knobs?.delete(name);
      else (this.knobs ??= new Map()).set(name, { value, once });
    }
  }

  /** Turns every knob off. */
  clear(): void {
    this.knobs = undefined;
  }

  /** Whether a knob is on (for `delayMs`, its value; 0 when off). */
  value(name: SimFaultName): number {
    return this.knobs?.get(name)?.value ?? 0;
  }

  /** Faults that took effect, oldest first (the last 100). */
  get fired(): readonly SimFaultEvent[] {
    return this.events ?? [];
  }

  /** The knob's value if it is on, consuming a once-knob and recording the event; 0 when off. */
  private take(name: SimFaultName, requestId: string): number {
    const knob = this.knobs?.get(name);
    if (!knob) return 0;
    if (knob.once) this.knobs!.delete(name);
    const events = (this.events ??= []);
    events.push({ fault: name, requestId });
    if (events.length > MAX_EVENTS) events.shift();
    return knob.value;
  }

  /** The {@link ProtocolStepHook} that applies the drop knobs. */
  readonly protocolHook: ProtocolStepHook = (step, requestId) =>
    this.take(STEP_KNOBS[step], requestId) > 0 ? 'drop' : undefined;

  /**
   * Applies `delayMs` and `hang` before an execution; resolves when it may act, rejects with the signal's reason
   * when the execution is stopped meanwhile.
   */
  async beforeExecution(
    context: Pick<ExecutionContext, 'requestId' | 'signal'>,
    scheduler: DeviceScheduler,
  ): Promise<void> {
    const { signal } = context;
    const delay = this.take('delayMs', context.requestId);
    const hang = this.take('hang', context.requestId) > 0;
    if (delay === 0 && !hang) return;
    await new Promise<void>((resolve, reject) => {
      signal.throwIfAborted();
      let cancel: (() => void) | undefined;
      const onAbort = (): void => {
        cancel?.();
        reject(signal.reason as Error);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      if (!hang) {
        cancel = scheduler.timeout(() => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        }, delay);
      }
    });
  }
}
