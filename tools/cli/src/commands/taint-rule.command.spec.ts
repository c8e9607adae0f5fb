import { renderTaintRule, taintRule } from './taint-rule.command.js';

describe('ormuz risk taint', () => {
  it('reads the rule as written, with a dash or an underscore', () => {
    expect(taintRule('every-write')).toBe('every_write');
    expect(taintRule('EVERY_WRITE')).toBe('every_write');
    expect(taintRule('matching')).toBe('matching');
  });

  it('refuses another rule, naming both', () => {
    expect(() => taintRule('strict')).toThrow(/--rule is matching .* or every-write .*, not "strict"/);
  });

  it('says what the rule means', () => {
    expect(renderTaintRule({ tenant: 'acme', taint_rule: 'every_write' })).toBe(
      'taint rule of acme: every-write (every write waits for the owner while a conversation holds untrusted ' +
        'content; high risk always waits)',
    );
  });
});
