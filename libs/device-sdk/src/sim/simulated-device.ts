/**
 * A simulated Android phone for tests, demos and the CLI: installed apps with screens of elements, a foreground app,
 * contacts, a messages app, a banking app and settings toggles, driven through the same tools a real device exposes.
 * Tool and argument names follow the device extension of the catalog (`@ormuz/catalog`, device.extension.ts).
 */
import type { JsonValue, RiskVerdictV1 } from '@ormuz/contracts';
import { DeviceToolError, type ExecutionContext, type ToolArguments } from '../device-client.js';
import { judgedTargetRefusal } from '../judged-target.js';

/** Screen size of the simulated phone, in pixels. */
export const SIM_SCREEN = { width: 1080, height: 2400 } as const;

/** Package names of the simulated apps. `systemui` shows the recent apps; it is not launchable. */
export const SIM_PACKAGES = {
  launcher: 'com.android.launcher',
  messages: 'com.example.messages',
  contacts: 'com.example.contacts',
  bank: 'com.example.bank',
  settings: 'com.android.settings',
  systemui: 'com.android.systemui',
} as const;

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

/** Pixel rectangle of an element on screen. */
export interface SimBounds {
  readonly left: number;
  readonly top: number;
  readonly right: number;
  readonly bottom: number;
}

/** One element as `device.screen_observe` reports it. */
export interface SimObservedElement {
  /** Valid until the screen changes; pass it to `device.tap`, `device.type_text` or `device.swipe`. */
  readonly ref: string;
  readonly role: 'button' | 'text' | 'input' | 'list_item' | 'switch' | 'header';
  /** Visible text; for an input, what was typed into it, or its hint while it is empty. */
  readonly text: string;
  readonly bounds: SimBounds;
  readonly clickable: boolean;
  /** Depth in the element tree; 0 for top-level elements. */
  readonly depth: number;
  /** Set on switches. */
  readonly checked?: boolean;
}

/** A contact in the simulated contacts store. */
export interface SimContact {
  readonly name: string;
  /** E.164 phone number. */
  readonly number: string;
}

/** A message sent through `device.send_message`. */
export interface SimMessage {
  readonly id: string;
  readonly to: SimContact;
  readonly body: string;
  readonly sentAt: string;
}

/** Money moved by the bank app's Confirm transfer button. */
export interface SimTransfer {
  readonly id: string;
  /** Whole cents, more than 0. */
  readonly amountCents: number;
  readonly to: string;
  readonly at: string;
}

/** Names of the simulated system settings. */
export type SimSetting = 'wifi' | 'bluetooth' | 'airplane_mode' | 'location';

/** System keys `device.press_key` presses. */
export type SimKey = 'back' | 'home' | 'enter' | 'recent_apps';

/** Why `device.delete_contacts_verified` skipped a name. */
export type SimContactSkipReason = 'not_found' | 'ambiguous' | 'changed_since_listed';

/** Where the phone is: an app's package and one of its screens. */
export interface SimForeground {
  readonly package: string;
  readonly screen: string;
}

type Effect =
  | { readonly kind: 'navigate'; readonly screen: string }
  | { readonly kind: 'open_app'; readonly package: string }
  | { readonly kind: 'toggle'; readonly setting: SimSetting }
  | { readonly kind: 'focus'; readonly field: string }
  /** The messages app's Send: sends what is typed in To and Message. */
  | { readonly kind: 'send_message' }
  /** The bank app's Confirm transfer: moves the typed Amount out of the current account. */
  | { readonly kind: 'transfer' }
  | { readonly kind: 'none' };

interface Node {
  readonly role: SimObservedElement['role'];
  readonly text: string;
  readonly effect?: Effect;
  readonly checked?: boolean;
  /** Inputs: the field's name (its hint), which keys what was typed into it. */
  readonly field?: string;
  readonly children?: readonly Node[];
}

interface PlacedElement extends SimObservedElement {
  /** Row in the whole (scrollable) screen, from 0. */
  readonly row: number;
  readonly effect?: Effect;
  readonly field?: string;
}

interface SimApp {
  readonly label: string;
  readonly home: string;
  readonly screens: Record<string, (device: SimulatedDevice) => readonly Node[]>;
  /** Where `back` goes from a screen other than home; from home it goes to the launcher. */
  readonly parents?: Record<string, string>;
  /**
   * The button that `enter` in a field of a screen activates (the keyboard's send/done action), by its text:
   * pressing enter there is tapping that button.
   */
  readonly submits?: Record<string, string>;
  /** Keys the app blocks on a screen (a secure screen, say). */
  readonly blockedKeys?: Record<string, readonly SimKey[]>;
  /** Not listed on the launcher and not openable with `device.open_app`. */
  readonly hidden?: boolean;
}

/** Options of {@link SimulatedDevice}. */
export interface SimulatedDeviceOptions {
  readonly contacts?: readonly SimContact[];
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

const DEFAULT_CONTACTS: readonly SimContact[] = [
  { name: 'Alice Martin', number: '+33612345678' },
  { name: 'Bob Chen', number: '+14155550123' },
  { name: 'Chloé Dubois', number: '+33698765432' },
  { name: 'Dmitri Ivanov', number: '+442079460000' },
];

const DEFAULT_OBSERVE_LIMIT = 40;
const MAX_OBSERVE_LIMIT = 200;
const DEFAULT_CONTACTS_LIMIT = 50;
const MAX_BODY_LENGTH = 2000;
const MAX_TYPED_LENGTH = 5000;
const MAX_CONTACT_NAMES = 50;
const MAX_RECENT_APPS = 8;
const TOP = 120;
const ROW_HEIGHT = 140;
/** Rows that fit on the screen; a longer screen scrolls with `device.swipe`. */
const VIEWPORT_ROWS = Math.floor((SIM_SCREEN.height - TOP) / ROW_HEIGHT);
const KEYS: readonly SimKey[] = ['back', 'home', 'enter', 'recent_apps'];
const DIRECTIONS = ['up', 'down', 'left', 'right'] as const;
const LAUNCHER_HOME: SimForeground = { package: SIM_PACKAGES.launcher, screen: 'home' };

const button = (text: string, effect: Effect = { kind: 'none' }): Node => ({ role: 'button', text, effect });
const input = (field: string): Node => ({ role: 'input', text: field, field, effect: { kind: 'focus', field } });

const APPS: Record<string, SimApp> = {
  [SIM_PACKAGES.launcher]: {
    label: 'Home',
    home: 'home',
    screens: {
      home: () => [
        { role: 'header', text: 'Home' },
        ...Object.entries(APPS)
          .filter(([pkg, app]) => pkg !== SIM_PACKAGES.launcher && !app.hidden)
          .map(([pkg, app]) => button(app.label, { kind: 'open_app', package: pkg })),
      ],
    },
  },
  [SIM_PACKAGES.messages]: {
    label: 'Messages',
    home: 'inbox',
    parents: { compose: 'inbox' },
    submits: { compose: 'Send' },
    screens: {
      inbox: (d) => [
        { role: 'header', text: 'Messages' },
        button('Start chat', { kind: 'navigate', screen: 'compose' }),
        {
          role: 'text',
          text: d.messages.length === 0 ? 'No conversations yet' : 'Conversations',
          children: d.messages.map((m) => ({ role: 'list_item', text: `${m.to.name}: ${m.body.slice(0, 60)}` })),
        },
      ],
      compose: () => [
        { role: 'header', text: 'New message' },
        input('To'),
        input('Message'),
        button('Send', { kind: 'send_message' }),
        button('Back', { kind: 'navigate', screen: 'inbox' }),
      ],
    },
  },
  [SIM_PACKAGES.contacts]: {
    label: 'Contacts',
    home: 'list',
    screens: {
      list: (d) => [
        { role: 'header', text: 'Contacts' },
        ...d.contacts.map((c): Node => ({ role: 'list_item', text: c.name })),
      ],
    },
  },
  [SIM_PACKAGES.bank]: {
    label: 'Bank',
    home: 'accounts',
    parents: { transfer: 'accounts' },
    submits: { transfer: 'Confirm transfer' },
    blockedKeys: { transfer: ['recent_apps'] },
    screens: {
      accounts: (d) => [
        { role: 'header', text: 'Accounts' },
        { role: 'text', text: `Current account •••• 4821: ${euros(d.balanceCents)}` },
        button('Transfer', { kind: 'navigate', screen: 'transfer' }),
      ],
      transfer: () => [
        { role: 'header', text: 'Transfer' },
        input('Amount'),
        button('Confirm transfer', { kind: 'transfer' }),
        button('Cancel', { kind: 'navigate', screen: 'accounts' }),
      ],
    },
  },
  [SIM_PACKAGES.settings]: {
    label: 'Settings',
    home: 'main',
    screens: {
      main: (d) => [
        { role: 'header', text: 'Settings' },
        ...(Object.keys(d.settings) as SimSetting[]).map((s): Node => ({
          role: 'switch',
          text: SETTING_LABELS[s],
          checked: d.settings[s],
          effect: { kind: 'toggle', setting: s },
        })),
      ],
    },
  },
  [SIM_PACKAGES.systemui]: {
    label: 'Recent apps',
    home: 'recents',
    hidden: true,
    screens: {
      recents: (d) => [
        { role: 'header', text: 'Recent apps' },
        ...(d.recentApps.length === 0
          ? [{ role: 'text', text: 'No recent apps' } as const]
          : d.recentApps.map((pkg) => button(APPS[pkg]?.label ?? pkg, { kind: 'open_app', package: pkg }))),
      ],
    },
  },
};

/** Where the bank app's transfers go. */
const TRANSFER_PAYEE = 'Savings •••• 1177';
const AMOUNT = /^(\d{1,9})(?:[.,](\d{1,2}))?$/;

function euros(cents: number): string {
  const whole = Math.floor(cents / 100).toLocaleString('en-US');
  return `€${whole}.${String(cents % 100).padStart(2, '0')}`;
}

const SETTING_LABELS: Record<SimSetting, string> = {
  wifi: 'Wi-Fi',
  bluetooth: 'Bluetooth',
  airplane_mode: 'Airplane mode',
  location: 'Location',
};

function invalid(message: string): DeviceToolError {
  return new DeviceToolError('invalid_arguments', message);
}

function optionalInteger(args: ToolArguments, name: string, min: number, max: number): number | undefined {
  const value = args[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalid(`${name} must be a whole number from ${min} to ${max}.`);
  }
  return value;
}

function requiredText(args: ToolArguments, name: string, hint: string): string {
  const value = args[name];
  if (typeof value !== 'string' || value.trim() === '') throw invalid(`Provide ${name}: ${hint}.`);
  return value;
}

function optionalRef(args: ToolArguments): string | undefined {
  const ref = args['ref'];
  if (ref === undefined || ref === null) return undefined;
  if (typeof ref !== 'string' || ref === '') throw invalid('ref must be an element ref from device.screen_observe.');
  return ref;
}

function oneOf<T extends string>(args: ToolArguments, name: string, allowed: readonly T[]): T {
  const value = args[name];
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw invalid(
    `${name} must be one of ${allowed.join(', ')}${value === undefined ? '' : `, not ${JSON.stringify(value)}`}.`,
  );
}

function encodeHandle(value: { token: string; offset: number }): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

function decodeHandle(handle: JsonValue | undefined): { token: string; offset: number } | undefined {
  if (handle === undefined || handle === null) return undefined;
  try {
    const value = JSON.parse(Buffer.from(String(handle), 'base64url').toString('utf8')) as {
      token: unknown;
      offset: unknown;
    };
    if (
      typeof value.token === 'string' &&
      typeof value.offset === 'number' &&
      Number.isInteger(value.offset) &&
      value.offset >= 0
    ) {
      return { token: value.token, offset: value.offset };
    }
  } catch {
    // falls through to the refusal below
  }
  throw invalid(
    'continuation is not a handle this device issued; pass the continuation from the previous result unchanged.',
  );
}

/** The texts an element answers to: what it shows and, for an input, its field name. */
const textsOf = (e: PlacedElement): string[] => [e.text, ...(e.field === undefined ? [] : [e.field])];
const fold = (text: string): string => text.normalize('NFC').toLocaleLowerCase();
const digits = (text: string): string => text.replace(/[^0-9]/g, '');
const sameName = (a: string, b: string): boolean => a.normalize('NFC') === b.normalize('NFC');

/**
 * A simulated phone. Its {@link execute} method is a {@link DeviceExecutor} for the tools in {@link SIM_TOOLS};
 * {@link targetPackage} is the matching {@link TargetPackageResolver}. State lives in memory only.
 */
export class SimulatedDevice {
  /** Contacts, in display order. Tests may edit it directly. */
  readonly contacts: SimContact[];
  /** Messages sent so far (by `device.send_message` or the messages app's Send button), oldest first. */
  readonly messages: SimMessage[] = [];
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
  private fg: SimForeground | null;
  /** Increases on every change a screen could show, so observations and handles can tell they are stale. */
  private version = 0;
  private lastObservation: { token: string; texts: Map<string, string> } | undefined;
  /** First visible row of the current screen. */
  private scroll = 0;
  /** Field name of the focused input on the current screen. */
  private focus: string | undefined;
  /** What was typed, by `package/screen/field`. */
  private readonly fields = new Map<string, string>();
  private recent: string[] = [];
  /** Where `back` returns from the recent apps. */
  private beforeRecents: SimForeground | null = null;
  private readonly now: () => Date;
  private readonly beforeContactCheck: SimulatedDeviceOptions['beforeContactCheck'];
  private readonly historyLimit: number;

  constructor(options: SimulatedDeviceOptions = {}) {
    this.contacts = [...(options.contacts ?? DEFAULT_CONTACTS)];
    this.fg = options.foreground === undefined ? LAUNCHER_HOME : options.foreground;
    this.now = options.now ?? (() => new Date());
    this.beforeContactCheck = options.beforeContactCheck;
    this.historyLimit = options.historyLimit ?? Number.POSITIVE_INFINITY;
    this.execute = this.execute.bind(this);
    this.targetPackage = this.targetPackage.bind(this);
  }

  /** The app and screen in front, or `null` when the device cannot tell (e.g. a system overlay). */
  get foreground(): SimForeground | null {
    return this.fg;
  }

  /** Puts an app in front (or `null`: nothing identifiable is in front). For tests and demos. */
  setForeground(foreground: SimForeground | null): void {
    this.show(foreground);
  }

  /** Apps opened most recently first, as the recent-apps screen lists them. */
  get recentApps(): readonly string[] {
    return this.recent;
  }

  /** What was typed into a field (by its hint, e.g. `Message`) of an app's screen; empty when nothing was. */
  fieldText(pkg: string, screen: string, field: string): string {
    return this.fields.get(`${pkg}/${screen}/${field}`) ?? '';
  }

  /** Package names of the apps `device.open_app` can open. */
  installedPackages(): string[] {
    return Object.keys(APPS).filter((pkg) => !APPS[pkg]!.hidden);
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
        return this.fg?.package ?? null;
      case 'device.screen_observe':
        return this.fg?.package;
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
    this.history.push({ tool, args });
    if (this.history.length > this.historyLimit) this.history.shift();
    switch (tool) {
      case 'device.screen_observe':
        return this.observe(args);
      case 'device.tap':
        return this.tap(args, verdict);
      case 'device.type_text':
        return this.typeText(args, verdict);
      case 'device.swipe':
        return this.swipe(args, verdict);
      case 'device.press_key':
        return this.pressKey(args, verdict);
      case 'device.open_app':
        return this.openApp(args);
      case 'device.toggle_setting':
        return this.toggleSetting(args);
      case 'device.send_message':
        return this.sendMessage(args);
      case 'device.list_contacts':
        return this.listContacts(args);
      case 'device.delete_contacts_verified':
        return this.deleteContactsVerified(args, context?.signal);
      default:
        throw new DeviceToolError(
          'unknown_tool',
          `This device has no tool named ${JSON.stringify(tool)}. It runs ${SIM_TOOLS.join(', ')}; search the tool ` +
            `directory for the action you need.`,
        );
    }
  }

  // --- screen -----------------------------------------------------------------------------------------------------

  /** Every change of app or screen goes through here: scroll and focus belong to a screen. */
  private show(next: SimForeground | null): void {
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

  private screenToken(): string {
    return this.fg ? `${this.fg.package}/${this.fg.screen}#${this.version}` : `none#${this.version}`;
  }

  /** Every element of the current screen, placed for the current scroll position (off-screen ones included). */
  private layout(): PlacedElement[] {
    const fg = this.fg;
    if (!fg) return [];
    const build = APPS[fg.package]?.screens[fg.screen];
    if (!build) return [];
    const out: PlacedElement[] = [];
    const place = (nodes: readonly Node[], depth: number): void => {
      for (const node of nodes) {
        const row = out.length;
        const top = TOP + (row - this.scroll) * ROW_HEIGHT;
        const typed = node.field === undefined ? '' : this.fieldText(fg.package, fg.screen, node.field);
        out.push({
          ref: `e${row + 1}`,
          row,
          role: node.role,
          text: typed === '' ? node.text : typed,
          bounds: { left: 40 + depth * 40, top, right: SIM_SCREEN.width - 40, bottom: top + ROW_HEIGHT - 20 },
          clickable: node.effect !== undefined,
          depth,
          ...(node.checked === undefined ? {} : { checked: node.checked }),
          ...(node.effect ? { effect: node.effect } : {}),
          ...(node.field === undefined ? {} : { field: node.field }),
        });
        if (node.children) place(node.children, depth + 1);
      }
    };
    place(build(this), 0);
    return out;
  }

  /** The elements on screen now. */
  private elements(): PlacedElement[] {
    return this.layout().filter((e) => e.row >= this.scroll && e.row < this.scroll + VIEWPORT_ROWS);
  }

  private unavailableScreen(consequence: string): DeviceToolError {
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
  private requireForeground(args: ToolArguments, nothing: string): SimForeground {
    const expected = args['foreground_package'];
    if (expected !== undefined && expected !== null && typeof expected !== 'string')
      throw invalid('foreground_package must be the package name from the latest device.screen_observe.');
    if (!this.fg) throw this.unavailableScreen(nothing);
    if (typeof expected === 'string' && expected !== this.fg.package) {
      throw new DeviceToolError(
        'foreground_changed',
        `The app in front is ${this.fg.package}, not ${expected}; ${nothing}. Call device.screen_observe and decide again.`,
      );
    }
    return this.fg;
  }

  /**
   * When the call names the visible text of its target (`target_text`), the element acted on must show it (or, for
   * an input, be the field of that name): the risk verdict was given for that text.
   */
  private checkTargetText(args: ToolArguments, target: PlacedElement | undefined, nothing: string): void {
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

  /** Finds an element by ref; a ref from an older screen falls back to the element with the same text. */
  private byRef(ref: string, elements: readonly PlacedElement[]): { target: PlacedElement; strategy: 'ref' | 'text' } {
    const observedHere = this.lastObservation === undefined || this.lastObservation.token === this.screenToken();
    const direct = observedHere ? elements.find((e) => e.ref === ref) : undefined;
    if (direct) return { target: direct, strategy: 'ref' };
    const text = this.lastObservation?.texts.get(ref);
    const byText =
      text === undefined
        ? undefined
        : elements.find((e) => (e.clickable && e.text === text) || (e.field !== undefined && e.field === text));
    if (byText) return { target: byText, strategy: 'text' };
    const where = this.fg ? `${this.fg.package}/${this.fg.screen}` : 'no screen';
    throw new DeviceToolError(
      'stale_ref',
      `No element ${ref} is on the current screen (${where}). Observe the screen again and use a ref from that observation.`,
    );
  }

  /** What every screen action returns: the outcome, not just "success" (`changed` may be false). */
  private screenResult(before: number, extra: { [key: string]: JsonValue } = {}): JsonValue {
    return {
      succeeded: true,
      ...extra,
      changed: this.version !== before,
      foreground_package: this.fg?.package ?? null,
      screen: this.fg?.screen ?? null,
      settled: true,
    };
  }

  private observe(args: ToolArguments): JsonValue {
    if (!this.fg) throw this.unavailableScreen('there is no screen to read');
    const limit = optionalInteger(args, 'max_elements', 1, MAX_OBSERVE_LIMIT) ?? DEFAULT_OBSERVE_LIMIT;
    const token = this.screenToken();
    const handle = decodeHandle(args['continuation']);
    if (handle && handle.token !== token) {
      throw new DeviceToolError(
        'stale_continuation',
        'The screen changed since that observation; observe again without continuation.',
      );
    }
    const all = this.elements();
    const offset = handle?.offset ?? 0;
    const page = all.slice(offset, offset + limit);
    const partial = offset + page.length < all.length;
    const texts =
      handle && this.lastObservation?.token === token ? this.lastObservation.texts : new Map<string, string>();
    for (const e of page) texts.set(e.ref, e.text);
    this.lastObservation = { token, texts };
    return {
      foreground_package: this.fg.package,
      screen: this.fg.screen,
      elements: page.map(({ effect: _effect, field: _field, row: _row, ...e }) => ({ ...e, bounds: { ...e.bounds } })),
      total_elements: all.length,
      partial,
      ...(partial ? { continuation: encodeHandle({ token, offset: offset + page.length }) } : {}),
    };
  }

  private tap(args: ToolArguments, verdict: RiskVerdictV1 | undefined): JsonValue {
    const ref = args['ref'];
    const x = args['x'];
    const y = args['y'];
    const hasRef = typeof ref === 'string' && ref !== '';
    const hasPoint = typeof x === 'number' && typeof y === 'number';
    if (!hasRef && !hasPoint) {
      throw invalid('Provide ref (an element ref from the latest device.screen_observe), or both x and y (pixels).');
    }
    const fg = this.requireForeground(args, 'nothing was tapped');
    const elements = this.elements();
    let target: PlacedElement | undefined;
    let strategy: 'ref' | 'text' | 'coordinates';
    if (hasRef) {
      ({ target, strategy } = this.byRef(ref, elements));
    } else {
      const px = x as number;
      const py = y as number;
      if (px < 0 || py < 0 || px >= SIM_SCREEN.width || py >= SIM_SCREEN.height) {
        throw invalid(
          `x and y must be inside the screen, 0 ≤ x < ${SIM_SCREEN.width} and 0 ≤ y < ${SIM_SCREEN.height}.`,
        );
      }
      const hits = elements.filter(
        (e) => px >= e.bounds.left && px < e.bounds.right && py >= e.bounds.top && py < e.bounds.bottom,
      );
      target = hits.findLast((e) => e.clickable) ?? hits.at(-1);
      strategy = 'coordinates';
    }
    this.checkTargetText(args, target, 'nothing was tapped');
    this.checkJudged(verdict, fg, target ? textsOf(target) : null, 'nothing was tapped');
    const before = this.version;
    if (target?.effect) this.applyEffect(target.effect);
    return this.screenResult(before, {
      strategy,
      target: target ? { ref: target.ref, text: target.text } : null,
    });
  }

  private typeText(args: ToolArguments, verdict: RiskVerdictV1 | undefined): JsonValue {
    const text = requiredText(args, 'text', 'the exact text to type into the field');
    if (text.length > MAX_TYPED_LENGTH)
      throw invalid(`text is ${text.length} characters; type at most ${MAX_TYPED_LENGTH} at once.`);
    const ref = optionalRef(args);
    const fg = this.requireForeground(args, 'nothing was typed');
    let target: PlacedElement | undefined;
    if (ref !== undefined) {
      target = this.byRef(ref, this.elements()).target;
      if (target.field === undefined) {
        throw new DeviceToolError(
          'not_an_input',
          `Element ${target.ref} is a ${target.role} (${JSON.stringify(target.text)}), not an input field; nothing ` +
            'was typed. Pass the ref of an input from device.screen_observe.',
        );
      }
    } else {
      target = this.focus === undefined ? undefined : this.layout().find((e) => e.field === this.focus);
      if (!target) {
        throw new DeviceToolError(
          'no_focused_field',
          'No input field has focus, so nothing was typed. Pass the ref of the field from device.screen_observe.',
        );
      }
    }
    this.checkTargetText(args, target, 'nothing was typed');
    // Typing into the focused field with no element judged activates nothing; only the app is checked then.
    const judgedField = ref !== undefined || (verdict?.judged_on?.target_text ?? null) !== null;
    this.checkJudged(verdict, fg, judgedField ? textsOf(target) : null, 'nothing was typed');
    const field = target.field!;
    const before = this.version;
    this.fields.set(`${fg.package}/${fg.screen}/${field}`, this.fieldText(fg.package, fg.screen, field) + text);
    this.focus = field;
    this.version += 1;
    return this.screenResult(before, { target: { ref: target.ref, text: target.text } });
  }

  private swipe(args: ToolArguments, verdict: RiskVerdictV1 | undefined): JsonValue {
    const direction = oneOf(args, 'direction', DIRECTIONS);
    const ref = optionalRef(args);
    const fg = this.requireForeground(args, 'nothing was swiped');
    this.checkJudged(verdict, fg, null, 'nothing was swiped');
    // The simulated screens have one scrolling list each: a ref only has to be on screen.
    if (ref !== undefined) this.byRef(ref, this.elements());
    const before = this.version;
    if (direction === 'up' || direction === 'down') {
      const last = Math.max(0, this.layout().length - VIEWPORT_ROWS);
      const step = (VIEWPORT_ROWS - 1) * (direction === 'up' ? 1 : -1);
      const next = Math.min(last, Math.max(0, this.scroll + step));
      if (next !== this.scroll) {
        this.scroll = next;
        this.version += 1;
      }
    }
    return this.screenResult(before);
  }

  private pressKey(args: ToolArguments, verdict: RiskVerdictV1 | undefined): JsonValue {
    const key = oneOf(args, 'key', KEYS);
    const fg = this.requireForeground(args, 'nothing was pressed');
    const app = APPS[fg.package];
    if (app?.blockedKeys?.[fg.screen]?.includes(key)) {
      throw new DeviceToolError(
        'key_blocked',
        `${app.label} blocks the ${key} key on its ${fg.screen} screen; nothing happened. Use a button on the screen ` +
          'instead (observe it first).',
      );
    }
    // Enter in a field is the keyboard's send/done action: it taps the screen's submit button, if it has one.
    const submit = key === 'enter' ? this.submitButton(fg) : undefined;
    this.checkJudged(verdict, fg, submit ? textsOf(submit) : null, 'nothing was pressed');
    const before = this.version;
    switch (key) {
      case 'back':
        if (this.focus !== undefined) this.unfocus();
        else this.back(fg);
        break;
      case 'home':
        if (fg.package !== LAUNCHER_HOME.package || fg.screen !== LAUNCHER_HOME.screen) this.show(LAUNCHER_HOME);
        break;
      case 'enter':
        if (submit?.effect) this.applyEffect(submit.effect);
        else if (this.focus !== undefined) this.unfocus();
        break;
      case 'recent_apps':
        if (fg.package === SIM_PACKAGES.systemui) this.show(this.beforeRecents ?? LAUNCHER_HOME);
        else this.show({ package: SIM_PACKAGES.systemui, screen: 'recents' });
        break;
      default: {
        const unknown: never = key;
        throw new Error(`unknown key ${String(unknown)}`);
      }
    }
    return this.screenResult(before);
  }

  /** The button `enter` activates on this screen: its submit button, when a field has focus and the screen has one. */
  private submitButton(fg: SimForeground): PlacedElement | undefined {
    const text = APPS[fg.package]?.submits?.[fg.screen];
    if (this.focus === undefined || text === undefined) return undefined;
    return this.layout().find((e) => e.clickable && e.text === text);
  }

  /** Refuses to act when the verdict was judged on another app or element than the one about to be acted on. */
  private checkJudged(
    verdict: RiskVerdictV1 | undefined,
    fg: SimForeground,
    texts: readonly string[] | null,
    nothing: string,
  ): void {
    const refusal = judgedTargetRefusal(verdict, { foregroundPackage: fg.package, texts }, nothing);
    if (refusal) throw refusal;
  }

  private unfocus(): void {
    this.focus = undefined;
    this.version += 1;
  }

  private back(fg: SimForeground): void {
    if (fg.package === SIM_PACKAGES.systemui) return this.show(this.beforeRecents ?? LAUNCHER_HOME);
    const parent = APPS[fg.package]?.parents?.[fg.screen];
    if (parent !== undefined) return this.show({ package: fg.package, screen: parent });
    if (fg.package === LAUNCHER_HOME.package && fg.screen === LAUNCHER_HOME.screen) return;
    this.show(LAUNCHER_HOME);
  }

  private applyEffect(effect: Effect): void {
    switch (effect.kind) {
      case 'navigate':
        if (this.fg) this.show({ package: this.fg.package, screen: effect.screen });
        return;
      case 'open_app':
        this.show({ package: effect.package, screen: APPS[effect.package]!.home });
        return;
      case 'toggle':
        this.settings[effect.setting] = !this.settings[effect.setting];
        this.version += 1;
        return;
      case 'focus':
        if (this.focus !== effect.field) {
          this.focus = effect.field;
          this.version += 1;
        }
        return;
      case 'send_message':
        this.sendTyped();
        return;
      case 'transfer':
        this.transferTyped();
        return;
      case 'none':
        return;
      default: {
        const unknown: never = effect;
        throw new Error(`unknown tap effect ${JSON.stringify(unknown)}`);
      }
    }
  }

  /** The messages app's Send button: sends what is typed in To and Message, then shows the conversations. */
  private sendTyped(): void {
    const { messages } = SIM_PACKAGES;
    const to = this.fieldText(messages, 'compose', 'To').trim();
    const body = this.fieldText(messages, 'compose', 'Message');
    if (to === '' || body.trim() === '') {
      throw new DeviceToolError(
        'nothing_to_send',
        'Send needs a recipient in To and a text in Message; nothing was sent. Type them, then tap Send.',
      );
    }
    const contact = this.findContact(to);
    if (!contact) {
      throw new DeviceToolError(
        'unknown_recipient',
        `No contact is named or numbered ${JSON.stringify(to)}; nothing was sent. Call device.list_contacts to find the exact name.`,
      );
    }
    this.deliver(contact, body);
    for (const field of ['To', 'Message']) this.fields.delete(`${messages}/compose/${field}`);
    this.show({ package: messages, screen: 'inbox' });
  }

  /** The bank app's Confirm transfer button: moves the typed Amount to the saved payee, then shows the accounts. */
  private transferTyped(): void {
    const { bank } = SIM_PACKAGES;
    const typed = this.fieldText(bank, 'transfer', 'Amount').trim();
    const match = AMOUNT.exec(typed);
    const cents = match ? Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0')) : 0;
    if (cents <= 0 || cents > this.balanceCents) {
      throw new DeviceToolError(
        'transfer_refused',
        `Amount ${JSON.stringify(typed)} is not an amount from 0.01 to ${euros(this.balanceCents).slice(1)}; no money ` +
          'was moved. Type the amount in Amount (e.g. 25.00), then tap Confirm transfer.',
      );
    }
    this.balanceCents -= cents;
    this.transfers.push({
      id: `trf-${this.transfers.length + 1}`,
      amountCents: cents,
      to: TRANSFER_PAYEE,
      at: this.now().toISOString(),
    });
    this.fields.delete(`${bank}/transfer/Amount`);
    this.show({ package: bank, screen: 'accounts' });
  }

  // --- apps and settings ------------------------------------------------------------------------------------------

  private openApp(args: ToolArguments): JsonValue {
    const pkg = requiredText(args, 'package_name', 'the app package name, e.g. com.example.messages');
    const app = APPS[pkg];
    if (!app || app.hidden) {
      throw new DeviceToolError(
        'app_not_installed',
        `${pkg} is not installed. Installed apps: ${this.installedPackages().join(', ')}.`,
      );
    }
    const changed = this.fg?.package !== pkg || this.fg.screen !== app.home;
    if (changed) this.show({ package: pkg, screen: app.home });
    return { succeeded: true, foreground_package: pkg, screen: app.home, changed, settled: true };
  }

  /** Sets a setting to a state rather than flipping it, so a repeated call changes nothing. */
  private toggleSetting(args: ToolArguments): JsonValue {
    const setting = oneOf(args, 'setting', Object.keys(SETTING_LABELS) as SimSetting[]);
    const wanted = oneOf(args, 'desired_state', ['on', 'off'] as const) === 'on';
    const previous = this.settings[setting];
    if (previous !== wanted) {
      this.settings[setting] = wanted;
      this.version += 1;
    }
    return {
      setting,
      previous_state: previous ? 'on' : 'off',
      current_state: wanted ? 'on' : 'off',
      changed: previous !== wanted,
    };
  }

  // --- contacts and messages --------------------------------------------------------------------------------------

  private requireContacts(): void {
    if (!this.contactsAvailable) {
      throw new DeviceToolError(
        'contacts_unavailable',
        'The contacts store is unavailable (the profile is locked); nothing was read or changed. Ask the owner to ' +
          'unlock the phone, then try again.',
      );
    }
  }

  private findContact(to: string): SimContact | undefined {
    const wanted = fold(to.trim());
    const byName = this.contacts.find((c) => fold(c.name) === wanted);
    if (byName) return byName;
    const number = digits(to);
    return number.length >= 6 ? this.contacts.find((c) => digits(c.number) === number) : undefined;
  }

  private sendMessage(args: ToolArguments): JsonValue {
    const to = requiredText(args, 'recipient', "the contact's exact name or phone number from device.list_contacts");
    const body = requiredText(args, 'message_body', 'the text to send');
    if (body.length > MAX_BODY_LENGTH)
      throw invalid(`message_body is ${body.length} characters; send at most ${MAX_BODY_LENGTH}.`);
    const contact = this.findContact(to);
    if (!contact) {
      throw new DeviceToolError(
        'unknown_recipient',
        `No contact is named or numbered ${JSON.stringify(to)}; nothing was sent. Call device.list_contacts to find the exact name.`,
      );
    }
    const message = this.deliver(contact, body);
    return { message_id: message.id, to: { name: contact.name, number: contact.number }, sent_at: message.sentAt };
  }

  private deliver(to: SimContact, body: string): SimMessage {
    const message: SimMessage = { id: `msg-${this.messages.length + 1}`, to, body, sentAt: this.now().toISOString() };
    this.messages.push(message);
    this.version += 1;
    return message;
  }

  private listContacts(args: ToolArguments): JsonValue {
    const query = args['name_query'];
    if (query !== undefined && query !== null && typeof query !== 'string')
      throw invalid('name_query must be text, or left out to list everyone.');
    const limit = optionalInteger(args, 'limit', 1, 200) ?? DEFAULT_CONTACTS_LIMIT;
    this.requireContacts();
    const matching =
      typeof query === 'string' && query !== ''
        ? this.contacts.filter((c) => fold(c.name).includes(fold(query)))
        : this.contacts;
    const token = `contacts:${typeof query === 'string' ? query : ''}#${this.contacts.length}`;
    const handle = decodeHandle(args['continuation']);
    if (handle && handle.token !== token) {
      throw new DeviceToolError(
        'stale_continuation',
        'That continuation belongs to another query or the contacts changed; list again without it.',
      );
    }
    const offset = handle?.offset ?? 0;
    const page = matching.slice(offset, offset + limit);
    const partial = offset + page.length < matching.length;
    return {
      contacts: page.map((c) => ({ name: c.name, number: c.number })),
      total: matching.length,
      partial,
      ...(partial ? { continuation: encodeHandle({ token, offset: offset + page.length }) } : {}),
    };
  }

  private contactsNamed(name: string): SimContact[] {
    return this.contacts.filter((c) => sameName(c.name, name));
  }

  /**
   * Deletes contacts by exact name (NFC), one at a time, deleting only what it can verify. It first takes its own
   * listing of every name, then right before deleting each one re-reads it: a name with no contact now is skipped as
   * `not_found`, one with several as `ambiguous`, and one whose contact is not the very record it listed (edited,
   * replaced, or absent then) as `changed_since_listed`. Returns `{ deleted, skipped: [{ name, reason }] }`.
   * Stopping mid-way (cancel, deadline: `cancelled`; the store going away: `contacts_unavailable`) fails and names
   * what was already deleted; an unavailable store at the start fails with nothing deleted.
   */
  private async deleteContactsVerified(args: ToolArguments, signal: AbortSignal | undefined): Promise<JsonValue> {
    const names = args['contact_names'];
    if (
      !Array.isArray(names) ||
      names.length === 0 ||
      names.length > MAX_CONTACT_NAMES ||
      !names.every((n): n is string => typeof n === 'string' && n.trim() !== '' && n.length <= 200)
    ) {
      throw invalid(
        `contact_names must list 1 to ${MAX_CONTACT_NAMES} exact contact names (each 1 to 200 characters), as ` +
          'device.list_contacts shows them.',
      );
    }
    if (new Set(names.map((n) => n.normalize('NFC'))).size !== names.length)
      throw invalid('contact_names lists a name twice; list each contact once.');
    this.requireContacts();
    const listed = new Map(names.map((name) => [name, this.contactsNamed(name)]));
    const deleted: string[] = [];
    const skipped: { name: string; reason: SimContactSkipReason }[] = [];
    const stop = (code: string, why: string): DeviceToolError =>
      new DeviceToolError(
        code,
        `${why}: deleted ${deleted.length === 0 ? 'nothing' : deleted.join(', ')}; did not touch ` +
          `${names.slice(deleted.length + skipped.length).join(', ')}. List the contacts to see what is left before ` +
          'trying again.',
      );
    for (const name of names) {
      if (signal?.aborted) throw stop('cancelled', 'Stopped before finishing');
      await this.beforeContactCheck?.(name, this);
      if (signal?.aborted) throw stop('cancelled', 'Stopped before finishing');
      if (!this.contactsAvailable) throw stop('contacts_unavailable', 'The contacts store became unavailable');
      const now = this.contactsNamed(name);
      const then = listed.get(name)!;
      if (now.length === 0) skipped.push({ name, reason: 'not_found' });
      else if (now.length > 1) skipped.push({ name, reason: 'ambiguous' });
      else if (then.length !== 1 || then[0] !== now[0]) skipped.push({ name, reason: 'changed_since_listed' });
      else {
        this.contacts.splice(this.contacts.indexOf(now[0]!), 1);
        this.version += 1;
        deleted.push(name);
      }
    }
    return { deleted, skipped };
  }
}
