import { classifyRisk, type RiskInput } from './risk-classifier.js';

const SETTINGS = 'com.android.settings';
const inSettings = (target_text: string | null, target_role: string | null = null, tool = 'device.tap'): RiskInput => ({
  tool,
  args: {},
  target_text,
  target_role,
  foreground_package: SETTINGS,
});

describe('Settings: a tap is judged by what it does', () => {
  describe('information pages are low', () => {
    it.each<[string, string | null]>([
      ['About phone', 'list_item'],
      ['Battery', 'list_item'],
      ['Battery\n85% - about 1 day left', 'list_item'],
      ['Storage', 'list_item'],
      ['Storage\n42% used - 74 GB free', null],
      ['Display', 'list_item'],
      ['Android version', 'list_item'],
      ['ANDROID VERSION', 'text'],
      ['Über das Telefon', 'list_item'],
      ['Akku', 'list_item'],
      ['À propos du téléphone', 'list_item'],
      ['Acerca del teléfono', null],
      ['Armazenamento', 'list_item'],
      ['О телефоне', 'list_item'],
      ['Tentang ponsel', 'list_item'],
    ])('%j (role %s)', (text, role) => {
      const verdict = classifyRisk(inSettings(text, role));
      expect(verdict.level).toBe('low');
      expect(verdict.reasons.join('\n')).toMatch(/opens a page of information/);
    });
  });

  describe('what changes the device stays high', () => {
    it.each<[string, string | null, RegExp]>([
      ['Wi-Fi', 'switch', /the target is a switch: tapping it changes a setting/],
      ['Battery saver', 'switch', /switch/],
      ['Battery', 'switch', /switch/],
      ['Display', 'checkbox', /checkbox/],
      ['Reset options', 'list_item', /not known to only open a page of information/],
      ['Erase all data (factory reset)', 'button', /./],
      ['Uninstall', 'button', /./],
      ['Accounts', 'list_item', /not known to only open a page of information/],
      ['Passwords & accounts', 'list_item', /not known/],
      ['Security', 'list_item', /not known/],
      ['Device admin apps', 'list_item', /not known/],
      ['Build number', 'list_item', /not known/],
      ['Developer options', 'list_item', /not known/],
      ['Apps', 'list_item', /not known/],
    ])('%j (role %s)', (text, role, reason) => {
      const verdict = classifyRisk(inSettings(text, role));
      expect(verdict.level).toBe('high');
      expect(verdict.reasons.join('\n')).toMatch(reason);
    });

    it('a tap with no target text', () => {
      expect(classifyRisk(inSettings(null, 'list_item')).level).toBe('high');
    });

    it.each(['device.long_press', 'device.swipe', 'device.type_text', 'device.double_tap'])(
      '%s, even on an information page',
      (tool) => {
        const verdict = classifyRisk(inSettings('Battery', 'list_item', tool));
        expect(verdict.level).toBe('high');
        expect(verdict.reasons.join('\n')).toMatch(/is Settings, where a .* can change a setting/);
      },
    );

    it('a look-alike label in another script (Cyrillic а in "Bаttery")', () => {
      expect(classifyRisk(inSettings('B\u0430ttery', 'list_item')).level).toBe('high');
    });

    it('a tap on an information label in quick settings (every tile is a toggle)', () => {
      const verdict = classifyRisk({
        ...inSettings('Battery', 'list_item'),
        foreground_package: 'com.android.systemui',
      });
      expect(verdict.level).toBe('high');
    });
  });
});
