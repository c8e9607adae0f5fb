import { hasExpectedSequenceRace, versionWarnings } from './server-check.js';

describe('versionWarnings', () => {
  it('says nothing of 2.11 and later', () => {
    expect(versionWarnings('2.11.0')).toEqual([]);
    expect(versionWarnings('2.12.1')).toEqual([]);
  });

  it('warns below 2.11, and names the expected-sequence race at replicas 3 below 2.9.21', () => {
    const [old] = versionWarnings('2.9.10');
    expect(old).toMatch(/2\.9\.10 is older than 2\.11\.0: fine for development, not for production/);
    expect(old).toMatch(/two appends made at once on one expected sequence \(nats-server#4320, fixed in 2\.9\.21\)/);
    expect(hasExpectedSequenceRace('2.9.10')).toBe(true);
    expect(hasExpectedSequenceRace('2.9.21')).toBe(false);
    expect(hasExpectedSequenceRace('2.10.27')).toBe(false);
    const [newer] = versionWarnings('2.10.22');
    expect(newer).toMatch(/2\.10\.22 is older than 2\.11\.0/);
    expect(newer).not.toMatch(/expected sequence/);
  });
});
