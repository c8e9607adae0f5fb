import { oldestPendingSeconds } from './metrics.js';

describe('oldestPendingSeconds', () => {
  const now = new Date('2026-01-01T12:00:00Z');
  it('is how long the oldest pending approval has waited', () => {
    expect(oldestPendingSeconds({ count: 3, oldestStagedAt: new Date('2026-01-01T11:58:30Z') }, now)).toBe(90);
  });
  it('is 0 when none waits, or for one staged by a clock ahead of this one', () => {
    expect(oldestPendingSeconds({ count: 0, oldestStagedAt: null }, now)).toBe(0);
    expect(oldestPendingSeconds({ count: 1, oldestStagedAt: new Date('2026-01-01T12:00:02Z') }, now)).toBe(0);
  });
});
