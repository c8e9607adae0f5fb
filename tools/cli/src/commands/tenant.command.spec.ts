import { pastTime, retentionDays } from './tenant.command.js';

describe('tenant command arguments', () => {
  const days = retentionDays('--payloads');
  const before = pastTime('--before');

  it('reads a retention in days, or forever', () => {
    expect(days('30d')).toBe(30);
    expect(days('36500d')).toBe(36_500);
    expect(days('forever')).toBeNull();
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
