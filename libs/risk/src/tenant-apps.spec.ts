import { classifyRisk, RiskClassifier } from './risk-classifier.js';
import { TenantAppLists, tenantAppListProblems } from './tenant-apps.js';

const tap = (foreground_package: string, screen_text: string[] | null = null) => ({
  tool: 'device.tap',
  args: {},
  target_text: 'Open',
  foreground_package,
  screen_text,
});

describe('a tenant’s finance app lists', () => {
  const apps = new TenantAppLists({
    finance: ['com.x.kasse', 'com.acme.*'],
    not_finance: ['com.y.notes', 'com.acme.notes', 'com.paypal.android.p2pmobile'],
  });

  it('makes a listed finance app high, and the packages under it', () => {
    expect(classifyRisk(tap('com.x.kasse'), undefined, apps).reasons).toContain(
      'foreground app "com.x.kasse" is a payment, banking, wallet or exchange app (listed by the tenant)',
    );
    expect(classifyRisk(tap('com.x.kasse.beta'), undefined, apps).level).toBe('high');
    expect(classifyRisk(tap('com.x.kasse'))).toMatchObject({ level: 'low' });
  });

  it('lets the most specific entry win', () => {
    expect(classifyRisk(tap('com.acme.pay'), undefined, apps).level).toBe('high');
    expect(classifyRisk(tap('com.acme.notes.beta'), undefined, apps).level).toBe('low');
  });

  it('keeps a not-finance app low even when its screen shows a balance or the built-in list names it', () => {
    expect(classifyRisk(tap('com.y.notes', ['Balance', '€12.00'])).level).toBe('high');
    expect(classifyRisk(tap('com.y.notes', ['Balance', '€12.00']), undefined, apps).reasons).toContain(
      'foreground app "com.y.notes" is not a payment, banking, wallet or exchange app (listed by the tenant)',
    );
    expect(classifyRisk(tap('com.paypal.android.p2pmobile'), undefined, apps).level).toBe('low');
  });

  it('does not let a not-finance entry lower a Settings app or a risky label', () => {
    const lists = new TenantAppLists({ finance: [], not_finance: ['com.android.settings'] });
    expect(classifyRisk({ ...tap('com.android.settings'), target_text: 'Reset options' }, undefined, lists).level).toBe(
      'high',
    );
    expect(classifyRisk({ ...tap('com.y.notes'), target_text: 'Send' }, undefined, apps).level).toBe('high');
  });

  it('works with a configured classifier too', () => {
    const classifier = new RiskClassifier({ extraHighRiskPackages: ['com.z.pay'] });
    expect(classifier.classify(tap('com.x.kasse'), apps).level).toBe('high');
    expect(classifier.classify(tap('com.x.kasse')).level).toBe('low');
  });

  describe('bad lists are refused with the fix', () => {
    it.each<[string, { finance: string[]; not_finance: string[] }, RegExp]>([
      [
        'a name that is not a package',
        { finance: ['my bank'], not_finance: [] },
        /--finance entry "my bank" is not an Android package name; write it as the app's package/,
      ],
      [
        'a wildcard in the middle',
        { finance: [], not_finance: ['com.*.notes'] },
        /--not-finance entry "com\.\*\.notes"/,
      ],
      [
        'a package in both lists',
        { finance: ['com.x.kasse'], not_finance: ['COM.X.KASSE'] },
        /"com\.x\.kasse" is in both --finance and --not-finance; keep each package in one list/,
      ],
      [
        'too many packages',
        { finance: Array.from({ length: 501 }, (_, i) => `com.x.a${i}`), not_finance: [] },
        /at most 500/,
      ],
    ])('%s', (_, lists, message) => {
      expect(tenantAppListProblems(lists).join(' ')).toMatch(message);
      expect(() => new TenantAppLists(lists)).toThrow(message);
    });

    it('accepts empty lists', () => {
      expect(tenantAppListProblems({ finance: [], not_finance: [] })).toEqual([]);
      expect(new TenantAppLists({ finance: [], not_finance: [] }).empty).toBe(true);
    });
  });
});
