/**
 * The deterministic risk classifier: no model, no I/O, no clock. Every table is compiled when the module loads (or
 * when a {@link RiskClassifier} with extra words is built); a classification only looks words up.
 */
import { financialScreenEvidence } from './financial-screen.js';
import { PAYMENT_APPS, PAYMENT_PACKAGE_WORDS, SYSTEM_CONTROL_APPS, type KnownApp } from './foreground-apps.js';
import { LANGUAGES, type LanguageCode } from './lexicon.js';
import { foldCut, MAX_FOLD_GROWTH, normalizeForMatching } from './normalize.js';
import {
  ACTIVATING_TOOLS,
  CONTENT_ARGUMENT_WORDS,
  DEVICE_ACTION_PHRASES,
  INFORMATION_PAGES,
  KEY_ARGUMENTS,
  KEY_TOOLS,
  KEYS,
  SCREEN_ACTION_TOOLS,
  SETTING_TOOLS,
  SETTINGS_APPS,
  SETTINGS_JUDGED_TOOLS,
  TOGGLE_ROLES,
} from './system-actions.js';
import type { TenantAppLists } from './tenant-apps.js';
import { Lru } from './lru.js';
import { findDisguises, hasVisibleText, type Disguise } from './normalize.js';
import { WordMatcher, type ExtraHighRiskWords, type WordMatch } from './word-matcher.js';

/** `high` waits for the owner's approval, `low` runs with the verdict stamped in, `refused` never runs as sent. */
export type RiskLevel = 'high' | 'low' | 'refused';

/** One tool call as the classifier sees it. */
export interface RiskInput {
  /** Tool name, `<extension>.<snake_case>` (`device.tap`); judged by the part after the last dot. */
  readonly tool: string;
  readonly args: Readonly<Record<string, unknown>>;
  /** Text of the element the action targets (a button's label), from the latest observation. */
  readonly target_text?: string | null;
  /** Package of the app in front, from the latest observation (`device.screen_observe` returns it). */
  readonly foreground_package?: string | null;
  /**
   * Role of the target element in the latest observation (`switch`, `list_item`, `button`…), when known. A tap on a
   * switch flips a setting whatever its label says.
   */
  readonly target_role?: string | null;
  /**
   * Texts of the elements on the screen the action acts on, from the latest observation of that app, when known. An
   * app on no list whose screen shows an IBAN, an account number or a balance is judged a finance app.
   */
  readonly screen_text?: readonly string[] | null;
}

/**
 * The classifier's verdict. `reasons` are short, stable sentences naming what was matched (word, meaning and
 * language; app; action) or, for a low verdict, what was checked; at most {@link MAX_REASONS} of at most
 * {@link MAX_REASON_LENGTH} characters each. `fix` is present only when the call is refused, and says what to send.
 */
export interface RiskVerdict {
  readonly level: RiskLevel;
  readonly reasons: readonly string[];
  readonly fix?: string;
}

/** Options of a {@link RiskClassifier}. */
export interface RiskClassifierOptions {
  /** More payment, banking, wallet or exchange packages; each also covers the packages under it (`.*` is allowed). */
  readonly extraHighRiskPackages?: readonly string[];
  /** More high-risk words, per meaning and language. */
  readonly extraWords?: readonly ExtraHighRiskWords[];
}

/** Target text beyond this many UTF-16 code units is not read, and the call is high (no label is that long). */
export const MAX_TARGET_TEXT_LENGTH = 2000;
/**
 * The same bound once the text is folded for matching: NFKC makes some characters many times longer (U+FDFA is 18
 * characters, U+3300 four), so 2,000 characters of them would be 36,000 to read. Text whose characters fold, each
 * on its own, to more (never less than the whole text folds to) is read only as far as they fold within the bound,
 * and the call is high.
 */
export const MAX_FOLDED_TARGET_TEXT_LENGTH = MAX_TARGET_TEXT_LENGTH;
/** Most reasons a verdict carries (the wire contract's limit). */
export const MAX_REASONS = 32;
/** Longest reason, in characters (the wire contract's limit). */
export const MAX_REASON_LENGTH = 512;

/** What a model should do when a screen action is refused for want of a foreground package. */
export const FOREGROUND_PACKAGE_FIX =
  'Pass foreground_package from your most recent observation: device.screen_observe returns it with every screen. ' +
  'If the screen may have changed since, call device.screen_observe again and retry with the foreground_package it returns.';

const ANDROID_PACKAGE = /^[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)+$/;
const MAX_PACKAGE_LENGTH = 255;
const PACKAGE_WORD_SPLIT = /[_\d]+|(?<=[a-z])(?=[A-Z])/;
const IDENTIFIER = /^[\p{L}\p{N}_.:\-/$#@]+$/u;
const MAX_IDENTIFIER_LENGTH = 200;
const IDENTIFIER_WORD_SPLIT = /[^\p{L}\p{N}]+|(?<=\p{Ll})(?=\p{Lu})|(?<=\p{L})(?=\p{N})|(?<=\p{N})(?=\p{L})/u;
const MAX_ARG_DEPTH = 8;
const MAX_ARG_NODES = 512;
const MAX_PHRASE_WORDS = 3;
const MAX_CACHED_TOOL_NAMES = 1024;
/** Foreground packages and identifiers (argument names, identifier-like values) whose reading is kept. */
const MAX_CACHED_PACKAGES = 1024;
const MAX_CACHED_IDENTIFIERS = 4096;

const SCREEN_TOOLS = new Set(SCREEN_ACTION_TOOLS);
const ACTIVATING_TOOL_SET = new Set(ACTIVATING_TOOLS);
const SETTING_TOOL_SET = new Set(SETTING_TOOLS);
const KEY_TOOL_SET = new Set(KEY_TOOLS);
const CONTENT_WORDS = new Set(CONTENT_ARGUMENT_WORDS);
const PACKAGE_WORDS = new Set(PAYMENT_PACKAGE_WORDS);
const DEVICE_ACTIONS = new Map<string, string>(
  Object.entries(DEVICE_ACTION_PHRASES).flatMap(([meaning, phrases]) => phrases.map((p) => [p, meaning] as const)),
);
/**
 * A value can mean a device action only if it has a run of letters as long as the longest word of some phrase
 * (`wipe`): most values (`e12`, `42`, `ok`) are then passed over without being split into words.
 */
const MAY_NAME_ACTION = new RegExp(
  `\\p{L}{${Math.min(...[...DEVICE_ACTIONS.keys()].map((p) => Math.max(...p.split(' ').map((w) => w.length))))}}`,
  'u',
);

function knownApps(apps: readonly KnownApp[]): Map<string, string> {
  return new Map(apps.map((a) => [a.package.toLowerCase(), a.app]));
}
const SYSTEM_APPS = knownApps(SYSTEM_CONTROL_APPS);
const SETTINGS_APP_SET = new Set(SETTINGS_APPS);
const SETTINGS_JUDGED = new Set(SETTINGS_JUDGED_TOOLS);
const TOGGLE_ROLE_SET = new Set(TOGGLE_ROLES);
const INFORMATION_PAGE_SET = new Set(INFORMATION_PAGES.map(settingsLabel));

/** A Settings entry's label as compared: its first line (the title, not the summary), normalised, without ':' or '>'. */
function settingsLabel(text: string): string {
  const firstLine = text.split(/\r?\n/, 1)[0] ?? '';
  return normalizeForMatching(firstLine)
    .replace(/[\s:>›»]+$/u, '')
    .replace(/\s+/gu, ' ')
    .trim();
}

/** `s` quoted as JSON, shortened to `max` characters: safe to embed whatever the caller sent. */
function quote(s: string, max = 120): string {
  return JSON.stringify(s.length > max ? `${s.slice(0, max)}…` : s);
}

function languageList(languages: readonly string[]): string {
  const names = languages.map((l) => LANGUAGES[l as LanguageCode]?.name ?? l);
  return names.length <= 2 ? names.join(' and ') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

function wordReason(subject: string, m: WordMatch): string {
  const look = m.lookalike ? ', written with look-alike letters from another script' : '';
  return `${subject} means ${m.meaning}: ${quote(m.word)} (${languageList(m.languages)})${look}`;
}

function disguiseReason(d: Disguise): string {
  switch (d.kind) {
    case 'override':
      return 'target text contains a right-to-left override (U+202E), which shows its letters in another order than they are stored';
    case 'mixed-script':
      return `target text has a word that mixes Latin with Cyrillic or Greek look-alike letters: ${quote(d.word)}`;
    default:
      return d satisfies never;
  }
}

/** The app that owns `pkg` in `apps`: the package itself or the nearest listed package above it. */
function lookupApp(apps: ReadonlyMap<string, string>, pkg: string): string | undefined {
  let name = pkg;
  for (;;) {
    const app = apps.get(name);
    if (app !== undefined) return app;
    const dot = name.lastIndexOf('.');
    if (dot <= 0) return undefined;
    name = name.slice(0, dot);
  }
}

/** Whether `pkg` or a package above it is in `set`. */
function lookupIn(set: ReadonlySet<string>, pkg: string): boolean {
  let name = pkg;
  for (;;) {
    if (set.has(name)) return true;
    const dot = name.lastIndexOf('.');
    if (dot <= 0) return false;
    name = name.slice(0, dot);
  }
}

/** What the built-in lists and the package name say of a foreground app (kept per package). */
type PackageReading =
  | ({ readonly kind: 'finance'; readonly reason: string } & LowReasons)
  | { readonly kind: 'system'; readonly app: string; readonly settings: boolean }
  | ({ readonly kind: 'other' } & LowReasons);

/** The low reason of an app on no list, built with its reading (finance readings carry it too, for the types). */
interface LowReasons {
  /** Without and with the screen's text checked. */
  readonly low: string;
  readonly lowScreenChecked: string;
}

/** The screen action as the foreground check reads it. */
interface ScreenContext {
  readonly pkg: string;
  readonly reading: PackageReading;
  /** The tool's short name (`tap`). */
  readonly name: string;
  readonly targetText: string | null;
  readonly role: string | null;
  readonly screenText: readonly unknown[] | null;
}

/**
 * A screen action in a Settings app, judged by what it does: a tap on an information page's entry (About phone,
 * Battery, Storage, Display, Android version) is low; a tap on a switch, or on anything not known to be an
 * information page (reset, accounts, security, device admin, apps…), and every other action is high.
 */
function settingsTap(screen: ScreenContext): { readonly low: boolean; readonly reason: string } {
  const app = `foreground app ${quote(screen.pkg)} is Settings`;
  if (!SETTINGS_JUDGED.has(screen.name)) {
    return { low: false, reason: `${app}, where a ${screen.name.replace(/_/g, ' ')} can change a setting` };
  }
  if (screen.role !== null && TOGGLE_ROLE_SET.has(screen.role)) {
    return { low: false, reason: `${app}, and the target is a ${screen.role}: tapping it changes a setting` };
  }
  if (screen.targetText === null) return { low: false, reason: `${app}, and no target text says what the tap opens` };
  const label = settingsLabel(screen.targetText.slice(0, MAX_TARGET_TEXT_LENGTH));
  if (INFORMATION_PAGE_SET.has(label)) {
    const element = screen.role === null ? 'the target' : `the target (a ${screen.role})`;
    return { low: true, reason: `${app}, and ${element} ${quote(screen.targetText)} opens a page of information` };
  }
  return {
    low: false,
    reason: `${app}, and ${quote(screen.targetText)} is not known to only open a page of information (it may change a setting)`,
  };
}

function identifierWords(identifier: string): string[] {
  return identifier
    .split(IDENTIFIER_WORD_SPLIT)
    .filter((w) => w.length > 0)
    .map((w) => w.toLowerCase());
}

/** What an argument name or identifier-like value says: its device actions, and whether it names free text. */
interface IdentifierReading {
  /** {@link deviceActions} of its {@link identifierWords}. */
  readonly actions: readonly string[];
  /** One of its words is a content word (`message_body`): values under such a key are free text, not read. */
  readonly content: boolean;
  /** It matches {@link IDENTIFIER} (a value is read only then). */
  readonly identifier: boolean;
}

const identifierReadings = new Lru<string, IdentifierReading>(MAX_CACHED_IDENTIFIERS);

/** {@link IdentifierReading} of `text`; memoised for text up to {@link MAX_IDENTIFIER_LENGTH} characters. */
function readIdentifier(text: string): IdentifierReading {
  const cacheable = text.length <= MAX_IDENTIFIER_LENGTH;
  let reading = cacheable ? identifierReadings.get(text) : undefined;
  if (reading === undefined) {
    const words = identifierWords(text);
    reading = {
      actions: deviceActions(words),
      content: words.some((w) => CONTENT_WORDS.has(w)),
      identifier: IDENTIFIER.test(text),
    };
    if (cacheable) identifierReadings.set(text, reading);
  }
  return reading;
}

/** Device actions an identifier's words spell (`airplane_mode` → airplane mode), in order, without repeats. */
function deviceActions(words: readonly string[]): string[] {
  const found: string[] = [];
  for (let i = 0; i < words.length; i++) {
    let phrase = '';
    for (let j = i; j < words.length && j < i + MAX_PHRASE_WORDS; j++) {
      phrase = j === i ? (words[j] as string) : `${phrase} ${words[j]}`;
      const meaning = DEVICE_ACTIONS.get(phrase);
      if (meaning !== undefined && !found.includes(meaning)) found.push(meaning);
    }
  }
  return found;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What a tool's name says, and the reasons that name it (built once per tool name). */
interface ToolReading {
  /** The part after the last dot, lower-cased (`tap`). */
  readonly name: string;
  /** How reasons name the tool. */
  readonly label: string;
  /** Device actions and lexicon words its name means. */
  readonly reasons: readonly string[];
  readonly offScreen: string;
  readonly changesNothing: string;
}

/** Outcome of reading a foreground package: what the built-in lists and its name say of a valid one. */
type Foreground =
  | { readonly kind: 'unknown'; readonly why: string }
  | { readonly kind: 'known'; readonly pkg: string; readonly reading: PackageReading };

const MISSING_FOREGROUND: Foreground = { kind: 'unknown', why: 'foreground_package is missing' };

/**
 * Classifies tool calls by risk. Build one per configuration and reuse it: construction compiles the lexicon
 * (a few milliseconds); {@link classify} is pure and takes microseconds.
 */
export class RiskClassifier {
  private readonly words: WordMatcher;
  private readonly paymentApps: Map<string, string>;
  /** Tool name → what it says (see {@link ToolReading}); a deployment has few tool names, each read per call. */
  private readonly tools = new Map<string, ToolReading>();
  /** Foreground package, as sent → whether it is one, and what the built-in lists and its name say of it. */
  private readonly foregrounds = new Lru<string, Foreground>(MAX_CACHED_PACKAGES);
  /** The target-text reason of each word match (matches are shared between texts, so few are ever made). */
  private readonly targetReasons = new WeakMap<WordMatch, string>();

  constructor(options: RiskClassifierOptions = {}) {
    this.words = new WordMatcher(options.extraWords ?? []);
    this.paymentApps = knownApps(PAYMENT_APPS);
    for (const pkg of options.extraHighRiskPackages ?? []) {
      this.paymentApps.set(pkg.trim().toLowerCase().replace(/\.\*$/, ''), 'listed by configuration');
    }
  }

  /**
   * The verdict for one call. Total: never throws, whatever `input` holds (missing or mistyped fields are read as
   * absent), and deterministic (the same input always gives the same verdict).
   *
   * - `refused` when the tool acts on the screen (`tap`, `long_press`, `double_tap`, `type_text`, `swipe`, `scroll`,
   *   `press_key`) and `foreground_package` is missing, empty or not an Android package name; `fix` says to pass the
   *   one from the latest observation.
   * - `high` when the target text means a high-risk action in any lexicon language; when a screen action runs in a
   *   payment, banking, wallet, exchange or system-settings app; when the tool or an identifier-like argument means
   *   a setting change, power, airplane mode, device admin, install or uninstall, or a factory reset; when
   *   `press_key` presses POWER or CALL, or ENTER with no target text to say what it activates; when `tap`,
   *   `long_press` or `double_tap` has no target text to say what it activates.
   * - In a Settings app, a `tap` is judged by what it does: on a switch (`target_role`) or on an entry not known to
   *   open an information page it is high; on About phone, Battery, Storage, Display or Android version it is low.
   * - An app on no list is a finance app (high) when `screen_text` shows an IBAN, an account number or a balance.
   * - `apps`, the tenant's lists, come first: `finance` packages are high, `not_finance` ones are never judged finance
   *   apps (system-settings apps are still judged as such).
   * - `low` otherwise, with one reason per check that passed.
   */
  classify(input: RiskInput, apps?: TenantAppLists): RiskVerdict {
    const raw = (isRecord(input) ? input : {}) as Partial<Record<keyof RiskInput, unknown>>;
    const tool = typeof raw.tool === 'string' ? raw.tool : '';
    const args = isRecord(raw.args) ? raw.args : {};
    const targetText = typeof raw.target_text === 'string' ? raw.target_text : null;
    const foreground = typeof raw.foreground_package === 'string' ? raw.foreground_package : null;
    const role = typeof raw.target_role === 'string' ? raw.target_role.trim().toLowerCase() : null;
    const screenText = Array.isArray(raw.screen_text) ? (raw.screen_text as readonly unknown[]) : null;
    const toolReading = this.readTool(tool);
    const { name, label: toolLabel } = toolReading;

    const high: string[] = [];
    const low: string[] = [];

    const hasTarget = targetText !== null && hasVisibleText(targetText);
    this.checkTarget(targetText, high, low);
    if (ACTIVATING_TOOL_SET.has(name) && !hasTarget) {
      high.push(
        `${toolLabel} activates an element, and no target text says which one (it could be Send or Pay); ` +
          'resolve it from the latest observation and pass its text',
      );
    }

    let refusal: string | null = null;
    if (SCREEN_TOOLS.has(name)) {
      const fg = this.readForeground(foreground);
      if (fg.kind === 'unknown') refusal = `foreground app unknown: ${toolLabel} acts on the screen, and ${fg.why}`;
      else
        this.checkForeground(
          { pkg: fg.pkg, reading: fg.reading, name, targetText: hasTarget ? targetText : null, role, screenText },
          apps,
          high,
          low,
        );
    } else {
      low.push(toolReading.offScreen);
    }

    const actions = this.checkAction(toolReading, args, hasTarget);
    if (actions.length > 0) high.push(...actions);
    else low.push(toolReading.changesNothing);

    if (refusal !== null) return { level: 'refused', reasons: cap([refusal, ...high]), fix: FOREGROUND_PACKAGE_FIX };
    if (high.length > 0) return { level: 'high', reasons: cap(high) };
    return { level: 'low', reasons: cap(low) };
  }

  private checkTarget(targetText: string | null, high: string[], low: string[]): void {
    if (targetText === null || targetText.trim() === '') {
      low.push('no target text to check');
      return;
    }
    if (!hasVisibleText(targetText)) {
      low.push('target text has only invisible or control characters, so it names nothing');
      return;
    }
    let text = targetText;
    if (text.length > MAX_TARGET_TEXT_LENGTH) {
      high.push(
        `target text is ${text.length} characters long; only the first ${MAX_TARGET_TEXT_LENGTH} were read, ` +
          'and no element label is that long',
      );
      text = text.slice(0, MAX_TARGET_TEXT_LENGTH);
    }
    // Only text long enough to fold past the bound is measured, a table lookup per character (nothing is folded).
    if (text.length * MAX_FOLD_GROWTH > MAX_FOLDED_TARGET_TEXT_LENGTH) {
      const cut = foldCut(text, MAX_FOLDED_TARGET_TEXT_LENGTH).at;
      if (cut < text.length) {
        high.push(
          `target text is over ${MAX_FOLDED_TARGET_TEXT_LENGTH} characters once normalised (NFKC) character by ` +
            `character; only its start, up to ${MAX_FOLDED_TARGET_TEXT_LENGTH} of them, was read, and no element label is that long`,
        );
        text = text.slice(0, cut);
      }
    }
    const matches = this.words.match(text);
    // A look-alike word that spells a lexicon word is already named by its match, which says how it was written.
    const spelled = matches.some((m) => m.lookalike);
    for (const d of findDisguises(text)) if (!(spelled && d.kind === 'mixed-script')) high.push(disguiseReason(d));
    if (matches.length === 0) {
      if (text === targetText) low.push('no high-risk word in the target text');
      return;
    }
    for (const m of matches) {
      let reason = this.targetReasons.get(m);
      if (reason === undefined) this.targetReasons.set(m, (reason = wordReason('target text', m)));
      high.push(reason);
    }
  }

  /**
   * Pushes exactly one reason, to `high` or to `low`, for the app in front. In order: the tenant's lists; the
   * built-in finance list and package words; a Settings app judged by what the tap does; another system-control app;
   * the screen's own text (an IBAN, an account number, a balance); else low.
   */
  private checkForeground(
    screen: ScreenContext,
    apps: TenantAppLists | undefined,
    high: string[],
    low: string[],
  ): void {
    const { pkg } = screen;
    const tenant = apps?.verdict(pkg);
    if (tenant === 'finance') {
      high.push(`foreground app ${quote(pkg)} is a payment, banking, wallet or exchange app (listed by the tenant)`);
      return;
    }
    const { reading } = screen;
    if (reading.kind === 'finance' && tenant !== 'not_finance') {
      high.push(reading.reason);
      return;
    }
    if (reading.kind === 'system') {
      const settings = reading.settings ? settingsTap(screen) : null;
      if (settings?.low === true) low.push(settings.reason);
      else
        high.push(
          settings?.reason ??
            `foreground app ${quote(pkg)} is ${reading.app}, where screen actions change system settings`,
        );
      return;
    }
    if (tenant === 'not_finance') {
      low.push(`foreground app ${quote(pkg)} is not a payment, banking, wallet or exchange app (listed by the tenant)`);
      return;
    }
    const evidence = screen.screenText === null ? null : financialScreenEvidence(screen.screenText);
    if (evidence !== null) {
      high.push(
        `foreground app ${quote(pkg)} is treated as a payment, banking, wallet or exchange app: its screen shows ${evidence}`,
      );
      return;
    }
    low.push(screen.screenText === null ? reading.low : reading.lowScreenChecked);
  }

  /** {@link Foreground} of `value` (memoised, for values that could be a package name). */
  private readForeground(value: string | null): Foreground {
    if (value === null) return MISSING_FOREGROUND;
    const cacheable = value.length <= MAX_PACKAGE_LENGTH;
    let fg = cacheable ? this.foregrounds.get(value) : undefined;
    if (fg === undefined) {
      const pkg = value.trim();
      if (pkg === '') fg = { kind: 'unknown', why: 'foreground_package is empty' };
      else if (pkg.length > MAX_PACKAGE_LENGTH || !ANDROID_PACKAGE.test(pkg)) {
        fg = { kind: 'unknown', why: `foreground_package ${quote(value)} is not an Android package name` };
      } else fg = { kind: 'known', pkg, reading: this.readPackage(pkg) };
      if (cacheable) this.foregrounds.set(value, fg);
    }
    return fg;
  }

  /** What the built-in lists and the package's words say of `pkg`. */
  private readPackage(pkg: string): PackageReading {
    const lower = pkg.toLowerCase();
    const quoted = quote(pkg);
    const low = `foreground app ${quoted} is not a payment, banking, wallet, exchange or system-settings app`;
    const lowReasons = { low, lowScreenChecked: `${low}, and its screen shows no account number, IBAN or balance` };
    const listed = lookupApp(this.paymentApps, lower);
    if (listed !== undefined) {
      return {
        kind: 'finance',
        reason: `foreground app ${quoted} is a payment, banking, wallet or exchange app (${listed})`,
        ...lowReasons,
      };
    }
    const system = lookupApp(SYSTEM_APPS, lower);
    if (system !== undefined) return { kind: 'system', app: system, settings: lookupIn(SETTINGS_APP_SET, lower) };
    const word = pkg
      .split('.')
      .flatMap((segment) => segment.split(PACKAGE_WORD_SPLIT))
      .map((w) => w.toLowerCase())
      .find((w) => PACKAGE_WORDS.has(w));
    if (word !== undefined) {
      return {
        kind: 'finance',
        reason: `foreground app ${quoted} is a payment, banking, wallet or exchange app (its name has the word ${quote(word)})`,
        ...lowReasons,
      };
    }
    return { kind: 'other', ...lowReasons };
  }

  /** What the tool's name says (memoised). */
  private readTool(tool: string): ToolReading {
    const cached = this.tools.get(tool);
    if (cached) return cached;
    const name = tool.slice(tool.lastIndexOf('.') + 1).toLowerCase();
    const label = tool === '' ? 'the tool (no name given)' : `tool ${quote(tool)}`;
    const reasons: string[] = [];
    const toolWords = identifierWords(tool);
    for (const meaning of deviceActions(toolWords)) {
      if (!(SETTING_TOOL_SET.has(name) && meaning === 'a system setting')) reasons.push(`${label} means ${meaning}`);
    }
    for (const m of this.words.match(toolWords.join(' '))) reasons.push(wordReason(label, m));
    const reading: ToolReading = {
      name,
      label,
      reasons,
      offScreen: `foreground app not checked: ${label} does not act on the screen`,
      changesNothing: `${label} does not change settings, power, airplane mode, device admin or installed apps`,
    };
    // Bounded, so a caller sending ever-new names cannot grow it without limit; clearing keeps results identical.
    if (this.tools.size >= MAX_CACHED_TOOL_NAMES) this.tools.clear();
    this.tools.set(tool, reading);
    return reading;
  }

  private checkAction(tool: ToolReading, args: Readonly<Record<string, unknown>>, hasTarget: boolean): string[] {
    const { name, label: toolLabel } = tool;
    const found: string[] = [];
    if (SETTING_TOOL_SET.has(name)) {
      const setting = ['setting', 'setting_name', 'name'].map((k) => args[k]).find((v) => typeof v === 'string');
      found.push(`${toolLabel} changes a system setting${typeof setting === 'string' ? ` (${quote(setting)})` : ''}`);
    }
    for (const r of tool.reasons) found.push(r);

    if (KEY_TOOL_SET.has(name)) {
      const key = KEY_ARGUMENTS.map((k) => args[k]).find((v) => typeof v === 'string' || typeof v === 'number');
      const id =
        typeof key === 'number'
          ? String(key)
          : typeof key === 'string'
            ? key
                .trim()
                .toUpperCase()
                .replace(/^KEYCODE_/, '')
            : '';
      const rule = KEYS[id];
      if (rule?.effect === 'high') found.push(`key ${rule.name} ${rule.does}`);
      if (rule?.effect === 'activates' && !hasTarget) {
        found.push(`key ${rule.name} ${rule.does}, and no target_text says what that is`);
      }
    }

    try {
      found.push(...argumentActions(args));
    } catch {
      found.push('the arguments could not be read, so what they change is unknown');
    }
    return found;
  }
}

/** Device actions named by argument names and identifier-like argument values; free-text arguments are skipped. */
function argumentActions(args: Readonly<Record<string, unknown>>): string[] {
  const found: string[] = [];
  // Breadth first, so reasons follow the arguments' order; bounded in depth and in nodes visited.
  const queue: { value: unknown; path: string; depth: number; content: boolean }[] = [
    { value: args, path: '', depth: 0, content: false },
  ];
  let unread = false;
  for (let next = 0; next < queue.length; next++) {
    const { value, path, depth, content } = queue[next] as (typeof queue)[number];
    if (typeof value === 'string') {
      if (content || value.length > MAX_IDENTIFIER_LENGTH || !MAY_NAME_ACTION.test(value)) continue;
      const reading = readIdentifier(value);
      if (!reading.identifier) continue;
      for (const meaning of reading.actions) {
        found.push(`argument ${quote(path, 80)} = ${quote(value)} means ${meaning}`);
      }
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= MAX_ARG_DEPTH) {
      unread = true;
      continue;
    }
    const isArray = Array.isArray(value);
    for (const key of Object.keys(value)) {
      if (queue.length >= MAX_ARG_NODES) {
        unread = true;
        break;
      }
      const child = (value as Record<string, unknown>)[key];
      const childPath = isArray ? `${path}[${key}]` : path === '' ? key : `${path}.${key}`;
      let isContent = content;
      if (!isArray) {
        const reading = readIdentifier(key);
        for (const meaning of reading.actions) found.push(`argument ${quote(childPath, 80)} means ${meaning}`);
        isContent ||= reading.content;
      }
      queue.push({ value: child, path: childPath, depth: depth + 1, content: isContent });
    }
  }
  if (unread) {
    found.push(
      `the arguments nest deeper than ${MAX_ARG_DEPTH} levels or hold more than ${MAX_ARG_NODES} values, so not all of them were read`,
    );
  }
  return found.length < 2 ? found : [...new Set(found)];
}

/** The first {@link MAX_REASONS} distinct reasons, in order, each cut to {@link MAX_REASON_LENGTH} characters. */
function cap(reasons: readonly string[]): string[] {
  const out: string[] = [];
  for (const r of reasons) {
    if (out.includes(r)) continue;
    out.push(r);
    if (out.length === MAX_REASONS) break;
  }
  for (let i = 0; i < out.length; i++) {
    const r = out[i]!;
    if (r.length > MAX_REASON_LENGTH) out[i] = `${r.slice(0, MAX_REASON_LENGTH - 1)}…`;
  }
  return out;
}

const DEFAULT_CLASSIFIER = new RiskClassifier();
const CONFIGURED = new WeakMap<RiskClassifierOptions, RiskClassifier>();

/**
 * Classifies one tool call with the built-in lexicon and app lists (see {@link RiskClassifier.classify}). With
 * `options`, the classifier built for that options object is cached, so pass the same object each time. `apps` are
 * the tenant's own finance and not-finance lists.
 */
export function classifyRisk(input: RiskInput, options?: RiskClassifierOptions, apps?: TenantAppLists): RiskVerdict {
  if (options === undefined) return DEFAULT_CLASSIFIER.classify(input, apps);
  let classifier = CONFIGURED.get(options);
  if (!classifier) {
    classifier = new RiskClassifier(options);
    CONFIGURED.set(options, classifier);
  }
  return classifier.classify(input, apps);
}
