/**
 * A simulated Android phone for tests, demos and the CLI: installed apps with screens of elements, a foreground app,
 * contacts, a messages app, a banking app and settings toggles, driven through the same tools a real device exposes.
 * Tool and argument names follow the device extension of the catalog (`@ormuz/catalog`, device.extension.ts).
 *
 * This module is the device itself: it owns the state (sim-state.ts) and dispatches each tool to its group
 * (screen-tools.ts, app-tools.ts, contact-tools.ts); the apps and their screens are in sim-apps.ts.
 */
import type { JsonValue, RiskVerdictV1 } from '@ormuz/contracts';
import { DeviceToolError, type ExecutionContext, type ToolArguments } from '../device-executor.js';
import { openApp, toggleSetting } from './app-tools.js';
import { deleteContactsVerified, listContacts, sendMessage } from './contact-tools.js';
import { observe, pressKey, swipe, tap, typeText } from './screen-tools.js';
import {
  DEFAULT_CONTACTS,
  LAUNCHER_HOME,
  SIM_PACKAGES,
  installedPackages,
  type SimContact,
  type SimForeground,
  type SimMessage,
  type SimNotification,
  type SimReceivedMessage,
  type SimSetting,
  type SimTransfer,
} from './sim-apps.js';
import { SimState } from './sim-state.js';

/** Tools the simulated device runs. */
export const SIM_TOOLS = [
  'device.screen_observe',
  'device.tap',
  'device.type_text',
  'device.swipe',
  'device.press_key',
  'device.open_app',
  'device.toggle_setting',
  'device.send_message',
  'device.list_contacts',
  'device.delete_contacts_verified',
] as const;

/** Options of {@link SimulatedDevice}. */
export interface SimulatedDeviceOptions {
  readonly contacts?: readonly SimContact[];
  /** Messages already received (the inbox lists them); default none. */
  readonly received?: readonly SimReceivedMessage[];
  /** Notifications on the home screen; default none. */
  readonly notifications?: readonly SimNotification[];
  /** Starting foreground app; defaults to the launcher's home screen. */
  readonly foreground?: SimForeground | null;
  /** Clock for message times; defaults to the system clock. */
  readonly now?: () => Date;
  /**
   * Called by `device.delete_contacts_verified` right before it re-reads each name, after it took its own listing:
   * lets a test change the contacts in between, as a sync or the owner editing the address book would.
   */
  readonly beforeContactCheck?: (name: string, device: SimulatedDevice) => void | Promise<void>;
  /** Most entries kept in {@link SimulatedDevice.history} (oldest dropped first); default unbounded. */
  readonly historyLimit?: number;
}

/**
 * A simulated phone. Its {@link execute} method is a {@link DeviceExecutor} for the tools in {@link SIM_TOOLS};
 * {@link targetPackage} is the matching {@link TargetPackageResolver}. State lives in memory only.
 */
export class SimulatedDevice {
  private readonly state: SimState;
  private readonly historyLimit: number;

  constructor(options: SimulatedDeviceOptions = {}) {
    const check = options.beforeContactCheck;
    this.state = new SimState({
      contacts: options.contacts ?? DEFAULT_CONTACTS,
      ...(options.received ? { received: options.received } : {}),
      ...(options.notifications ? { notifications: options.notifications } : {}),
      foreground: options.foreground === undefined ? LAUNCHER_HOME : options.foreground,
      now: options.now ?? (() => new Date()),
      ...(check ? { beforeContactCheck: (name: string) => check(name, this) } : {}),
    });
    this.historyLimit = options.historyLimit ?? Number.POSITIVE_INFINITY;
    this.execute = this.execute.bind(this);
    this.targetPackage = this.targetPackage.bind(this);
  }

  /** Contacts, in display order. Tests may edit it directly. */
  get contacts(): SimContact[] {
    return this.state.contacts;
  }

  /** Messages sent so far (by `device.send_message` or the messages app's Send button), oldest first. */
  get messages(): SimMessage[] {
    return this.state.messages;
  }

  /** Messages received, oldest first, as the inbox lists them. Tests may edit it directly. */
  get received(): SimReceivedMessage[] {
    return this.state.received;
  }

  /** Notifications on the home screen, oldest first. Tests may edit it directly. */
  get notifications(): SimNotification[] {
    return this.state.notifications;
  }

  /** Balance of the bank app's current account, in cents; Confirm transfer takes money out of it. */
  get balanceCents(): number {
    return this.state.balanceCents;
  }

  set balanceCents(cents: number) {
    this.state.balanceCents = cents;
  }

  /** Transfers confirmed in the bank app, oldest first. */
  get transfers(): SimTransfer[] {
    return this.state.transfers;
  }

  /** System settings switches. */
  get settings(): Record<SimSetting, boolean> {
    return this.state.settings;
  }

  /** Every tool the executor ran, in order: lets a test count runs. */
  get history(): { readonly tool: string; readonly args: ToolArguments }[] {
    return this.state.history;
  }

  /** When false, the contacts store fails as a whole (`contacts_unavailable`), as a locked profile would. */
  get contactsAvailable(): boolean {
    return this.state.contactsAvailable;
  }

  set contactsAvailable(available: boolean) {
    this.state.contactsAvailable = available;
  }

  /** The app and screen in front, or `null` when the device cannot tell (e.g. a system overlay). */
  get foreground(): SimForeground | null {
    return this.state.fg;
  }

  /** Puts an app in front (or `null`: nothing identifiable is in front). For tests and demos. */
  setForeground(foreground: SimForeground | null): void {
    this.state.show(foreground);
  }

  /** Apps opened most recently first, as the recent-apps screen lists them. */
  get recentApps(): readonly string[] {
    return this.state.recentApps;
  }

  /** What was typed into a field (by its hint, e.g. `Message`) of an app's screen; empty when nothing was. */
  fieldText(pkg: string, screen: string, field: string): string {
    return this.state.fieldText(pkg, screen, field);
  }

  /** Package names of the apps `device.open_app` can open. */
  installedPackages(): string[] {
    return installedPackages();
  }

  /**
   * Which app a tool call acts in, for the device's package policy: the named package for `device.open_app`, the
   * foreground app for screen actions (`null` when it is unknown, which the device refuses) and observations, the
   * settings, messages or contacts app for those tools, `undefined` for anything else.
   */
  targetPackage(tool: string, args: ToolArguments): string | null | undefined {
    switch (tool) {
      case 'device.open_app':
        return typeof args['package_name'] === 'string' ? args['package_name'] : undefined;
      case 'device.tap':
      case 'device.type_text':
      case 'device.swipe':
      case 'device.press_key':
        return this.state.fg?.package ?? null;
      case 'device.screen_observe':
        return this.state.fg?.package;
      case 'device.toggle_setting':
        return SIM_PACKAGES.settings;
      case 'device.send_message':
        return SIM_PACKAGES.messages;
      case 'device.list_contacts':
      case 'device.delete_contacts_verified':
        return SIM_PACKAGES.contacts;
      default:
        return undefined;
    }
  }

  /**
   * Runs one tool. Throws {@link DeviceToolError} with a code and a next-step message for unknown tools
   * (`unknown_tool`), bad arguments (`invalid_arguments`) and refusals of the simulated world (`app_not_installed`,
   * `unknown_recipient`, `stale_ref`, `stale_continuation`, `screen_unavailable`, `foreground_changed`,
   * `target_mismatch`, `not_an_input`, `no_focused_field`, `key_blocked`, `contacts_unavailable`, `cancelled`,
   * `nothing_to_send`, `transfer_refused`). A screen action whose `context.verdict` says what it was judged on
   * (`judged_on`) is refused with `foreground_changed` or `target_mismatch` when the screen shows something else now.
   */
  async execute(
    tool: string,
    args: ToolArguments,
    context?: Pick<ExecutionContext, 'signal'> & { readonly verdict?: RiskVerdictV1 },
  ): Promise<JsonValue> {
    context?.signal.throwIfAborted();
    const verdict = context?.verdict;
    const s = this.state;
    s.history.push({ tool, args });
    if (s.history.length > this.historyLimit) s.history.shift();
    switch (tool) {
      case 'device.screen_observe':
        return observe(s, args);
      case 'device.tap':
        return tap(s, args, verdict);
      case 'device.type_text':
        return typeText(s, args, verdict);
      case 'device.swipe':
        return swipe(s, args, verdict);
      case 'device.press_key':
        return pressKey(s, args, verdict);
      case 'device.open_app':
        return openApp(s, args);
      case 'device.toggle_setting':
        return toggleSetting(s, args);
      case 'device.send_message':
        return sendMessage(s, args);
      case 'device.list_contacts':
        return listContacts(s, args);
      case 'device.delete_contacts_verified':
        return deleteContactsVerified(s, args, context?.signal);
      default:
        throw new DeviceToolError(
          'unknown_tool',
          `This device has no tool named ${JSON.stringify(tool)}. It runs ${SIM_TOOLS.join(', ')}; search the tool ` +
            `directory for the action you need.`,
        );
    }
  }
}
