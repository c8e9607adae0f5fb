import type { Command } from 'commander';
import type { AuditEraseReplyV1, AuditRetentionV1 } from '@ormuz/contracts';
import { identifier, type CliContext } from '../context.js';
import { registerTenantLimitsCommands } from './tenant-limits.command.js';

/**
 * A retention period: `<days>d`, or `forever` to keep that kind of data. `forever` stays a word until the request is
 * made: commander takes an option value of `null` as "given without a value" and turns it into `true`.
 */
export function retentionDays(option: string): (value: string) => number | 'forever' {
  return (value) => {
    if (value === 'forever') return value;
    const m = /^([1-9][0-9]{0,4})d$/.exec(value);
    if (!m) throw new Error(`${option} takes a number of days such as 30d (1d to 36500d), or forever; got ${value}.`);
    const days = Number(m[1]);
    if (days > 36_500) throw new Error(`${option} is at most 36500d (100 years); got ${value}.`);
    return days;
  };
}

/** A past moment, RFC 3339. */
export function pastTime(option: string): (value: string) => string {
  return (value) => {
    const t = Date.parse(value);
    if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(t)) {
      throw new Error(`${option} takes an RFC 3339 time such as 2026-01-31T00:00:00Z; got ${value}.`);
    }
    if (t > Date.now()) throw new Error(`${option} ${value} is in the future; erasure takes a past time.`);
    return new Date(t).toISOString();
  };
}

type Retention = number | 'forever';
/** The request's days: `null` keeps that kind of data forever. */
const daysOf = (r: Retention): number | null => (r === 'forever' ? null : r);

const keptFor = (days: number | null) => (days === null ? 'kept forever' : `kept ${days} days`);

const humanRetention = (r: AuditRetentionV1) =>
  `tenant ${r.tenant}: payloads ${keptFor(r.payloads_days)}, results ${keptFor(r.results_days)}`;

/**
 * `ormuz tenant retention set | get` and `ormuz tenant erase-payloads`: a tenant's data protection in the audit
 * archive; `ormuz tenant limits` and `ormuz tenant usage`: its daily bounds on models.
 */
export function registerTenantCommands(program: Command, ctx: () => CliContext): void {
  const tenant = program
    .command('tenant')
    .description("a tenant's data retention and erasure in the audit archive, and its daily limits on models");
  registerTenantLimitsCommands(tenant, ctx);
  const retention = tenant.command('retention').description('how long call payloads and results are kept');

  retention
    .command('set')
    .description('set how long payloads and results are kept (erases what is already older; admins only)')
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .option('--payloads <period>', 'keep call payloads this long: <days>d or forever', retentionDays('--payloads'))
    .option(
      '--results <period>',
      'keep call results and errors this long: <days>d or forever',
      retentionDays('--results'),
    )
    .action(async (o: { tenant: string; payloads?: Retention; results?: Retention }) => {
      if (o.payloads === undefined && o.results === undefined) {
        throw new Error('Give --payloads, --results or both (for example --payloads 30d).');
      }
      const reply = await ctx().call('audit.retention.set', {
        tenant: o.tenant,
        ...(o.payloads !== undefined ? { payloads_days: daysOf(o.payloads) } : {}),
        ...(o.results !== undefined ? { results_days: daysOf(o.results) } : {}),
      });
      ctx().print(reply, humanRetention);
    });

  retention
    .command('get')
    .description("show the tenant's retention")
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .action(async (o: { tenant: string }) => {
      ctx().print(await ctx().call('audit.retention.get', { tenant: o.tenant }), humanRetention);
    });

  tenant
    .command('erase-payloads')
    .description(
      "erase the tenant's call payloads (and with --results, results and errors) recorded before a time; admins only",
    )
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .requiredOption('--before <time>', 'erase what was recorded before this RFC 3339 time', pastTime('--before'))
    .option('--results', 'also erase call results and errors')
    .action(async (o: { tenant: string; before: string; results?: boolean }) => {
      const reply = await ctx().call('audit.erase', {
        tenant: o.tenant,
        before: o.before,
        kinds: o.results ? ['payloads', 'results'] : ['payloads'],
      });
      ctx().print(
        reply,
        (r: AuditEraseReplyV1) =>
          `erased ${r.kinds.join(' and ')} of tenant ${r.tenant} recorded before ${r.before}: ` +
          `${r.erased_events} archived events, ${r.erased_calls} call records`,
      );
    });
}
