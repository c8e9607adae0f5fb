import { backoffMs, isRetryableStatus, retryAfterMs } from './retry.js';

const policy = { attempts: 5, baseDelayMs: 100, maxDelayMs: 1000 };
const headers = (h: Record<string, string>) => new Headers(h);
const NOW = Date.parse('2030-01-01T00:00:00Z');

describe('retry rules', () => {
  it('retries 408, 409, 429 and 5xx, never the other 4xx', () => {
    expect([408, 409, 429, 500, 502, 503, 504, 529].every(isRetryableStatus)).toBe(true);
    expect([400, 401, 403, 404, 413, 422].some(isRetryableStatus)).toBe(false);
  });

  it('backs off with full jitter under a doubling ceiling, capped', () => {
    expect(backoffMs(1, policy, () => 0)).toBe(0);
    expect(backoffMs(1, policy, () => 0.999)).toBe(99);
    expect(backoffMs(3, policy, () => 0.5)).toBe(200);
    expect(backoffMs(10, policy, () => 0.999)).toBe(999);
  });

  it('reads Retry-After as seconds or an HTTP date, and retry-after-ms, capped', () => {
    expect(retryAfterMs(headers({ 'retry-after': '2' }), NOW, 10_000)).toBe(2000);
    expect(retryAfterMs(headers({ 'retry-after': '0.25' }), NOW, 10_000)).toBe(250);
    expect(retryAfterMs(headers({ 'retry-after': '3600' }), NOW, 10_000)).toBe(10_000);
    expect(retryAfterMs(headers({ 'retry-after': 'Tue, 01 Jan 2030 00:00:05 GMT' }), NOW, 10_000)).toBe(5000);
    expect(retryAfterMs(headers({ 'retry-after': 'Mon, 31 Dec 2029 23:00:00 GMT' }), NOW, 10_000)).toBe(0);
    expect(retryAfterMs(headers({ 'retry-after-ms': '150', 'retry-after': '9' }), NOW, 10_000)).toBe(150);
    expect(retryAfterMs(headers({ 'retry-after': 'soon' }), NOW, 10_000)).toBeUndefined();
    expect(retryAfterMs(headers({}), NOW, 10_000)).toBeUndefined();
  });
});
