import type { Command } from 'commander';
import type { RiskAppsV1 } from '@ormuz/contracts';
import { CliInputError, identifier, type CliContext } from '../context.js';

/**
 * `--finance a,b --finance c` → `['a', 'b', 'c']`: comma separated and repeatable, blanks dropped. An option given with
 * nothing in it is a mistake, not a request to clear the list (`--clear` does that).
 */
export function packageList(option: string): (value: string, previous: string[] | undefined) => string[] {
  return (value, previous) => {
    const packages = value
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean);
    if (packages.length === 0) {
      throw new CliInputError(
        `${option} needs at least one package, e.g. ${option} com.example.bank (comma separated, or repeat the option).`,
      );
    }
    return [...(previous ?? []), ...packages];
  };
}

export function renderRiskApps(v: RiskAppsV1): string {
  return [
    `finance app lists of ${v.tenant}`,
    `  finance:     ${v.finance.length > 0 ? v.finance.join(', ') : '(none)'}`,
    `  not finance: ${v.not_finance.length > 0 ? v.not_finance.join(', ') : '(none)'}`,
  ].join('\n');
}

/**
 * `ormuz risk apps show|set`: a tenant's own finance and not-finance apps, which policy's risk classifier applies on
 * top of its built-in lists (finance: every screen action in the app waits for the owner; not finance: the app is
 * never judged a finance app). Registered under the `risk` command.
 */
export function registerRiskAppCommands(program: Command, ctx: () => CliContext): void {
  const risk =
    program.commands.find((c) => c.name() === 'risk') ??
    program.command('risk').description('the deterministic risk classifier');
  const apps = risk.command('apps').description("a tenant's own finance and not-finance apps");

  apps
    .command('show')
    .description("show a tenant's finance app lists")
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .action(async (o: { tenant: string }) => {
      const reply = await ctx().call('policy.risk.apps.get', { tenant: o.tenant });
      ctx().print(reply, renderRiskApps);
    });

  apps
    .command('set')
    .description("replace a tenant's finance app lists (each package also covers the packages under it)")
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .option(
      '--finance <packages>',
      'packages to treat as finance apps: every screen action in them waits for approval',
      packageList('--finance'),
    )
    .option(
      '--not-finance <packages>',
      'packages never to treat as finance apps (by list, name or screen)',
      packageList('--not-finance'),
    )
    .option('--clear', 'remove both lists')
    .action(async (o: { tenant: string; finance?: string[]; notFinance?: string[]; clear?: boolean }) => {
      const given = o.finance !== undefined || o.notFinance !== undefined;
      if (given === (o.clear === true)) {
        throw new CliInputError(
          o.clear
            ? '--clear removes both lists; give it without --finance or --not-finance.'
            : 'Give --finance and/or --not-finance with the packages (e.g. --finance com.x.bank --not-finance com.y.notes), or --clear to remove both lists.',
        );
      }
      const reply = await ctx().call('policy.risk.apps.set', {
        tenant: o.tenant,
        finance: o.finance ?? [],
        not_finance: o.notFinance ?? [],
      });
      ctx().print(reply, (v: RiskAppsV1) => `saved\n${renderRiskApps(v)}`);
    });
}
