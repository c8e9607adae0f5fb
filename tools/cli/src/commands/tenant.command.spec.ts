import { Command } from 'commander';
import type { CliContext } from '../context.js';
import { pastTime, registerTenantCommands, retentionDays } from './tenant.command.js';
import { dayLimit, renderTenantUsage, utcDayOption } from './tenant-limits.command.js';

describe('tenant command arguments', () => {
  const days = retentionDays('--payloads');
  const before = pastTime('--before');

  it('reads a retention in days, or forever', () => {
    expect(days('30d')).toBe(30);
    expect(days('36500d')).toBe(36_500);
    expect(days('forever')).toBe('forever');
  });

  it('asks for no retention limit when told forever, through the command line as parsed', async () => {
    const asked: unknown[] = [];
    const program = new Command().exitOverride();
    const ctx = { call: async (_name: string, body: unknown) => (asked.push(body), {}), print: () => undefined };
    registerTenantCommands(program, () => ctx as unknown as CliContext);
    await program.parseAsync(
      ['tenant', 'retention', 'set', '--tenant', 'acme', '--payloads', 'forever', '--results', '30d'],
      {
        from: 'user',
      },
    );
    expect(asked).toEqual([{ tenant: 'acme', payloads_days: null, results_days: 30 }]);
  });

  it.each(['30', '0d', '-1d', '1.5d', '30 days', '36501d', ''])(
    'refuses the retention %p, saying what it takes',
    (v) => {
      expect(() => days(v)).toThrow(/--payloads takes a number of days such as 30d|at most 36500d/);
    },
  );

  it('reads a past RFC 3339 time', () => {
    expect(before('2026-01-31T00:00:00Z')).toBe('2026-01-31T00:00:00.000Z');
    expect(before('2026-01-31T01:00:00+01:00')).toBe('2026-01-31T00:00:00.000Z');
  });

  it('refuses a time that is not RFC 3339, and one in the future', () => {
    expect(() => before('yesterday')).toThrow(/--before takes an RFC 3339 time/);
    expect(() => before('2026-13-40T00:00:00Z')).toThrow(/--before takes an RFC 3339 time/);
    expect(() => before(new Date(Date.now() + 86_400_000).toISOString())).toThrow(/is in the future/);
  });
});

describe('tenant limits and usage arguments', () => {
  it('reads a daily limit as a whole number, dollars for the cost, or default', () => {
    expect(dayLimit('--day-tokens')('250000')).toBe(250_000);
    expect(dayLimit('--day-steps')('0')).toBe(0);
    expect(dayLimit('--day-cost', true)('12.50')).toBe(12.5);
    expect(dayLimit('--day-tokens')('default')).toBe('default');
  });

  it.each(['-1', '1.5', '1e6', 'none', ''])('refuses the limit %p, saying what it takes', (v) => {
    expect(() => dayLimit('--day-tokens')(v)).toThrow(/--day-tokens takes a whole number such as 1000, or default/);
  });

  it('refuses a cost that is not dollars', () => {
    expect(() => dayLimit('--day-cost', true)('$5')).toThrow(/--day-cost takes US dollars such as 25 or 0.50/);
  });

  it('reads a UTC day and refuses one that does not exist', () => {
    expect(utcDayOption('2026-02-28')).toBe('2026-02-28');
    expect(() => utcDayOption('2026-02-30')).toThrow(/--day takes a UTC day such as 2026-01-31/);
    expect(() => utcDayOption('today')).toThrow(/--day takes a UTC day/);
  });

  it('shows a day against its limits, and says when it is spent', () => {
    const text = renderTenantUsage({
      tenant: 'acme',
      day: '2026-01-31',
      usage: { steps: 40, tool_calls: 12, tokens: 250_100, cost_usd: 1.25 },
      limits: { day_tokens: 250_000, day_cost_usd: 5 },
      spent: { bound: 'tenant_day_tokens', limit: 250_000, used: 250_100 },
    });
    expect(text.split('\n')).toEqual([
      'tenant acme on 2026-01-31 (UTC):',
      '  model turns: 40',
      '  tool calls:  12',
      '  tokens:      250,100 of 250,000',
      '  cost:        $1.2500 of $5.0000',
      'spent: the tenant_day_tokens limit is reached; new conversations are refused until 00:00 UTC or a higher limit',
    ]);
  });
});
