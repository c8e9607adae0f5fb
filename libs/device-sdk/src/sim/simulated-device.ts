/**
 * A simulated Android phone for tests, demos and the CLI: installed apps with screens of elements, a foreground app,
 * contacts, a messages app, a banking app and settings toggles, driven through the same tools a real device exposes.
 */
import type { JsonValue } from '@ormuz/contracts';
import { DeviceToolError, type ExecutionContext, type ToolArguments } from '../device-client.js';

/** Screen size of the simulated phone, in pixels. */
export const SIM_SCREEN = { width: 1080, height: 2400 } as const;

/** Package names of the simulated apps. */
export const SIM_PACKAGES = {
  launcher: 'com.android.launcher',
  messages: 'com.example.messages',
  contacts: 'com.example.contacts',
  bank: 'com.example.bank',
  settings: 'com.android.settings',
} as const;

/** Tools the simulated device runs. */
export const SIM_TOOLS = [
  'device.screen_observe',
  'device.tap',
  'device.open_app',
  'device.send_message',
  'device.list_contacts',
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
  /** Valid until the screen changes; pass it to `device.tap`. */
  readonly ref: string;
  readonly role: 'button' | 'text' | 'input' | 'list_item' | 'switch' | 'header';
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

/** Names of the simulated system settings. */
export type SimSetting = 'wifi' | 'bluetooth' | 'airplane_mode' | 'location';

/** Where the phone is: an app's package and one of its screens. */
export interface SimForeground {
  readonly package: string;
  readonly screen: string;
}

type TapEffect =
  | { readonly kind: 'navigate'; readonly screen: string }
  | { readonly kind: 'open_app'; readonly package: string }
  | { readonly kind: 'toggle'; readonly setting: SimSetting }
  | { readonly kind: 'none' };

interface Node {
  readonly role: SimObservedElement['role'];
  readonly text: string;
  readonly effect?: TapEffect;
  readonly checked?: boolean;
  readonly children?: readonly Node[];
}

interface PlacedElement extends SimObservedElement {
  readonly effect?: TapEffect;
}

interface SimApp {
  readonly label: string;
  readonly home: string;
  readonly screens: Record<string, (device: SimulatedDevice) => readonly Node[]>;
}

/** Options of {@link SimulatedDevice}. */
export interface SimulatedDeviceOptions {
  readonly contacts?: readonly SimContact[];
  /** Starting foreground app; defaults to the launcher's home screen. */
  readonly foreground?: SimForeground | null;
  /** Clock for message times; defaults to the system clock. */
  readonly now?: () => Date;
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
const ROW_HEIGHT = 140;

const button = (text: string, effect: TapEffect = { kind: 'none' }): Node => ({ role: 'button', text, effect });

const APPS: Record<string, SimApp> = {
  [SIM_PACKAGES.launcher]: {
    label: 'Home',
    home: 'home',
    screens: {
      home: () => [
        { role: 'header', text: 'Home' },
        ...Object.entries(APPS)
          .filter(([pkg]) => pkg !== SIM_PACKAGES.launcher)
          .map(([pkg, app]) => button(app.label, { kind: 'open_app', package: pkg })),
      ],
    },
  },
  [SIM_PACKAGES.messages]: {
    label: 'Messages',
    home: 'inbox',
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
        { role: 'input', text: 'To' },
        { role: 'input', text: 'Message' },
        button('Send'),
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
    screens: {
      accounts: () => [
        { role: 'header', text: 'Accounts' },
        { role: 'text', text: 'Current account •••• 4821: €2,310.55' },
        button('Transfer', { kind: 'navigate', screen: 'transfer' }),
      ],
      transfer: () => [
        { role: 'header', text: 'Transfer' },
        { role: 'input', text: 'Amount' },
        button('Confirm transfer'),
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
};

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

const fold = (text: string): string => text.normalize('NFC').toLocaleLowerCase();
const digits = (text: string): string => text.replace(/[^0-9]/g, '');

/**
 * A simulated phone. Its {@link execute} method is a {@link DeviceExecutor} for the tools in {@link SIM_TOOLS};
 * {@link targetPackage} is the matching {@link TargetPackageResolver}. State lives in memory only.
 */
export class SimulatedDevice {
  /** Contacts, in display order. */
  readonly contacts: SimContact[];
  /** Messages sent so far, oldest first. */
  readonly messages: SimMessage[] = [];
  /** System settings switches. */
  readonly settings: Record<SimSetting, boolean> = {
    wifi: true,
    bluetooth: false,
    airplane_mode: false,
    location: true,
  };
  /** Every tool the executor ran, in order: lets a test count runs. */
  readonly history: { readonly tool: string; readonly args: ToolArguments }[] = [];
  private fg: SimForeground | null;
  /** Increases on every change a screen could show, so observations and handles can tell they are stale. */
  private version = 0;
  private lastObservation: { token: string; texts: Map<string, string> } | undefined;
  private readonly now: () => Date;

  constructor(options: SimulatedDeviceOptions = {}) {
    this.contacts = [...(options.contacts ?? DEFAULT_CONTACTS)];
    this.fg =
      options.foreground === undefined ? { package: SIM_PACKAGES.launcher, screen: 'home' } : options.foreground;
    this.now = options.now ?? (() => new Date());
    this.execute = this.execute.bind(this);
    this.targetPackage = this.targetPackage.bind(this);
  }

  /** The app and screen in front, or `null` when the device cannot tell (e.g. a system overlay). */
  get foreground(): SimForeground | null {
    return this.fg;
  }

  /** Puts an app in front (or `null`: nothing identifiable is in front). For tests and demos. */
  setForeground(foreground: SimForeground | null): void {
    this.fg = foreground;
    this.version += 1;
  }

  /** Package names of the installed apps. */
  installedPackages(): string[] {
    return Object.keys(APPS);
  }

  /**
   * Which app a tool call acts in, for the device's package policy: the named package for `device.open_app`, the
   * foreground app for taps and observations (`null` for a tap when it is unknown), the messages or contacts app for
   * those tools, `undefined` for anything else.
   */
  targetPackage(tool: string, args: ToolArguments): string | null | undefined {
    switch (tool) {
      case 'device.open_app':
        return typeof args['package_name'] === 'string' ? args['package_name'] : undefined;
      case 'device.tap':
        return this.fg?.package ?? null;
      case 'device.screen_observe':
        return this.fg?.package;
      case 'device.send_message':
        return SIM_PACKAGES.messages;
      case 'device.list_contacts':
        return SIM_PACKAGES.contacts;
      default:
        return undefined;
    }
  }

  /**
   * Runs one tool. Throws {@link DeviceToolError} with a code and a next-step message for unknown tools
   * (`unknown_tool`), bad arguments (`invalid_arguments`) and refusals of the simulated world (`app_not_installed`,
   * `unknown_recipient`, `stale_ref`, `stale_continuation`, `screen_unavailable`).
   */
  async execute(tool: string, args: ToolArguments, context?: Pick<ExecutionContext, 'signal'>): Promise<JsonValue> {
    context?.signal.throwIfAborted();
    this.history.push({ tool, args });
    switch (tool) {
      case 'device.screen_observe':
        return this.observe(args);
      case 'device.tap':
        return this.tap(args);
      case 'device.open_app':
        return this.openApp(args);
      case 'device.send_message':
        return this.sendMessage(args);
      case 'device.list_contacts':
        return this.listContacts(args);
      default:
        throw new DeviceToolError(
          'unknown_tool',
          `This device has no tool named ${JSON.stringify(tool)}. It runs ${SIM_TOOLS.join(', ')}; search the tool ` +
            `directory for the action you need.`,
        );
    }
  }

  private screenToken(): string {
    return this.fg ? `${this.fg.package}/${this.fg.screen}#${this.version}` : `none#${this.version}`;
  }

  private elements(): PlacedElement[] {
    if (!this.fg) return [];
    const app = APPS[this.fg.package];
    const build = app?.screens[this.fg.screen];
    if (!build) return [];
    const out: PlacedElement[] = [];
    const place = (nodes: readonly Node[], depth: number): void => {
      for (const node of nodes) {
        const row = out.length;
        const top = 120 + row * ROW_HEIGHT;
        out.push({
          ref: `e${row + 1}`,
          role: node.role,
          text: node.text,
          bounds: { left: 40 + depth * 40, top, right: SIM_SCREEN.width - 40, bottom: top + ROW_HEIGHT - 20 },
          clickable: node.effect !== undefined,
          depth,
          ...(node.checked === undefined ? {} : { checked: node.checked }),
          ...(node.effect ? { effect: node.effect } : {}),
        });
        if (node.children) place(node.children, depth + 1);
      }
    };
    place(build(this), 0);
    return out;
  }

  private unavailableScreen(): DeviceToolError {
    return new DeviceToolError(
      'screen_unavailable',
      'The device cannot tell which app is in front (a system overlay is showing), so there is no screen to read. ' +
        'Open an app with device.open_app, then observe again.',
    );
  }

  private observe(args: ToolArguments): JsonValue {
    if (!this.fg) throw this.unavailableScreen();
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
      elements: page.map(({ effect: _effect, ...e }) => ({ ...e, bounds: { ...e.bounds } })),
      total_elements: all.length,
      partial,
      ...(partial ? { continuation: encodeHandle({ token, offset: offset + page.length }) } : {}),
    };
  }

  private tap(args: ToolArguments): JsonValue {
    const ref = args['ref'];
    const x = args['x'];
    const y = args['y'];
    const hasRef = typeof ref === 'string' && ref !== '';
    const hasPoint = typeof x === 'number' && typeof y === 'number';
    if (!hasRef && !hasPoint) {
      throw invalid('Provide ref (an element ref from the latest device.screen_observe), or both x and y (pixels).');
    }
    if (!this.fg) throw this.unavailableScreen();
    const expected = args['foreground_package'];
    if (typeof expected === 'string' && expected !== this.fg.package) {
      // The tap was decided (and risk-classified) for another app than the one now in front: never act on it.
      throw new DeviceToolError(
        'foreground_changed',
        `The app in front is ${this.fg.package}, not ${expected}; nothing was tapped. Call device.screen_observe and decide again.`,
      );
    }
    const elements = this.elements();
    const token = this.screenToken();
    let target: PlacedElement | undefined;
    let strategy: 'ref' | 'text' | 'coordinates';
    if (hasRef) {
      const observedHere = this.lastObservation === undefined || this.lastObservation.token === token;
      target = observedHere ? elements.find((e) => e.ref === ref) : undefined;
      strategy = 'ref';
      if (!target) {
        // The ref is from an older screen: fall back to the element with the same text, if the screen still has one.
        const text = this.lastObservation?.texts.get(ref);
        target = text === undefined ? undefined : elements.find((e) => e.clickable && e.text === text);
        strategy = 'text';
      }
      if (!target) {
        throw new DeviceToolError(
          'stale_ref',
          `No element ${ref} is on the current screen (${this.fg.package}/${this.fg.screen}). Observe the screen again and use a ref from that observation.`,
        );
      }
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
    const before = this.version;
    if (target?.effect) this.applyEffect(target.effect);
    return {
      succeeded: true,
      strategy,
      target: target ? { ref: target.ref, text: target.text } : null,
      changed: this.version !== before,
      foreground_package: this.fg?.package ?? null,
      screen: this.fg?.screen ?? null,
      settled: true,
    };
  }

  private applyEffect(effect: TapEffect): void {
    switch (effect.kind) {
      case 'navigate':
        if (this.fg) this.setForeground({ package: this.fg.package, screen: effect.screen });
        return;
      case 'open_app':
        this.setForeground({ package: effect.package, screen: APPS[effect.package]!.home });
        return;
      case 'toggle':
        this.settings[effect.setting] = !this.settings[effect.setting];
        this.version += 1;
        return;
      case 'none':
        return;
      default: {
        const unknown: never = effect;
        throw new Error(`unknown tap effect ${JSON.stringify(unknown)}`);
      }
    }
  }

  private openApp(args: ToolArguments): JsonValue {
    const pkg = requiredText(args, 'package_name', 'the app package name, e.g. com.example.messages');
    const app = APPS[pkg];
    if (!app) {
      throw new DeviceToolError(
        'app_not_installed',
        `${pkg} is not installed. Installed apps: ${this.installedPackages().join(', ')}.`,
      );
    }
    const changed = this.fg?.package !== pkg || this.fg.screen !== app.home;
    if (changed) this.setForeground({ package: pkg, screen: app.home });
    return { succeeded: true, foreground_package: pkg, screen: app.home, changed, settled: true };
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
    const message: SimMessage = {
      id: `msg-${this.messages.length + 1}`,
      to: contact,
      body,
      sentAt: this.now().toISOString(),
    };
    this.messages.push(message);
    this.version += 1;
    return { message_id: message.id, to: { name: contact.name, number: contact.number }, sent_at: message.sentAt };
  }

  private listContacts(args: ToolArguments): JsonValue {
    const query = args['name_query'];
    if (query !== undefined && query !== null && typeof query !== 'string')
      throw invalid('name_query must be text, or left out to list everyone.');
    const limit = optionalInteger(args, 'limit', 1, 200) ?? DEFAULT_CONTACTS_LIMIT;
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
}
