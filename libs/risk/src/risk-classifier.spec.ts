import {
  classifyRisk,
  FOREGROUND_PACKAGE_FIX,
  MAX_REASON_LENGTH,
  MAX_REASONS,
  MAX_TARGET_TEXT_LENGTH,
  RiskClassifier,
  type RiskInput,
} from './risk-classifier.js';

const MESSAGES = 'com.example.messages';

function call(overrides: Partial<RiskInput> = {}): RiskInput {
  return { tool: 'device.tap', args: {}, target_text: 'Open', foreground_package: MESSAGES, ...overrides };
}

describe('classifyRisk', () => {
  describe('low verdicts', () => {
    it('say what was checked', () => {
      expect(classifyRisk(call({ target_text: 'Open' }))).toEqual({
        level: 'low',
        reasons: [
          'no high-risk word in the target text',
          'foreground app "com.example.messages" is not a payment, banking, wallet, exchange or system-settings app',
          'tool "device.tap" does not change settings, power, airplane mode, device admin or installed apps',
        ],
      });
    });

    it('say when there was no target text and the tool does not act on the screen', () => {
      expect(classifyRisk({ tool: 'device.list_contacts', args: {} })).toEqual({
        level: 'low',
        reasons: [
          'no target text to check',
          'foreground app not checked: tool "device.list_contacts" does not act on the screen',
          'tool "device.list_contacts" does not change settings, power, airplane mode, device admin or installed apps',
        ],
      });
    });
  });

  describe('a tap with no target text', () => {
    it.each([
      ['coordinates', 'device.tap', { x: 540, y: 600 }, null],
      ['a ref', 'device.tap', { ref: 'e4' }, null],
      ['an empty text', 'device.long_press', { ref: 'e4' }, '  '],
      ['another extension', 'acme.double_tap', { x: 1, y: 1 }, null],
    ])('is high by %s: nothing says it is not Send', (_by, tool, args, target_text) => {
      expect(classifyRisk({ tool, args, target_text, foreground_package: MESSAGES })).toEqual({
        level: 'high',
        reasons: [
          `tool "${tool}" activates an element, and no target text says which one (it could be Send or Pay); ` +
            'resolve it from the latest observation and pass its text',
        ],
      });
    });

    it('leaves swipes and typing into the focused field to the other checks', () => {
      expect(
        classifyRisk({ tool: 'device.swipe', args: { direction: 'up' }, foreground_package: MESSAGES }).level,
      ).toBe('low');
      expect(classifyRisk({ tool: 'device.type_text', args: { text: 'hi' }, foreground_package: MESSAGES }).level).toBe(
        'low',
      );
    });
  });

  describe('target text', () => {
    it('names the word, its meaning and its languages', () => {
      expect(classifyRisk(call({ target_text: 'Confirm transfer' }))).toEqual({
        level: 'high',
        reasons: [
          'target text means confirm: "confirm" (English)',
          'target text means transfer money: "transfer" (English, Turkish and Indonesian)',
        ],
      });
    });

    it('reports a phrase once, not also the word inside it', () => {
      expect(classifyRisk(call({ target_text: 'Place order' })).reasons).toEqual([
        'target text means buy or order: "place order" (English)',
      ]);
    });

    it.each([
      ['full-width letters', 'ＳＥＮＤ'],
      ['a zero-width space inside the word', 's\u200Bend'],
      ['a soft hyphen inside the word', 'se\u00ADnd'],
      ['a right-to-left override around the word', '\u202Esend\u202C'],
      ['upper case and punctuation', '[SEND!]'],
      ['a word among others', 'Tap here to send the message'],
    ])('matches through %s', (_name, text) => {
      expect(classifyRisk(call({ target_text: text })).reasons).toContain('target text means send: "send" (English)');
    });

    it('matches with or without diacritics', () => {
      for (const text of ['Envíar', 'envíar', 'enviar', 'ENVIAR']) {
        expect(classifyRisk(call({ target_text: text })).reasons).toContain(
          'target text means send: "enviar" (Spanish and Portuguese)',
        );
      }
    });

    it('reads Turkish İ and ı whichever way the text is cased', () => {
      for (const text of ['SİL', 'sil', 'SATIN AL', 'satın al'])
        expect(classifyRisk(call({ target_text: text })).level).toBe('high');
    });

    it('reads Cyrillic look-alike letters inside a Latin word as Latin, and says so', () => {
      expect(classifyRisk(call({ target_text: '\u0405\u0435nd' })).reasons).toEqual([
        'target text means send: "send" (English), written with look-alike letters from another script',
      ]);
    });

    it('reads a word spelled only with Cyrillic look-alikes of Latin letters as Latin', () => {
      expect(classifyRisk(call({ target_text: '\u0420\u0430\u0443' })).reasons).toEqual([
        'target text means pay: "pay" (English), written with look-alike letters from another script',
      ]);
    });

    it('does not read ordinary Russian as Latin', () => {
      expect(classifyRisk(call({ target_text: 'Сорт' })).level).toBe('low');
    });

    it.each([
      'Sender',
      'Postcode',
      'Repayment history',
      'Deleted items',
      'Confirmation number',
      'Resent',
      'Reposted',
      'Unsubscribed',
      'Paypal balance',
      'Booking.com',
      'e-book',
      'Sign-in',
      'send_money',
    ])('matches whole words only: "%s" is low', (text) => {
      expect(classifyRisk(call({ target_text: text })).level).toBe('low');
    });

    it('is high when the target text is too long to be a label, and says why', () => {
      const text = 'a '.repeat(MAX_TARGET_TEXT_LENGTH);
      expect(classifyRisk(call({ target_text: text })).reasons).toEqual([
        `target text is ${text.length} characters long; only the first ${MAX_TARGET_TEXT_LENGTH} were read, and no element label is that long`,
      ]);
    });
  });

  describe('foreground app', () => {
    it.each([
      ['com.paypal.android.p2pmobile', 'PayPal'],
      ['com.venmo', 'Venmo'],
      ['com.google.android.apps.walletnfcrel', 'Google Wallet'],
      ['com.revolut.revolut', 'Revolut'],
      ['com.coinbase.android', 'Coinbase'],
      ['com.binance.dev', 'Binance'],
      ['com.chase.sig.android', 'Chase'],
      ['com.wf.wellsfargomobile', 'Wells Fargo'],
      ['com.bankofamerica.cashpromobile', 'Bank of America'],
      ['de.number26.android', 'N26'],
      ['com.transferwise.android', 'Wise'],
      ['com.squareup.cash', 'Cash App'],
      ['jp.co.rakuten_bank.rakutenbank', 'Rakuten Bank'],
      ['com.example.bank', 'the simulator bank'],
      ['com.example.bank.debug', 'the simulator bank'],
      ['COM.PAYPAL.ANDROID.P2PMOBILE', 'PayPal'],
    ])('is high in the listed app %s', (pkg, app) => {
      expect(classifyRisk(call({ foreground_package: pkg })).reasons).toEqual([
        `foreground app "${pkg}" is a payment, banking, wallet or exchange app (${app})`,
      ]);
    });

    it.each([
      ['org.acme.bank', 'bank'],
      ['org.acme.mobile_banking', 'banking'],
      ['org.acme.MyWallet', 'wallet'],
      ['org.acme.pay', 'pay'],
      ['org.acme.pay2go', 'pay'],
      ['org.acme.crypto_tracker', 'crypto'],
      ['org.acme.exchange', 'exchange'],
      ['org.acme.finance', 'finance'],
    ])('is high when a word of the package name says payment: %s', (pkg, word) => {
      expect(classifyRisk(call({ foreground_package: pkg })).reasons).toEqual([
        `foreground app "${pkg}" is a payment, banking, wallet or exchange app (its name has the word "${word}")`,
      ]);
    });

    it.each([
      'com.example.notebank',
      'com.example.paystub_reader',
      'com.example.payload',
      'com.bankofamericafan.app',
      'com.example.messages',
      'com.android.launcher',
    ])('matches package words, not substrings: %s is low', (pkg) => {
      expect(classifyRisk(call({ foreground_package: pkg })).level).toBe('low');
    });

    it('is high for a screen action in Settings, low for opening Settings', () => {
      expect(classifyRisk(call({ foreground_package: 'com.android.settings', target_text: 'Wi-Fi' })).reasons).toEqual([
        'foreground app "com.android.settings" is Settings, and "Wi-Fi" is not known to only open a page of information (it may change a setting)',
      ]);
      expect(
        classifyRisk({
          tool: 'device.open_app',
          args: { package_name: 'com.android.settings' },
          foreground_package: MESSAGES,
        }).level,
      ).toBe('low');
    });

    it.each([
      ['missing', undefined, 'foreground_package is missing'],
      ['null', null, 'foreground_package is missing'],
      ['empty', '', 'foreground_package is empty'],
      ['blank', '   ', 'foreground_package is empty'],
      ['not a package name', 'Messages', 'foreground_package "Messages" is not an Android package name'],
      ['a package with an empty segment', 'com..bank', 'foreground_package "com..bank" is not an Android package name'],
      ['a segment starting with a digit', 'com.1bank', 'foreground_package "com.1bank" is not an Android package name'],
    ])('refuses a screen action when the foreground package is %s, with the fix', (_name, pkg, why) => {
      for (const tool of ['device.tap', 'device.type_text', 'device.swipe', 'device.press_key']) {
        const verdict = classifyRisk(call({ tool, target_text: 'Open', foreground_package: pkg }));
        expect(verdict).toEqual({
          level: 'refused',
          reasons: [`foreground app unknown: tool "${tool}" acts on the screen, and ${why}`],
          fix: FOREGROUND_PACKAGE_FIX,
        });
      }
    });

    it('tells the model to pass the package from its latest observation, never to look for a setting', () => {
      expect(FOREGROUND_PACKAGE_FIX).toContain('foreground_package');
      expect(FOREGROUND_PACKAGE_FIX).toContain('device.screen_observe');
      expect(FOREGROUND_PACKAGE_FIX).not.toMatch(/setting/i);
    });

    it('keeps high-risk findings next to a refusal', () => {
      expect(classifyRisk(call({ target_text: 'Send', foreground_package: null })).reasons).toEqual([
        'foreground app unknown: tool "device.tap" acts on the screen, and foreground_package is missing',
        'target text means send: "send" (English)',
      ]);
    });

    it('does not need a foreground package for tools that do not act on the screen', () => {
      expect(classifyRisk({ tool: 'device.list_contacts', args: {}, foreground_package: null }).level).toBe('low');
    });
  });

  describe('actions', () => {
    it('is high for toggling a setting, naming it', () => {
      expect(
        classifyRisk({ tool: 'device.toggle_setting', args: { setting: 'wifi' }, foreground_package: MESSAGES })
          .reasons,
      ).toEqual(['tool "device.toggle_setting" changes a system setting ("wifi")']);
    });

    it('names airplane mode when the setting is airplane mode', () => {
      expect(classifyRisk({ tool: 'device.toggle_setting', args: { setting: 'airplane_mode' } }).reasons).toEqual([
        'tool "device.toggle_setting" changes a system setting ("airplane_mode")',
        'argument "setting" = "airplane_mode" means airplane mode',
      ]);
    });

    it.each(['POWER', 'KEYCODE_POWER', 'keycode_power', 26])('is high for press_key %s', (key) => {
      expect(classifyRisk(call({ tool: 'device.press_key', args: { key }, target_text: null })).reasons).toEqual([
        'key POWER turns the screen off or opens the power menu',
      ]);
    });

    it('is high for press_key CALL', () => {
      expect(classifyRisk(call({ tool: 'device.press_key', args: { key: 'KEYCODE_CALL' } })).level).toBe('high');
    });

    it('judges ENTER by the target text it activates, and is high without one', () => {
      const enter = (target_text: string | null) =>
        classifyRisk(call({ tool: 'device.press_key', args: { key: 'ENTER' }, target_text }));
      expect(enter(null).reasons).toEqual([
        'key ENTER presses whatever has focus, and no target_text says what that is',
      ]);
      expect(enter('Search').level).toBe('low');
      expect(enter('Send').reasons).toEqual(['target text means send: "send" (English)']);
    });

    it('is low for navigation keys', () => {
      for (const key of ['BACK', 'HOME', 'KEYCODE_VOLUME_UP', 4]) {
        expect(classifyRisk(call({ tool: 'device.press_key', args: { key } })).level).toBe('low');
      }
    });

    it.each([
      ['device.reboot', 'power off or reboot'],
      ['device.power_off', 'power off or reboot'],
      ['device.set_airplane_mode', 'airplane mode'],
      ['device.add_device_admin', 'device admin'],
      ['device.install_app', 'install or uninstall apps'],
      ['device.uninstall_app', 'install or uninstall apps'],
      ['device.factory_reset', 'factory reset or wipe'],
    ])('is high for a tool named %s', (tool, meaning) => {
      expect(classifyRisk({ tool, args: {} }).reasons).toContain(`tool "${tool}" means ${meaning}`);
    });

    it('is high for a tool whose name means a high-risk action', () => {
      expect(
        classifyRisk({ tool: 'device.send_message', args: { recipient: 'Ann', message_body: 'hi' } }).reasons,
      ).toEqual(['tool "device.send_message" means send: "send" (English)']);
      expect(classifyRisk({ tool: 'device.delete_contacts_verified', args: {} }).level).toBe('high');
    });

    it.each([
      [
        { action: 'android.intent.action.REBOOT' },
        'argument "action" = "android.intent.action.REBOOT" means power off or reboot',
      ],
      [
        { intent: { action: 'android.app.action.ADD_DEVICE_ADMIN' } },
        'argument "intent.action" = "android.app.action.ADD_DEVICE_ADMIN" means device admin',
      ],
      [{ airplane_mode: true }, 'argument "airplane_mode" means airplane mode'],
      [{ steps: ['open', 'factoryReset'] }, 'argument "steps[1]" = "factoryReset" means factory reset or wipe'],
      [{ ref: 'btn_uninstall' }, 'argument "ref" = "btn_uninstall" means install or uninstall apps'],
    ])('is high for arguments that name a device action: %j', (args, reason) => {
      expect(classifyRisk({ tool: 'acme.run', args }).reasons).toEqual([reason]);
    });

    it('does not read free text as an action', () => {
      for (const args of [
        { text: 'reboot' },
        { message_body: 'factory_reset' },
        { note: 'please reboot the router' },
      ]) {
        expect(classifyRisk(call({ tool: 'device.type_text', args, target_text: 'Message' })).level).toBe('low');
      }
    });

    it('is low for opening an app, Settings included', () => {
      expect(classifyRisk({ tool: 'device.open_app', args: { package_name: 'com.android.settings' } }).level).toBe(
        'low',
      );
    });
  });

  describe('limits', () => {
    it('keeps at most the contract number of reasons, each at most the contract length', () => {
      const args = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`reboot_${i}_${'x'.repeat(600)}`, true]));
      const verdict = classifyRisk({ tool: 'acme.run', args });
      expect(verdict.reasons.length).toBe(MAX_REASONS);
      for (const r of verdict.reasons) expect(r.length).toBeLessThanOrEqual(MAX_REASON_LENGTH);
    });

    it('is high, without failing, when arguments are too deep or too many to read', () => {
      let deep: Record<string, unknown> = { action: 'reboot' };
      for (let i = 0; i < 10_000; i++) deep = { nested: deep };
      const wide = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, i]));
      for (const args of [deep, wide]) {
        expect(classifyRisk({ tool: 'acme.run', args }).reasons).toEqual([
          'the arguments nest deeper than 8 levels or hold more than 512 values, so not all of them were read',
        ]);
      }
      expect(classifyRisk({ tool: 'acme.run', args: { a: { b: { c: { d: 1 } } }, list: [1, 2, 3] } }).level).toBe(
        'low',
      );
    });

    it('reads missing or mistyped fields as absent', () => {
      expect(classifyRisk({} as RiskInput).level).toBe('low');
      expect(classifyRisk(null as unknown as RiskInput).level).toBe('low');
      expect(
        classifyRisk({ tool: 'device.tap', args: [], target_text: 42, foreground_package: {} } as unknown as RiskInput)
          .level,
      ).toBe('refused');
    });
  });
});

describe('RiskClassifier', () => {
  it('adds configured packages, and the packages under them', () => {
    const classifier = new RiskClassifier({ extraHighRiskPackages: ['com.acme.treasury', 'org.acme.ledger.*'] });
    expect(classifier.classify(call({ foreground_package: 'com.acme.treasury' })).reasons).toEqual([
      'foreground app "com.acme.treasury" is a payment, banking, wallet or exchange app (listed by configuration)',
    ]);
    expect(classifier.classify(call({ foreground_package: 'org.acme.ledger.app' })).level).toBe('high');
    expect(classifyRisk(call({ foreground_package: 'com.acme.treasury' })).level).toBe('low');
  });

  it('adds configured words, in a new language or an existing one', () => {
    const options = {
      extraWords: [
        { meaning: 'pay', language: 'yo', words: ['sanwo bayi'] },
        { meaning: 'cancel my plan', language: 'en', words: ['downgrade'] },
      ],
    };
    expect(classifyRisk(call({ target_text: 'Sanwo bayi' }), options).reasons).toEqual([
      'target text means pay: "sanwo bayi" (yo)',
    ]);
    expect(classifyRisk(call({ target_text: 'Downgrade' }), options).reasons).toEqual([
      'target text means cancel my plan: "downgrade" (English)',
    ]);
    expect(classifyRisk(call({ target_text: 'Downgrade' })).level).toBe('low');
  });
});
