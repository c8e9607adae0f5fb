// The classifier keeps recent readings of labels, packages and argument names; these hold that a kept reading is
// exactly what computing it again gives, and that the caches stay bounded.
import { Lru } from './lru.js';
import { RiskClassifier, classifyRisk, type RiskInput } from './risk-classifier.js';

describe('Lru', () => {
  it('never holds more than its bound', () => {
    const cache = new Lru<number, number>(10);
    for (let i = 0; i < 1000; i++) {
      cache.set(i, i * 2);
      expect(cache.size).toBeLessThanOrEqual(10);
    }
    expect(cache.get(999)).toBe(1998);
    expect(cache.get(0)).toBeUndefined();
  });

  it('keeps an entry that is used while many others come and go', () => {
    const cache = new Lru<string, string>(8);
    cache.set('kept', 'value');
    for (let i = 0; i < 100; i++) {
      cache.set(`other ${i}`, 'x');
      expect(cache.get('kept')).toBe('value');
    }
  });

  it('overwrites a key without growing', () => {
    const cache = new Lru<string, number>(4);
    cache.set('a', 1);
    cache.set('a', 2);
    expect(cache.get('a')).toBe(2);
    expect(cache.size).toBe(1);
  });
});

describe('the classifier with warm caches', () => {
  const calls: RiskInput[] = [
    { tool: 'device.tap', args: { ref: 'e1' }, target_text: 'Confirm transfer', foreground_package: 'com.example.bank' },
    { tool: 'device.tap', args: { ref: 'e2' }, target_text: 'Send', foreground_package: 'com.example.messages' },
    { tool: 'device.tap', args: {}, target_text: 'Sеnd', foreground_package: 'com.paypal.android.p2pmobile' },
    { tool: 'device.type_text', args: { text: 'airplane_mode' }, target_text: '送信', foreground_package: 'org.acme.notes' },
    { tool: 'device.toggle_setting', args: { setting: 'airplane_mode', items: [{ power_off: 'factory_reset' }] } },
    { tool: 'device.press_key', args: { key: 'KEYCODE_ENTER' }, foreground_package: 'com.android.settings' },
    { tool: 'device.tap', args: {}, target_text: `${'Weather '.repeat(40)}pay`, foreground_package: 'com.example.x' },
    { tool: 'ext.export', args: { message_body: 'uninstall_app', uninstall_app: true } },
  ];

  it('gives the same verdicts as a fresh classifier, again and after the caches turned over', () => {
    const fresh = () => calls.map((c) => new RiskClassifier().classify(c));
    const expected = fresh();
    const shared = new RiskClassifier();
    expect(calls.map((c) => shared.classify(c))).toEqual(expected);
    expect(calls.map((c) => shared.classify(c))).toEqual(expected);
    // Thousands of other labels, packages and argument names: every cache turns over several times.
    for (let i = 0; i < 6000; i++) {
      shared.classify({
        tool: 'device.tap',
        args: { [`key_${i}`]: `value_${i}` },
        target_text: `Label ${i}`,
        foreground_package: `com.example.app${i}`,
      });
    }
    expect(calls.map((c) => shared.classify(c))).toEqual(expected);
    expect(calls.map((c) => classifyRisk(c))).toEqual(expected);
  });

  it('hands out verdicts the caller may change without changing later ones', () => {
    const [first] = calls;
    const a = classifyRisk(first!);
    (a.reasons as string[]).push('changed');
    (a.reasons as string[])[0] = 'changed';
    expect(classifyRisk(first!).reasons).not.toContain('changed');
  });
});
