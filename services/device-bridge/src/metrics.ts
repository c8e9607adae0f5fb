/**
 * The device bridge's metrics, all declared here (served as `GET /metrics` on the probes' port, decision 0030):
 *
 * - `ormuz_bridge_connected_devices`: devices connected to this replica now;
 * - `ormuz_bridge_outcomes_total{outcome}`: outcomes this replica recorded on the log: `succeeded` and `failed` as the
 *   device (or its journal) reported them, `outcome_unknown` for a call lost to a disconnect, a reboot or its deadline;
 * - `ormuz_bridge_call_seconds{outcome}`: for reported outcomes, the time from the call's authorization (its submit
 *   for a low-risk call, the owner's approval for a staged one) to the outcome on the log.
 */
import { LATENCY_BUCKETS, type Counter, type Gauge, type Histogram, type ServiceMetrics } from '@ormuz/service-kit';

export type RecordedOutcome = 'succeeded' | 'failed' | 'outcome_unknown';

export class BridgeMetrics {
  private readonly outcomes: Counter<'outcome'>;
  private readonly latency: Histogram<'outcome'>;
  private connections: () => number = () => 0;

  constructor(metrics: ServiceMetrics) {
    const connected: Gauge = metrics.gauge({
      name: 'ormuz_bridge_connected_devices',
      help: 'Devices connected to this replica.',
      collect: () => connected.set(this.connections()),
    });
    this.outcomes = metrics.counter({
      name: 'ormuz_bridge_outcomes_total',
      help: 'Call outcomes recorded on the log by this replica.',
      labelNames: ['outcome'] as const,
    });
    this.latency = metrics.histogram({
      name: 'ormuz_bridge_call_seconds',
      help: "Time from a call's authorization to its reported outcome on the log.",
      labelNames: ['outcome'] as const,
      buckets: LATENCY_BUCKETS,
    });
  }

  /** Where the gauge of connected devices reads its count. */
  countConnections(count: () => number): void {
    this.connections = count;
  }

  /** An outcome was recorded; `authorizedAt` (when known) times it. */
  recorded(outcome: RecordedOutcome, authorizedAt?: Date | null, now = new Date()): void {
    this.outcomes.inc({ outcome });
    if (authorizedAt && outcome !== 'outcome_unknown') {
      this.latency.observe({ outcome }, Math.max(0, now.getTime() - authorizedAt.getTime()) / 1000);
    }
  }
}
