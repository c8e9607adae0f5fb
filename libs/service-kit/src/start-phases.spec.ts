import { jest } from '@jest/globals';
import { pino } from 'pino';
import { StartPhases } from './start-phases.js';

describe('StartPhases', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  const recording = () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    return { lines, logger };
  };

  it('warns at each interval while a phase runs past the bound, naming it, and stops when it ends', async () => {
    const { lines, logger } = recording();
    let finish!: (value: string) => void;
    const phase = new StartPhases(logger, 1000).run(
      'Postgres: migrations of audit',
      () => new Promise<string>((r) => (finish = r)),
    );
    await jest.advanceTimersByTimeAsync(2500);
    expect(lines.map((l) => l.msg)).toEqual([
      'start: still waiting on Postgres: migrations of audit',
      'start: still waiting on Postgres: migrations of audit',
    ]);
    expect(lines[1]).toMatchObject({ phase: 'Postgres: migrations of audit', phaseMs: 2000 });
    finish('done');
    await expect(phase).resolves.toBe('done');
    await jest.advanceTimersByTimeAsync(5000);
    expect(lines).toHaveLength(2);
  });

  it('says nothing about a phase that ends within the bound, and passes its failure on', async () => {
    const { lines, logger } = recording();
    const phases = new StartPhases(logger, 1000);
    await expect(phases.run('NATS: connect', async () => 1)).resolves.toBe(1);
    await expect(phases.run('NATS: server check', () => Promise.reject(new Error('refused')))).rejects.toThrow(
      'refused',
    );
    await jest.advanceTimersByTimeAsync(5000);
    expect(lines).toEqual([]);
  });
});
