import { waitFor } from '@ormuz/testing';
import { TimerWheel } from './scheduler.js';

describe('TimerWheel', () => {
  let wheel: TimerWheel;
  afterEach(() => wheel.clear());

  it('never runs a timer early, including one longer than a turn of the wheel', async () => {
    wheel = new TimerWheel({ tickMs: 5, slots: 4 });
    const began = performance.now();
    const fired: { ms: number; at: number }[] = [];
    for (const ms of [1, 12, 30, 55]) wheel.timeout(() => fired.push({ ms, at: performance.now() - began }), ms);
    await waitFor(() => fired.length === 4, { message: 'every timer to fire' });
    expect(fired.map((f) => f.ms)).toEqual([1, 12, 30, 55]);
    for (const f of fired) expect(f.at).toBeGreaterThanOrEqual(f.ms);
    expect(wheel.size).toBe(0);
  });

  it('runs intervals until cancelled, and never a cancelled timer', async () => {
    wheel = new TimerWheel({ tickMs: 5, slots: 8 });
    let ticks = 0;
    let cancelledRan = false;
    const stop = wheel.interval(() => (ticks += 1), 10);
    const cancel = wheel.timeout(() => (cancelledRan = true), 15);
    cancel();
    cancel();
    await waitFor(() => ticks >= 3, { message: 'three interval runs' });
    stop();
    const after = ticks;
    let later = false;
    wheel.timeout(() => (later = true), 30);
    await waitFor(() => later, { message: 'a later timer' });
    expect(ticks).toBe(after);
    expect(cancelledRan).toBe(false);
    expect(wheel.size).toBe(0);
  });

  it('keeps running the other timers when one throws', async () => {
    const errors: unknown[] = [];
    wheel = new TimerWheel({ tickMs: 5, onError: (err) => errors.push(err) });
    let ran = false;
    wheel.timeout(() => {
      throw new Error('boom');
    }, 5);
    wheel.timeout(() => (ran = true), 5);
    await waitFor(() => ran && errors.length === 1, { message: 'the second timer and the rethrown error' });
    expect((errors[0] as Error).message).toBe('boom');
  });
});
