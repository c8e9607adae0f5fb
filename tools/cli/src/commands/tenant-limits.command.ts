import type { Command } from 'commander';
import type { TenantDayLimitsV1, TenantLimitsV1, TenantUsageV1 } from '@ormuz/contracts';
import { CliInputError, identifier, type CliContext } from '../context.js';

/**
 * A daily limit: a whole number (or, for `--day-cost`, US dollars), or `default` to remove the tenant's own (kept as
 * the word: commander reads an option parsed to `null` as given without a value, `true`).
 */
export function dayLimit(option: string, dollars = false): (value: string) => number | 'default' {
  return (value) => {
    if (value === 'default') return value;
    const ok = dollars ? /^\d+(\.\d+)?$/.test(value) : /^\d+$/.test(value);
    const n = Number(value);
    if (!ok || !(n <= (dollars ? 1_000_000_000 : Number.MAX_SAFE_INTEGER))) {
      throw new CliInputError(
        `${option} takes ${dollars ? 'US dollars such as 25 or 0.50' : 'a whole number such as 1000'}, or default ` +
          `(the configured default applies); got ${value}.`,
      );
    }
    return n;
  };
}

type DayLimit = number | 'default';

/** The limit as `model-loop.tenant.limits.set` takes it: `null` removes the tenant's own. */
const limitOf = (value: DayLimit): number | null => (value === 'default' ? null : value);

/** A UTC day, `YYYY-MM-DD`. */
export function utcDayOption(value: string): string {
  const t = Date.parse(`${value}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(t) || new Date(t).toISOString().slice(0, 10) !== value) {
    throw new CliInputError(`--day takes a UTC day such as 2026-01-31; got ${value}.`);
  }
  return value;
}

const NONE = 'no limit';

function limitLines(l: TenantDayLimitsV1): string[] {
  return [
    `  model turns: ${l.day_steps ?? NONE}`,
    `  tool calls:  ${l.day_tool_calls ?? NONE}`,
    `  tokens:      ${l.day_tokens?.toLocaleString('en') ?? NONE}`,
    `  cost:        ${l.day_cost_usd !== undefined ? `$${l.day_cost_usd.toFixed(2)}` : NONE}`,
  ];
}

/** A tenant's limits as lines: those in force, and where each comes from. */
export function renderTenantLimits(r: TenantLimitsV1): string {
  const own = Object.keys(r.own);
  return [
    `tenant ${r.tenant}, per UTC day over all its conversations:`,
    ...limitLines(r.limits),
    own.length > 0
      ? `  its own: ${own.join(', ')}; set by ${r.updated_by} at ${r.updated_at}; the rest from the defaults`
      : '  all from the defaults (MODEL_LOOP_TENANT_DAY_*)',
  ].join('\n');
}

/** A tenant's day as lines: what it used against each limit, and whether the day is spent. */
export function renderTenantUsage(r: TenantUsageV1): string {
  const of = (used: string, limit: number | undefined, show: (n: number) => string = String) =>
    limit === undefined ? used : `${used} of ${show(limit)}`;
  const u = r.usage;
  const l = r.limits;
  const money = (n: number) => `$${n.toFixed(4)}`;
  return [
    `tenant ${r.tenant} on ${r.day} (UTC):`,
    `  model turns: ${of(String(u.steps), l.day_steps)}`,
    `  tool calls:  ${of(String(u.tool_calls), l.day_tool_calls)}`,
    `  tokens:      ${of(u.tokens.toLocaleString('en'), l.day_tokens, (n) => n.toLocaleString('en'))}`,
    `  cost:        ${of(money(u.cost_usd), l.day_cost_usd, money)}`,
    r.spent
      ? `spent: the ${r.spent.bound} limit is reached; new conversations are refused until 00:00 UTC or a higher limit`
      : 'open: every limit has room',
  ].join('\n');
}

/** `ormuz tenant limits set | show` and `ormuz tenant usage`: a tenant's daily bounds on its models (model-loop). */
export function registerTenantLimitsCommands(tenant: Command, ctx: () => CliContext): void {
  const limits = tenant
    .command('limits')
    .description("the tenant's daily limits on model turns, tool calls, tokens and cost, over all its conversations");

  limits
    .command('set')
    .description("set the tenant's own daily limits (admins only); `default` removes one, so the default applies")
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .option('--day-steps <n>', 'model turns per UTC day', dayLimit('--day-steps'))
    .option('--day-calls <n>', 'tool calls per UTC day', dayLimit('--day-calls'))
    .option('--day-tokens <n>', 'model tokens (input plus output) per UTC day', dayLimit('--day-tokens'))
    .option('--day-cost <usd>', 'US dollars spent on models per UTC day', dayLimit('--day-cost', true))
    .action(
      async (o: {
        tenant: string;
        daySteps?: DayLimit;
        dayCalls?: DayLimit;
        dayTokens?: DayLimit;
        dayCost?: DayLimit;
      }) => {
        const change = {
          ...(o.daySteps !== undefined ? { day_steps: limitOf(o.daySteps) } : {}),
          ...(o.dayCalls !== undefined ? { day_tool_calls: limitOf(o.dayCalls) } : {}),
          ...(o.dayTokens !== undefined ? { day_tokens: limitOf(o.dayTokens) } : {}),
          ...(o.dayCost !== undefined ? { day_cost_usd: limitOf(o.dayCost) } : {}),
        };
        if (Object.keys(change).length === 0) {
          throw new CliInputError('Give at least one of --day-steps, --day-calls, --day-tokens, --day-cost.');
        }
        const reply = await ctx().call('model-loop.tenant.limits.set', { tenant: o.tenant, ...change });
        ctx().print(reply, renderTenantLimits);
      },
    );

  limits
    .command('show')
    .description("show the tenant's daily limits and where they come from")
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .action(async (o: { tenant: string }) => {
      ctx().print(await ctx().call('model-loop.tenant.limits.get', { tenant: o.tenant }), renderTenantLimits);
    });

  tenant
    .command('usage')
    .description("what the tenant's conversations used in one UTC day (default today), against its limits")
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .option('--day <YYYY-MM-DD>', 'the UTC day', utcDayOption)
    .action(async (o: { tenant: string; day?: string }) => {
      const reply = await ctx().call('model-loop.tenant.usage', {
        tenant: o.tenant,
        ...(o.day !== undefined ? { day: o.day } : {}),
      });
      ctx().print(reply, renderTenantUsage);
    });
}
