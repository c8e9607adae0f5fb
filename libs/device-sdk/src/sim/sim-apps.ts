/**
 * The simulated phone's apps and screen model: the public shapes of what it holds and shows, the apps (launcher,
 * messages, contacts, bank, settings, recent apps) with their screens of elements and what tapping each does, and the
 * layout that places a screen's elements in rows on the display. Pure data and functions: the phone's state lives in
 * sim-state.ts.
 */

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
  /** What was written about the contact (by the owner, or a sync); the contacts app shows it under the name. */
  readonly note?: string;
}

/** A message the phone received; the messages app's inbox lists it. Its text is whatever the sender wrote. */
export interface SimReceivedMessage {
  /** The sender's number (or name, for a contact). */
  readonly from: string;
  readonly body: string;
}

/** A notification on the home screen: an app's label and the text it posted. */
export interface SimNotification {
  readonly app: string;
  readonly text: string;
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

/** What tapping an element does (see app-effects.ts). */
export type Effect =
  | { readonly kind: 'navigate'; readonly screen: string }
  | { readonly kind: 'open_app'; readonly package: string }
  | { readonly kind: 'toggle'; readonly setting: SimSetting }
  | { readonly kind: 'focus'; readonly field: string }
  /** The messages app's Send: sends what is typed in To and Message. */
  | { readonly kind: 'send_message' }
  /** The bank app's Confirm transfer: moves the typed Amount out of the current account. */
  | { readonly kind: 'transfer' }
  | { readonly kind: 'none' };

/** An element of a screen as its app describes it, before layout. */
export interface Node {
  readonly role: SimObservedElement['role'];
  readonly text: string;
  readonly effect?: Effect;
  readonly checked?: boolean;
  /** Inputs: the field's name (its hint), which keys what was typed into it. */
  readonly field?: string;
  readonly children?: readonly Node[];
}

/** An element placed on the display by {@link layout}. */
export interface PlacedElement extends SimObservedElement {
  /** Row in the whole (scrollable) screen, from 0. */
  readonly row: number;
  readonly effect?: Effect;
  readonly field?: string;
}

/** What the apps' screens show of the phone's state. */
export interface SimAppData {
  readonly contacts: readonly SimContact[];
  readonly messages: readonly SimMessage[];
  readonly received: readonly SimReceivedMessage[];
  readonly notifications: readonly SimNotification[];
  readonly balanceCents: number;
  readonly settings: Readonly<Record<SimSetting, boolean>>;
  readonly recentApps: readonly string[];
}

/** A simulated app: its screens, and where keys go from each. */
export interface SimApp {
  readonly label: string;
  readonly home: string;
  readonly screens: Record<string, (data: SimAppData) => readonly Node[]>;
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

export const DEFAULT_CONTACTS: readonly SimContact[] = [
  { name: 'Alice Martin', number: '+33612345678' },
  { name: 'Bob Chen', number: '+14155550123' },
  { name: 'Chloé Dubois', number: '+33698765432' },
  { name: 'Dmitri Ivanov', number: '+442079460000' },
];

/** Apps the recent-apps screen lists at most. */
export const MAX_RECENT_APPS = 8;
const TOP = 120;
const ROW_HEIGHT = 140;
/** Rows that fit on the screen; a longer screen scrolls with `device.swipe`. */
export const VIEWPORT_ROWS = Math.floor((SIM_SCREEN.height - TOP) / ROW_HEIGHT);
export const LAUNCHER_HOME: SimForeground = { package: SIM_PACKAGES.launcher, screen: 'home' };

/** Where the bank app's transfers go. */
export const TRANSFER_PAYEE = 'Savings •••• 1177';
/** An amount as typed in the bank app: euros, then optionally cents after a point or a comma. */
export const AMOUNT = /^(\d{1,9})(?:[.,](\d{1,2}))?$/;

export function euros(cents: number): string {
  const whole = Math.floor(cents / 100).toLocaleString('en-US');
  return `€${whole}.${String(cents % 100).padStart(2, '0')}`;
}

export const SETTING_LABELS: Record<SimSetting, string> = {
  wifi: 'Wi-Fi',
  bluetooth: 'Bluetooth',
  airplane_mode: 'Airplane mode',
  location: 'Location',
};

const button = (text: string, effect: Effect = { kind: 'none' }): Node => ({ role: 'button', text, effect });
const input = (field: string): Node => ({ role: 'input', text: field, field, effect: { kind: 'focus', field } });

export const APPS: Record<string, SimApp> = {
  [SIM_PACKAGES.launcher]: {
    label: 'Home',
    home: 'home',
    screens: {
      home: (d) => [
        { role: 'header', text: 'Home' },
        ...Object.entries(APPS)
          .filter(([pkg, app]) => pkg !== SIM_PACKAGES.launcher && !app.hidden)
          .map(([pkg, app]) => button(app.label, { kind: 'open_app', package: pkg })),
        ...(d.notifications.length === 0
          ? []
          : [
              {
                role: 'text',
                text: 'Notifications',
                children: d.notifications.map((n): Node => ({ role: 'list_item', text: `${n.app}: ${n.text}` })),
              } satisfies Node,
            ]),
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
        ...(d.received.length === 0
          ? []
          : [
              {
                role: 'text',
                text: 'Received',
                children: d.received.map((m): Node => ({ role: 'list_item', text: `From ${m.from}: ${m.body}` })),
              } satisfies Node,
            ]),
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
        ...d.contacts.map((c): Node => ({
          role: 'list_item',
          text: c.name,
          ...(c.note ? { children: [{ role: 'text', text: `Note: ${c.note}` }] } : {}),
        })),
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

/** Package names of the apps `device.open_app` can open. */
export function installedPackages(): string[] {
  return Object.keys(APPS).filter((pkg) => !APPS[pkg]!.hidden);
}

/**
 * Every element of the screen `fg` shows, placed for a scroll position (off-screen ones included); `typed` gives what
 * was typed into a field of that screen, which an input shows instead of its hint.
 */
export function layout(
  fg: SimForeground | null,
  scroll: number,
  data: SimAppData,
  typed: (field: string) => string,
): PlacedElement[] {
  if (!fg) return [];
  const build = APPS[fg.package]?.screens[fg.screen];
  if (!build) return [];
  const out: PlacedElement[] = [];
  const place = (nodes: readonly Node[], depth: number): void => {
    for (const node of nodes) {
      const row = out.length;
      const top = TOP + (row - scroll) * ROW_HEIGHT;
      const text = node.field === undefined ? '' : typed(node.field);
      out.push({
        ref: `e${row + 1}`,
        row,
        role: node.role,
        text: text === '' ? node.text : text,
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
  place(build(data), 0);
  return out;
}

/** The elements of a layout that are on the display at a scroll position. */
export function onScreen(elements: readonly PlacedElement[], scroll: number): PlacedElement[] {
  return elements.filter((e) => e.row >= scroll && e.row < scroll + VIEWPORT_ROWS);
}

/** The texts an element answers to: what it shows and, for an input, its field name. */
export const textsOf = (e: PlacedElement): string[] => [e.text, ...(e.field === undefined ? [] : [e.field])];
