/**
 * Tools and arguments that act on the device itself: settings, power, airplane mode, device admin, installed apps.
 * Data only; `risk-classifier.ts` compiles it at load. Tools are matched by the part of their name after the last
 * dot (`device.tap` and `acme.tap` are both `tap`), so another extension's screen tools are judged the same way.
 */

/**
 * Tools that act on whatever screen is in front. They need the foreground package (a call without a valid one is
 * refused) and are high when that app is a payment or system-control app.
 */
export const SCREEN_ACTION_TOOLS: readonly string[] = [
  'tap',
  'long_press',
  'double_tap',
  'type_text',
  'swipe',
  'scroll',
  'press_key',
];

/**
 * Screen tools that activate an element (a tap on Send sends). Without a target text nothing says which element, so
 * they are high: a caller resolves the element from the latest observation and passes its text.
 */
export const ACTIVATING_TOOLS: readonly string[] = ['tap', 'long_press', 'double_tap'];

/** Tools that always change a system setting. */
export const SETTING_TOOLS: readonly string[] = ['toggle_setting', 'set_setting', 'change_setting', 'put_setting'];

/** Tools whose key argument is checked, and the argument names that may hold the key. */
export const KEY_TOOLS: readonly string[] = ['press_key'];
export const KEY_ARGUMENTS: readonly string[] = ['key', 'key_code', 'keycode', 'key_name'];

/**
 * Android keys by name (without the `KEYCODE_` prefix) and by key code. `high` keys act on the device or place a
 * call; `activates` keys press whatever has focus, so they are judged by the target text, and are high without one.
 */
export interface KeyRule {
  readonly name: string;
  readonly effect: 'high' | 'activates';
  /** What pressing it does, as reasons say it. */
  readonly does: string;
}

const POWER: KeyRule = { name: 'POWER', effect: 'high', does: 'turns the screen off or opens the power menu' };
const SOFT_SLEEP: KeyRule = { name: 'SOFT_SLEEP', effect: 'high', does: 'puts the device to sleep' };
const CALL: KeyRule = { name: 'CALL', effect: 'high', does: 'places a phone call' };
const ENTER: KeyRule = { name: 'ENTER', effect: 'activates', does: 'presses whatever has focus' };
const NUMPAD_ENTER: KeyRule = { name: 'NUMPAD_ENTER', effect: 'activates', does: 'presses whatever has focus' };
const DPAD_CENTER: KeyRule = { name: 'DPAD_CENTER', effect: 'activates', does: 'presses whatever has focus' };

export const KEYS: Readonly<Record<string, KeyRule>> = {
  POWER,
  '26': POWER,
  SOFT_SLEEP,
  '276': SOFT_SLEEP,
  CALL,
  '5': CALL,
  ENTER,
  '66': ENTER,
  NUMPAD_ENTER,
  '160': NUMPAD_ENTER,
  DPAD_CENTER,
  '23': DPAD_CENTER,
};

/**
 * What a tool name or an identifier-like argument (`airplane_mode`, `android.intent.action.REBOOT`, `factoryReset`)
 * means when it acts on the device. Identifiers are split into lower-case words at dots, underscores, hyphens,
 * digits and case changes; a phrase matches consecutive words. Free text (anything with a space) is content, not an
 * action, and is not read here.
 */
export const DEVICE_ACTION_PHRASES: Readonly<Record<string, readonly string[]>> = {
  'power off or reboot': ['power off', 'poweroff', 'power down', 'shutdown', 'shut down', 'reboot'],
  'airplane mode': ['airplane', 'aeroplane', 'airplanemode', 'flight mode', 'flightmode'],
  'device admin': ['device admin', 'deviceadmin', 'device owner', 'device policy'],
  'install or uninstall apps': ['install', 'uninstall', 'reinstall', 'install package', 'delete package'],
  'factory reset or wipe': ['factory reset', 'factoryreset', 'master clear', 'masterclear', 'wipe', 'wipe data'],
  'a system setting': ['toggle setting', 'set setting', 'write settings', 'put setting', 'change setting'],
};

/**
 * Arguments that hold free text the tool types or sends (content, not an action): their values are never read as
 * device actions, however they are spelled. Matched against the argument name's words.
 */
export const CONTENT_ARGUMENT_WORDS: readonly string[] = [
  'text',
  'message',
  'body',
  'content',
  'query',
  'caption',
  'subject',
  'comment',
  'note',
  'title',
  'description',
  'label',
];

/**
 * Settings apps, where a tap is judged by what it does: a tap that opens an information page is low, anything else
 * stays high (see {@link INFORMATION_PAGES}). Other system-control apps (quick settings, installer, permission
 * dialogs) stay high for every action. A listed package also covers the packages under it.
 */
export const SETTINGS_APPS: readonly string[] = ['com.android.settings', 'com.samsung.android.settings'];

/** Tools whose action on a Settings screen is judged by its target ({@link INFORMATION_PAGES}). */
export const SETTINGS_JUDGED_TOOLS: readonly string[] = ['tap'];

/** Element roles that flip a setting when tapped, whatever their label says. */
export const TOGGLE_ROLES: readonly string[] = ['switch', 'toggle', 'checkbox', 'radio', 'radio_button'];

/**
 * Labels of Settings entries that only open a page of information (about the phone, battery, storage, display, the
 * Android version). A tap on one of them (the label's first line, compared case- and accent-insensitively, whole) is
 * low unless the element is a switch. "Build number" is deliberately absent: tapping it seven times turns on the
 * developer options.
 */
export const INFORMATION_PAGES: readonly string[] = [
  // English
  'about phone',
  'about device',
  'about tablet',
  'battery',
  'battery usage',
  'storage',
  'display',
  'android version',
  'software information',
  'device information',
  'phone status',
  'status',
  'legal information',
  'hardware information',
  'memory',
  'model',
  // German
  'über das telefon',
  'telefoninfo',
  'akku',
  'speicher',
  'android-version',
  // French
  'à propos du téléphone',
  'batterie',
  'stockage',
  'affichage',
  "version d'android",
  // Spanish
  'acerca del teléfono',
  'información del teléfono',
  'batería',
  'almacenamiento',
  'pantalla',
  'versión de android',
  // Portuguese
  'sobre o telefone',
  'bateria',
  'armazenamento',
  'tela',
  'versão do android',
  // Italian
  'info telefono',
  'memoria',
  'versione di android',
  // Russian
  'о телефоне',
  'батарея',
  'хранилище',
  'память',
  'экран',
  'версия android',
  // Polish
  'informacje o telefonie',
  'pamięć',
  'wyświetlacz',
  // Indonesian
  'tentang ponsel',
  'baterai',
  'penyimpanan',
  'layar',
  'versi android',
];
