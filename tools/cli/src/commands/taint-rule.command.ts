import type { Command } from 'commander';
import type { PolicySettingsV1, TaintRuleV1 } from '@ormuz/contracts';
import { CliInputError, identifier, type CliContext } from '../context.js';

const RULES: Readonly<Record<string, TaintRuleV1>> = { matching: 'matching', 'every-write': 'every_write' };

/** `--rule every-write` → `every_write`; anything else is refused with the rules there are. */
export function taintRule(value: string): TaintRuleV1 {
  const rule = RULES[value.trim().toLowerCase().replace(/_/g, '-')];
  if (!rule) {
    throw new CliInputError(
      `--rule is matching (a write waits for the owner when its text or target appeared in untrusted content) or ` +
        `every-write (every write waits while the conversation holds untrusted content), not ${JSON.stringify(value)}.`,
    );
  }
  return rule;
}

export function renderTaintRule(v: PolicySettingsV1): string {
  const what =
    v.taint_rule === 'every_write'
      ? 'every write waits for the owner while a conversation holds untrusted content'
      : 'a write waits for the owner when its text or target appeared in untrusted content the conversation read';
  return `taint rule of ${v.tenant}: ${v.taint_rule.replace('_', '-')} (${what}; high risk always waits)`;
}

/**
 * `ormuz risk taint show|set`: what a tenant's writes need while a conversation holds untrusted content (read since the
 * user's last message). Registered under the `risk` command.
 */
export function registerTaintRuleCommands(program: Command, ctx: () => CliContext): void {
  const risk =
    program.commands.find((c) => c.name() === 'risk') ??
    program.command('risk').description('the deterministic risk classifier');
  const taint = risk.command('taint').description("what a tenant's writes need after untrusted content was read");

  taint
    .command('show')
    .description("show a tenant's taint rule")
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .action(async (o: { tenant: string }) => {
      ctx().print(await ctx().call('policy.settings.get', { tenant: o.tenant }), renderTaintRule);
    });

  taint
    .command('set')
    .description("set a tenant's taint rule")
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .requiredOption('--rule <rule>', 'matching (the default) or every-write', taintRule)
    .action(async (o: { tenant: string; rule: TaintRuleV1 }) => {
      const reply = await ctx().call('policy.settings.set', { tenant: o.tenant, taint_rule: o.rule });
      ctx().print(reply, (v: PolicySettingsV1) => `saved\n${renderTaintRule(v)}`);
    });
}
