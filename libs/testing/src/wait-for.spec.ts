import { waitFor, WaitTimeoutError } from './wait-for.js';

describe('waitFor', () => {
  it('returns the first truthy value the predicate gives', async () => {
    let calls = 0;
    const value = await waitFor(async () => (++calls >= 3 ? { seq: calls } : undefined), { intervalMs: 1 });
    expect(value).toEqual({ seq: 3 });
    expect(calls).toBe(3);
  });

  it('keeps polling while the predicate throws', async () => {
    let calls = 0;
    const value = await waitFor(
      () => {
        if (++calls < 3) throw new Error('not yet');
        return true;
      },
      { intervalMs: 1 },
    );
    expect(value).toBe(true);
  });

  it('fails with the message, the time and the number of attempts when time runs out', async () => {
    const err = await waitFor(() => false, {
      timeoutMs: 50,
      intervalMs: 5,
      message: 'the projection to catch up',
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WaitTimeoutError);
    expect((err as WaitTimeoutError).message).toMatch(
      /^Timed out after 50 ms \(\d+ attempts\) waiting for the projection to catch up\.$/,
    );
    expect((err as WaitTimeoutError).attempts).toBeGreaterThan(1);
  });

  it('reports the last error the predicate threw', async () => {
    const err = await waitFor(
      () => {
        throw new Error('relation "calls" does not exist');
      },
      { timeoutMs: 30, intervalMs: 5, message: 'the calls table' },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WaitTimeoutError);
    expect((err as Error).message).toContain('the last attempt threw: relation "calls" does not exist');
    expect((err as Error).cause).toBeInstanceOf(Error);
  });

  it('times out even when an attempt never settles', async () => {
    const started = Date.now();
    await expect(waitFor(() => new Promise<boolean>(() => undefined), { timeoutMs: 40 })).rejects.toThrow(
      WaitTimeoutError,
    );
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('names the predicate when no message is given', async () => {
    await expect(
      waitFor(
        function checkpointReached() {
          return false;
        },
        { timeoutMs: 10 },
      ),
    ).rejects.toThrow(/waiting for checkpointReached\(\)/);
  });
});
