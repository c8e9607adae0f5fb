/**
 * The state of one simulated phone, which the tool groups share: what its apps hold (contacts, messages, the bank
 * account, settings), what is on screen (the app in front, scroll, focus, what was typed) and what it ran. Only
 * screen bookkeeping lives here; what each tool does lives in its group's module.
 */
import type { ToolArguments } from '../device-executor.js';
import {
  MAX_RECENT_APPS,
  SIM_PACKAGES,
  layout,
  onScreen,
  type PlacedElement,
  type SimAppData,
  type SimContact,
  type SimForeground,
  type SimMessage,
  type SimNotification,
  type SimReceivedMessage,
  type SimSetting,
  type SimTransfer,
} from './sim-apps.js';

/** How a {@link SimState} starts. */
export interface SimStateInit {
  readonly contacts: readonly SimContact[];
  readonly received?: readonly SimReceivedMessage[];
  readonly notifications?: readonly SimNotification[];
  readonly foreground: SimForeground | null;
  readonly now: () => Date;
  /** Called by `device.delete_contacts_verified` right before it re-reads each name. */
  readonly beforeContactCheck?: (name: string) => void | Promise<void>;
}

/** One phone's state; a `SimulatedDevice` owns one and hands it to the tool groups. In memory only. */
export class SimState implements SimAppData {
  /** Contacts, in display order. Tests may edit it directly. */
  readonly contacts: SimContact[];
  /** Messages sent so far (by `device.send_message` or the messages app's Send button), oldest first. */
  readonly messages: SimMessage[] = [];
  /** Messages received, oldest first: the inbox lists them. Tests may edit it directly. */
  readonly received: SimReceivedMessage[];
  /** Notifications on the home screen, oldest first. Tests may edit it directly. */
  readonly notifications: SimNotification[];
  /** Balance of the bank app's current account, in cents; Confirm transfer takes money out of it. */
  balanceCents = 231_055;
  /** Transfers confirmed in the bank app, oldest first. */
  readonly transfers: SimTransfer[] = [];
  /** System settings switches. */
  readonly settings: Record<SimSetting, boolean> = {
    wifi: true,
    bluetooth: false,
    airplane_mode: false,
    location: true,
  };
  /** Every tool the executor ran, in order: lets a test count runs. */
  readonly history: { readonly tool: string; readonly args: ToolArguments }[] = [];
  /** When false, the contacts store fails as a whole (`contacts_unavailable`), as a locked profile would. */
  contactsAvailable = true;
  /** The app and screen in front; change it through {@link show} only. */
  fg: SimForeground | null;
  /** Increases on every change a screen could show, so observations and handles can tell they are stale. */
  version = 0;
  /** The screen the last observation read, and the text of each ref it handed out. */
  lastObservation: { token: string; texts: Map<string, string> } | undefined;
  /** First visible row of the current screen. */
  scroll = 0;
  /** Field name of the focused input on the current screen. */
  focus: string | undefined;
  /** What was typed, by `package/screen/field`. */
  readonly fields = new Map<string, string>();
  /** Apps opened most recently first. */
  recent: string[] = [];
  /** Where `back` returns from the recent apps. */
  beforeRecents: SimForeground | null = null;
  readonly now: () => Date;
  readonly beforeContactCheck: SimStateInit['beforeContactCheck'];

  constructor(init: SimStateInit) {
    this.contacts = [...init.contacts];
    this.received = [...(init.received ?? [])];
    this.notifications = [...(init.notifications ?? [])];
    this.fg = init.foreground;
    this.now = init.now;
    this.beforeContactCheck = init.beforeContactCheck;
  }

  get recentApps(): readonly string[] {
    return this.recent;
  }

  /** What was typed into a field (by its hint, e.g. `Message`) of an app's screen; empty when nothing was. */
  fieldText(pkg: string, screen: string, field: string): string {
    return this.fields.get(`${pkg}/${screen}/${field}`) ?? '';
  }

  /** Every change of app or screen goes through here: scroll and focus belong to a screen. */
  show(next: SimForeground | null): void {
    const from = this.fg;
    if (next?.package === SIM_PACKAGES.systemui && from?.package !== SIM_PACKAGES.systemui) this.beforeRecents = from;
    if (next && next.package !== SIM_PACKAGES.launcher && next.package !== SIM_PACKAGES.systemui) {
      this.recent = [next.package, ...this.recent.filter((p) => p !== next.package)].slice(0, MAX_RECENT_APPS);
    }
    this.fg = next;
    this.scroll = 0;
    this.focus = undefined;
    this.version += 1;
  }

  /** Names the screen as shown now: any change makes a new token. */
  screenToken(): string {
    return this.fg ? `${this.fg.package}/${this.fg.screen}#${this.version}` : `none#${this.version}`;
  }

  /** Every element of the current screen, placed for the current scroll position (off-screen ones included). */
  layout(): PlacedElement[] {
    const fg = this.fg;
    if (!fg) return [];
    return layout(fg, this.scroll, this, (field) => this.fieldText(fg.package, fg.screen, field));
  }

  /** The elements on screen now. */
  elements(): PlacedElement[] {
    return onScreen(this.layout(), this.scroll);
  }
}
