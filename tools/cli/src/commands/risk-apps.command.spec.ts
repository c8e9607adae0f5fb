import { Command } from 'commander';
import type { CliContext } from '../context.js';
import { packageList, registerRiskAppCommands, renderRiskApps } from './risk-apps.command.js';

describe('ormuz risk apps', () => {
  it('reads packages comma separated and from repeated options', () => {
    const parse = packageList('--finance');
    expect(parse(' com.x.bank, com.x.pay ', undefined)).toEqual(['com.x.bank', 'com.x.pay']);
    expect(parse('com.z.wallet', ['com.x.bank'])).toEqual(['com.x.bank', 'com.z.wallet']);
  });

  it('refuses an option with no package, saying what to write', () => {
    expect(() => packageList('--not-finance')(' , ', undefined)).toThrow(
      /--not-finance needs at least one package, e\.g\. --not-finance com\.example\.bank/,
    );
  });

  it('prints both lists, saying when one is empty', () => {
    expect(renderRiskApps({ tenant: 'acme', finance: ['com.x.bank'], not_finance: [] })).toBe(
      'finance app lists of acme\n  finance:     com.x.bank\n  not finance: (none)',
    );
  });

  describe('set', () => {
    const program = () => {
      const p = new Command('ormuz').exitOverride();
      p.command('risk');
      const unreachable = (): CliContext => {
        throw new Error('the command reached policy although its input was refused');
      };
      registerRiskAppCommands(p, unreachable);
      return p;
    };

    it('sits under the existing risk command', () => {
      const p = program();
      expect(p.commands.filter((c) => c.name() === 'risk')).toHaveLength(1);
      expect(p.commands[0]!.commands.map((c) => c.name())).toEqual(['apps']);
    });

    it.each([
      [['--tenant', 'acme'], /Give --finance and\/or --not-finance with the packages/],
      [['--tenant', 'acme', '--clear', '--finance', 'com.x.bank'], /--clear removes both lists; give it without/],
    ])('refuses %j before calling policy', async (args, message) => {
      await expect(program().parseAsync(['risk', 'apps', 'set', ...args], { from: 'user' })).rejects.toThrow(message);
    });
  });
});
