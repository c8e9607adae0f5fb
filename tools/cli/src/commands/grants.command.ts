import type { Command } from 'commander';
import type { GrantV1, OfferedToolV1, OfferedToolsReplyV1, SearchToolsReplyV1 } from '@ormuz/contracts';
import { CliInputError, identifier, type CliContext } from '../context.js';
import { registerToolPayloadCommand } from './tool-payload.command.js';

/** `device, ormuz` → `['device', 'ormuz']`: comma separated, blanks dropped. */
function ruleList(option: string): (value: string) => string[] {
  return (value) => {
    const rules = value
      .split(',')
      .map((r) => r.trim())
      .filter(Boolean);
    if (rules.length === 0) {
      throw new CliInputError(
        `${option} needs at least one rule, e.g. ${option} device,ormuz (or device.tap, device.tap@1).`,
      );
    }
    return rules;
  };
}

function limit(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 50)
    throw new CliInputError(`--limit must be a whole number from 1 to 50, not ${value}.`);
  return n;
}

/** The first sentence of a description, for one-line listings. */
function summary(text: string): string {
  const sentence = text.match(/^.*?[.!?](?=\s|$)/)?.[0] ?? text;
  return sentence.length > 160 ? `${sentence.slice(0, 159)}…` : sentence;
}

/**
 * Allow rules that offer no tool: a misspelt extension or tool is stored as given (it may be published later), so
 * say so. A stored grant pins every tool it offers, which makes the check local.
 */
function idleRules(g: GrantV1): string[] {
  const pinned = Object.entries(g.pins ?? {});
  return g.allow.filter((rule) => {
    const [tool, version] = rule.split('@');
    return !pinned.some(([name, v]) =>
      tool!.includes('.')
        ? name === tool && (version === undefined || Number(version) === v)
        : name.startsWith(`${tool}.`),
    );
  });
}

function renderGrant(g: GrantV1): string {
  const pins = Object.entries(g.pins ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
  return [
    `grant ${g.tenant}/${g.agent_id}`,
    `  allow: ${g.allow.length > 0 ? g.allow.join(', ') : '(nothing)'}`,
    `  deny:  ${g.deny && g.deny.length > 0 ? g.deny.join(', ') : '(nothing)'}`,
    pins.length > 0
      ? `  pinned: ${pins.map(([tool, version]) => `${tool}@${version}`).join(', ')}`
      : '  pinned: (none: the highest allowed version of each tool is offered)',
  ].join('\n');
}

function renderTools(tools: readonly OfferedToolV1[]): string {
  if (tools.length === 0) return 'no tools offered (the grant allows nothing in the catalog)';
  const width = Math.max(...tools.map((t) => `${t.name}@${t.version}`.length));
  return tools
    .map(
      (t) =>
        `${`${t.name}@${t.version}`.padEnd(width)}  ${t.effect.padEnd(11)}  ${t.risk_level.padEnd(8)}  ${summary(t.description)}`,
    )
    .join('\n');
}

export function registerGrantCommands(program: Command, ctx: () => CliContext): void {
  const grants = program.command('grants').description('which tools an agent of a tenant may be offered and call');

  grants
    .command('show')
    .description("show an agent's grant (the configured default when none was set)")
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .requiredOption('--agent <id>', 'agent id', identifier('--agent'))
    .action(async (o: { tenant: string; agent: string }) => {
      const reply = await ctx().call('policy.grants.get', { tenant: o.tenant, agent_id: o.agent });
      ctx().print(reply, renderGrant);
    });

  grants
    .command('set')
    .description("replace an agent's grant; it is stored pinned to the versions the catalog offers now")
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .requiredOption('--agent <id>', 'agent id', identifier('--agent'))
    .requiredOption(
      '--allow <rules>',
      'comma-separated rules: an extension (device), a tool (device.tap) or a version (device.tap@1)',
      ruleList('--allow'),
    )
    .option(
      '--deny <rules>',
      'comma-separated rules that are never offered, in the same forms; deny wins',
      ruleList('--deny'),
    )
    .action(async (o: { tenant: string; agent: string; allow: string[]; deny?: string[] }) => {
      const reply = await ctx().call('policy.grants.set', {
        tenant: o.tenant,
        agent_id: o.agent,
        allow: o.allow,
        deny: o.deny ?? [],
      });
      for (const rule of idleRules(reply)) {
        process.stderr.write(
          `ormuz: warning: allow rule ${JSON.stringify(rule)} offers no tool (not in the catalog, or denied)\n`,
        );
      }
      ctx().print(reply, (g: GrantV1) => `saved\n${renderGrant(g)}`);
    });

  const tools = program
    .command('tools')
    .description('the tools an agent is offered (its grant intersected with the catalog)');

  tools
    .command('list')
    .description('list the tools an agent is offered, as a model sees them (--json for the argument schemas)')
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .requiredOption('--agent <id>', 'agent id', identifier('--agent'))
    .action(async (o: { tenant: string; agent: string }) => {
      const reply = await ctx().call('policy.tools', {
        tenant: o.tenant,
        agent_id: o.agent,
      });
      ctx().print(reply, (r: OfferedToolsReplyV1) => renderTools(r.tools));
    });

  tools
    .command('search <query>')
    .description('search the tools an agent is offered by words (what ormuz.search_tools runs)')
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .requiredOption('--agent <id>', 'agent id', identifier('--agent'))
    .option('--limit <n>', 'most hits, 1 to 50 (default 5)', limit)
    .action(async (query: string, o: { tenant: string; agent: string; limit?: number }) => {
      const reply = await ctx().call('policy.tools.search', {
        tenant: o.tenant,
        agent_id: o.agent,
        query,
        ...(o.limit === undefined ? {} : { limit: o.limit }),
      });
      ctx().print(reply, (r: SearchToolsReplyV1) =>
        r.hits.length === 0
          ? `no offered tool matches ${JSON.stringify(query)}`
          : r.hits.map((h) => `${h.score.toFixed(3)}  ${h.name}@${h.version}  ${summary(h.description)}`).join('\n'),
      );
    });

  registerToolPayloadCommand(tools, ctx);
}
