import type { Logger } from 'pino';
import { waitFor } from '@ormuz/testing';
import { PeriodicTask } from './periodic-task.js';

/**
 * A started task, every 1 ms, whose runs are counted and held until `release` is called; run `n` throws when
 * `fails(n)`. What it logs is in `errors`.
 */
function startHeld(fails = (_run: number) => false) {
  let release!: () => void;
  let held = new Promise<void>((r) => (release = r));
  const state = { runs: 0, active: 0, mostActive: 0 };
  const errors: { fields: unknown; message: string }[] = [];
  const logger = { error: (fields: unknown, message: string) => errors.push({ fields, message }) };
  const periodic = new PeriodicTask(
    async () => {
      const run = ++state.runs;
      state.active++;
      state.mostActive = Math.max(state.mostActive, state.active);
      try {
        await held;
        if (fails(run)) throw new Error(`run ${run} failed`);
      } finally {
        state.active--;
      }
    },
    { intervalMs: 1, logger: logger as unknown as Logger, failure: 'sweep failed' },
  );
  periodic.start();
  return {
    periodic,
    state,
    errors,
    release: () => {
      release();
      held = Promise.resolve();
    },
  };
}

describe('PeriodicTask', () => {
  it('runs at start and then every interval, one run at a time', async () => {
    const { periodic, state, release } = startHeld();
    expect(state.runs).toBe(0);
    await waitFor(() => state.runs === 1);
    release();
    await waitFor(() => state.runs >= 3);
    await periodic.stop();
    expect(state.mostActive).toBe(1);
  });

  it('logs a failed run and runs the next all the same', async () => {
    const { periodic, state, errors, release } = startHeld((run) => run === 1);
    release();
    await waitFor(() => state.runs >= 2);
    await periodic.stop();
    expect(errors).toEqual([{ fields: { err: new Error('run 1 failed') }, message: 'sweep failed' }]);
  });

  it('stops after the run under way, and runs nothing after', async () => {
    const { periodic, state, release } = startHeld();
    await waitFor(() => state.runs === 1);
    let stopped = false;
    const stopping = periodic.stop().then(() => (stopped = true));
    await Promise.resolve();
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(state.active).toBe(0);
    const runs = state.runs;
    await new Promise((r) => setImmediate(r));
    expect(state.runs).toBe(runs);
  });
});
