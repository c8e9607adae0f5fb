import { consumerLag } from './consumer-metrics.js';
import { collectFrom, sharedRead } from './scrape.js';
import { ServiceMetrics } from './service-metrics.js';

describe('consumerLag: how far a checkpoint is behind its stream', () => {
  it('is the stream last sequence minus the checkpoint while something waits', () => {
    expect(consumerLag(90, 100, 10)).toBe(10);
    expect(consumerLag(90, 100, null)).toBe(10);
  });
  it('is 0 when nothing in its filter waits, whatever else the stream holds', () => {
    expect(consumerLag(90, 100, 0)).toBe(0);
  });
  it('is never negative (a stream purged under the checkpoint) and unknown without the stream', () => {
    expect(consumerLag(120, 100, 3)).toBe(0);
    expect(consumerLag(90, undefined, 3)).toBeUndefined();
  });
});

describe('sharedRead and collectFrom: one read per scrape', () => {
  it('shares one read between the gauges that ask at once, and reads again on the next scrape', async () => {
    let reads = 0;
    const read = sharedRead(async () => ++reads);
    expect(await Promise.all([read(), read(), read()])).toEqual([1, 1, 1]);
    expect(await read()).toBe(2);
  });

  it('renders a gauge from the read, and leaves it without series (logged) when the read fails', async () => {
    const metrics = new ServiceMetrics('spec');
    const warnings: unknown[] = [];
    let fail = false;
    metrics.gauge({
      name: 'ormuz_spec_things',
      help: 'things',
      labelNames: ['kind'] as const,
      collect: collectFrom(
        async () => {
          if (fail) throw new Error('no answer');
          return { a: 2 };
        },
        (gauge, v) => gauge.set({ kind: 'a' }, v.a),
        { warn: (o: unknown) => warnings.push(o) },
      ),
    });
    expect((await metrics.exposition()).body).toContain('ormuz_spec_things{kind="a",service="spec"} 2');
    fail = true;
    const body = (await metrics.exposition()).body;
    expect(body).toContain('# TYPE ormuz_spec_things gauge');
    expect(body).not.toContain('ormuz_spec_things{');
    expect(warnings).toEqual([{ err: 'no answer' }]);
  });
});

describe('ServiceMetrics', () => {
  it('has its own registry with the process metrics, every name prefixed ormuz_', async () => {
    const a = new ServiceMetrics('a');
    const b = new ServiceMetrics('b');
    a.counter({ name: 'ormuz_spec_total', help: 'x' }).inc();
    const names = (await a.registry.getMetricsAsJSON()).map((m) => m.name);
    expect(names).toContain('ormuz_process_cpu_seconds_total');
    expect(names).toContain('ormuz_spec_total');
    expect(names.filter((n) => !n.startsWith('ormuz_'))).toEqual([]);
    expect((await b.registry.getMetricsAsJSON()).map((m) => m.name)).not.toContain('ormuz_spec_total');
    expect(() => a.counter({ name: 'calls_total', help: 'x' })).toThrow('metric calls_total must be named ormuz_…');
  });
});
