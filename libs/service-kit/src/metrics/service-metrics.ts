/**
 * A service process's Prometheus metrics (prom-client), served as `GET /metrics` by the probes' listener (decision
 * 0030). One registry per process, never prom-client's global one: the tests start several services in one process,
 * and each must count only its own work. The default process and Node.js metrics are included; every name starts with
 * `ormuz_`, and every series carries the `service` label.
 *
 * Labels must stay bounded: a decision, a risk level, a status, a provider, a consumer's name. Never a call, a
 * conversation, an agent or a device id.
 */
import {
  collectDefaultMetrics,
  Counter,
  Gauge,
  Histogram,
  Registry,
  type CounterConfiguration,
  type GaugeConfiguration,
  type HistogramConfiguration,
} from 'prom-client';

export type { Counter, Gauge, Histogram } from 'prom-client';

/** The prefix of every metric a service exposes. */
export const METRIC_PREFIX = 'ormuz_';

type Declared<T> = Omit<T, 'registers'>;

export class ServiceMetrics {
  readonly registry = new Registry();

  constructor(readonly service: string) {
    this.registry.setDefaultLabels({ service });
    collectDefaultMetrics({ register: this.registry, prefix: METRIC_PREFIX });
  }

  counter<L extends string = string>(config: Declared<CounterConfiguration<L>>): Counter<L> {
    return new Counter<L>({ ...config, name: prefixed(config.name), registers: [this.registry] });
  }

  gauge<L extends string = string>(config: Declared<GaugeConfiguration<L>>): Gauge<L> {
    return new Gauge<L>({ ...config, name: prefixed(config.name), registers: [this.registry] });
  }

  histogram<L extends string = string>(config: Declared<HistogramConfiguration<L>>): Histogram<L> {
    return new Histogram<L>({ ...config, name: prefixed(config.name), registers: [this.registry] });
  }

  /** The text exposition of every metric, and its content type, as `GET /metrics` answers them. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

function prefixed(name: string): string {
  if (!name.startsWith(METRIC_PREFIX)) throw new Error(`metric ${name} must be named ${METRIC_PREFIX}…`);
  return name;
}

/** Buckets, in seconds, for latencies from a millisecond to a minute. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
