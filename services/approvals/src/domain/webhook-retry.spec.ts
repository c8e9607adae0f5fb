import { judgeAttempt, nextDelayMs, retryAfterMs, type AttemptAnswer } from './webhook-retry.js';

describe('webhook retries', () => {
  const now = new Date('2030-01-01T00:00:00Z');
  const response = (status: number, retryAfter: string | null = null): AttemptAnswer => ({
    kind: 'response',
    status,
    retryAfter,
  });
  const settings = { maxAttempts: 5, baseDelayMs: 1000, maxDelayMs: 6000 };

  it('delivers on 2xx', () => {
    for (const status of [200, 201, 202, 204, 299]) expect(judgeAttempt(response(status), now).next).toBe('delivered');
  });

  it('retries on no answer, 408, 429 and 5xx', () => {
    expect(judgeAttempt({ kind: 'no_response', error: 'ECONNREFUSED' }, now)).toEqual({
      next: 'retry',
      why: 'ECONNREFUSED',
      retryAfterMs: null,
    });
    for (const status of [408, 429, 500, 502, 503, 504]) expect(judgeAttempt(response(status), now).next).toBe('retry');
  });

  it('fails at once on an attempt refused before it was sent (a private address): trying again would be refused too', () => {
    const error = 'not sent: 10.0.0.1 is a private address';
    expect(judgeAttempt({ kind: 'refused', error }, now)).toEqual({ next: 'failed', why: error });
  });

  it('fails at once on any other 4xx and on redirects', () => {
    for (const status of [400, 401, 403, 404, 410, 422]) {
      expect(judgeAttempt(response(status), now)).toEqual({ next: 'failed', why: `HTTP ${status}` });
    }
    expect(judgeAttempt(response(301), now)).toMatchObject({
      next: 'failed',
      why: expect.stringContaining('redirect'),
    });
  });

  it('honours Retry-After in seconds or as a date', () => {
    expect(judgeAttempt(response(429, '7'), now)).toMatchObject({ retryAfterMs: 7000 });
    expect(retryAfterMs(new Date(now.getTime() + 90_000).toUTCString(), now)).toBe(90_000);
    expect(retryAfterMs('yesterday-ish', now)).toBeNull();
    expect(retryAfterMs(new Date(now.getTime() - 5000).toUTCString(), now)).toBe(0);
    expect(retryAfterMs('999999999', now)).toBe(24 * 3600_000);
    expect(nextDelayMs(1, 7000, settings)).toBe(7000);
  });

  it('backs off exponentially with jitter, capped, and stops after the last attempt', () => {
    const low = () => 0;
    const high = () => 1;
    expect([1, 2, 3, 4].map((a) => nextDelayMs(a, null, settings, high))).toEqual([1000, 2000, 4000, 6000]);
    expect([1, 2, 3, 4].map((a) => nextDelayMs(a, null, settings, low))).toEqual([500, 1000, 2000, 3000]);
    expect(nextDelayMs(5, null, settings)).toBeUndefined();
    expect(nextDelayMs(5, 1000, settings)).toBeUndefined();
  });
});
