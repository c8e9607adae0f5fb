import { callFingerprint } from '../domain/resent-calls.js';
import { ResentCalls } from './resent-calls.js';

const ME = { tenant: 'acme', agentId: 'agent-1', deviceId: 'phone-1' };

describe('call fingerprints', () => {
  it('are equal for the same principal, tool and canonical arguments, whatever the key order or spelling', () => {
    const a = callFingerprint(ME, 'device.list_contacts', { limit: 3, name_query: 'é' });
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    // Key order and Unicode normalisation (NFD é) are not the call.
    expect(callFingerprint(ME, 'device.list_contacts', { name_query: 'e\u0301', limit: 3 })).toBe(a);
  });

  it('differ by tenant, agent, device, tool or arguments', () => {
    const a = callFingerprint(ME, 'device.list_contacts', { limit: 3 });
    expect(callFingerprint({ ...ME, tenant: 'globex' }, 'device.list_contacts', { limit: 3 })).not.toBe(a);
    expect(callFingerprint({ ...ME, agentId: 'agent-2' }, 'device.list_contacts', { limit: 3 })).not.toBe(a);
    expect(callFingerprint({ ...ME, deviceId: 'phone-2' }, 'device.list_contacts', { limit: 3 })).not.toBe(a);
    expect(callFingerprint({ ...ME, deviceId: null }, 'device.list_contacts', { limit: 3 })).not.toBe(a);
    expect(callFingerprint(ME, 'device.screen_observe', { limit: 3 })).not.toBe(a);
    expect(callFingerprint(ME, 'device.list_contacts', { limit: 4 })).not.toBe(a);
    expect(callFingerprint(ME, 'device.list_contacts', { limit: '3' })).not.toBe(a);
  });

  it('are undefined for arguments without a canonical form', () => {
    expect(callFingerprint(ME, 'device.list_contacts', { limit: Number.NaN })).toBeUndefined();
  });
});

describe('the re-sent calls window', () => {
  let clock = 0;
  const now = () => clock;
  beforeEach(() => (clock = 1_000));

  it("answers a call repeated within the window with the original's operation id", () => {
    const window = new ResentCalls(60_000, now);
    expect(window.operationIdOf(ME, 'device.screen_observe', {}, 'mcp-first')).toBe('mcp-first');
    clock += 59_999;
    expect(window.operationIdOf(ME, 'device.screen_observe', {}, 'mcp-second')).toBe('mcp-first');
  });

  it('runs the window from the first call: a repeat does not extend it, and after it the call is new', () => {
    const window = new ResentCalls(60_000, now);
    window.operationIdOf(ME, 'device.screen_observe', {}, 'mcp-first');
    clock += 50_000;
    expect(window.operationIdOf(ME, 'device.screen_observe', {}, 'mcp-second')).toBe('mcp-first');
    clock += 10_001; // just over 60 s after the first call
    expect(window.operationIdOf(ME, 'device.screen_observe', {}, 'mcp-third')).toBe('mcp-third');
    clock += 1_000;
    expect(window.operationIdOf(ME, 'device.screen_observe', {}, 'mcp-fourth')).toBe('mcp-third');
  });

  it('keeps other calls apart', () => {
    const window = new ResentCalls(60_000, now);
    window.operationIdOf(ME, 'device.list_contacts', { limit: 3 }, 'mcp-a');
    expect(window.operationIdOf(ME, 'device.list_contacts', { limit: 4 }, 'mcp-b')).toBe('mcp-b');
    expect(window.operationIdOf({ ...ME, deviceId: 'phone-2' }, 'device.list_contacts', { limit: 3 }, 'mcp-c')).toBe(
      'mcp-c',
    );
  });

  it('forgets the least recently made call first when full, and remembers nothing with a window of 0', () => {
    const small = new ResentCalls(60_000, now, 2);
    small.operationIdOf(ME, 'device.list_contacts', { limit: 1 }, 'mcp-1');
    small.operationIdOf(ME, 'device.list_contacts', { limit: 2 }, 'mcp-2');
    small.operationIdOf(ME, 'device.list_contacts', { limit: 3 }, 'mcp-3');
    expect(small.operationIdOf(ME, 'device.list_contacts', { limit: 1 }, 'mcp-1b')).toBe('mcp-1b');
    expect(small.operationIdOf(ME, 'device.list_contacts', { limit: 3 }, 'mcp-3b')).toBe('mcp-3');

    const off = new ResentCalls(0, now);
    off.operationIdOf(ME, 'device.screen_observe', {}, 'mcp-first');
    expect(off.operationIdOf(ME, 'device.screen_observe', {}, 'mcp-second')).toBe('mcp-second');
  });

  it('refuses a window that is not a whole number of ms', () => {
    expect(() => new ResentCalls(-1, now)).toThrow(/windowMs/);
    expect(() => new ResentCalls(1.5, now)).toThrow(/windowMs/);
  });
});
