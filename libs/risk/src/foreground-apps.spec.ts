import { PAYMENT_APPS } from './foreground-apps.js';
import { classifyRisk } from './risk-classifier.js';

const ANDROID_PACKAGE = /^[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)+$/;
const tapIn = (pkg: string) =>
  classifyRisk({ tool: 'device.tap', args: {}, target_text: 'Open', foreground_package: pkg });

describe('the finance app list', () => {
  it('holds at least 200 apps', () => {
    expect(PAYMENT_APPS.length).toBeGreaterThanOrEqual(200);
  });

  it('has no package twice (case-insensitively)', () => {
    const seen = new Map<string, string>();
    const repeated = PAYMENT_APPS.filter((a) => {
      const key = a.package.toLowerCase();
      const again = seen.has(key);
      seen.set(key, a.app);
      return again;
    }).map((a) => a.package);
    expect(repeated).toEqual([]);
  });

  it('gives every app an Android package name, a name and a region', () => {
    const bad = PAYMENT_APPS.filter(
      (a) => !ANDROID_PACKAGE.test(a.package) || a.app.trim() === '' || a.region.trim() === '',
    );
    expect(bad).toEqual([]);
  });

  it.each([
    'Brazil',
    'Russia',
    'Poland',
    'Ukraine',
    'Indonesia',
    'India',
    'China',
    'Japan',
    'South Korea',
    'Africa',
    'Nigeria',
    'Europe',
  ])('covers %s', (region) => {
    expect(PAYMENT_APPS.filter((a) => a.region === region).length).toBeGreaterThanOrEqual(2);
  });

  it('makes a tap in every listed app high, naming the app', () => {
    const low = PAYMENT_APPS.filter((a) => tapIn(a.package).level !== 'high');
    expect(low).toEqual([]);
    expect(tapIn('ru.sberbankmobile').reasons).toContain(
      'foreground app "ru.sberbankmobile" is a payment, banking, wallet or exchange app (Sberbank)',
    );
  });

  it.each([
    ['com.example.banco.movil', 'banco'],
    ['fr.example.banque', 'banque'],
    ['tr.example.bankasi', 'bankasi'],
    ['com.example.broker', 'broker'],
    ['com.example.mobilemoney', 'mobilemoney'],
    ['in.example.upi', 'upi'],
  ])('recognises %s by the word %s in its name', (pkg, word) => {
    expect(tapIn(pkg).reasons).toContain(
      `foreground app "${pkg}" is a payment, banking, wallet or exchange app (its name has the word "${word}")`,
    );
  });

  it.each(['com.example.bancroft', 'com.example.upistream', 'com.example.notes'])('leaves %s low', (pkg) => {
    expect(tapIn(pkg).level).toBe('low');
  });
});
