/**
 * Reads a Prometheus text exposition (`GET /metrics` on a service's probes' port) for tests: the samples, and the
 * metric names it declares (`# TYPE` lines, present for every registered metric, even one without series yet).
 */

/** One sample line: `name{label="value",…} value`. */
export interface MetricSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Scrape {
  readonly samples: readonly MetricSample[];
  /** Every metric name declared, with its type. */
  readonly types: ReadonlyMap<string, string>;
  /** The sum of the samples of `name` whose labels include `labels` (0 when none). */
  value(name: string, labels?: Readonly<Record<string, string>>): number;
}

export function parseExposition(text: string): Scrape {
  const samples: MetricSample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1]!, type[2]!);
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([A-Za-z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!.replace(/\\(.)/g, '$1');
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return {
    samples,
    types,
    value(name, labels = {}) {
      return samples
        .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
        .reduce((sum, s) => sum + s.value, 0);
    },
  };
}

/** Fetches and parses `url` (a `/metrics` endpoint); throws unless it answers 200 in the text format. */
export async function scrapeMetrics(url: string): Promise<Scrape> {
  const res = await fetch(url);
  const body = await res.text();
  if (res.status !== 200 || !res.headers.get('content-type')?.startsWith('text/plain')) {
    throw new Error(`${url} answered ${res.status} ${res.headers.get('content-type')}: ${body.slice(0, 200)}`);
  }
  return parseExposition(body);
}
