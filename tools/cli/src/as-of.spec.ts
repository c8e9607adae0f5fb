import { asOfOption, logPoint } from './as-of.js';

describe('--as-of, --from and --to', () => {
  const now = new Date('2026-05-01T12:00:00Z');
  const asOf = asOfOption(() => now);

  it('reads a stream sequence or an RFC 3339 time', () => {
    expect(logPoint('--from', '42')).toEqual({ seq: 42 });
    expect(logPoint('--to', '2026-05-01T10:00:00+02:00')).toEqual({ time: new Date('2026-05-01T08:00:00Z') });
    expect(asOf('7')).toEqual({ seq: 7 });
    expect(asOf('2026-05-01T11:59:59.5Z')).toEqual({ time: '2026-05-01T11:59:59.500Z' });
  });

  it('refuses what is neither, naming the option', () => {
    for (const bad of ['0', 'yesterday', '2026-05-01', '2026-13-01T00:00:00Z', '-3', '1.5']) {
      expect(() => logPoint('--from', bad)).toThrow(/^--from /);
    }
  });

  it('refuses a time in the future with the time it is now', () => {
    expect(() => asOf('2026-05-01T12:00:01Z')).toThrow(
      '--as-of 2026-05-01T12:00:01Z is in the future (it is now 2026-05-01T12:00:00.000Z); the log only knows the past.',
    );
  });
});
