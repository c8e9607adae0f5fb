/**
 * Policy's metrics, all declared here (served as `GET /metrics` on the probes' port, decision 0030):
 *
 * - `ormuz_policy_calls_total{decision, risk}`: requests decided, by the gate's decision (`authorize`, `stage`,
 *   `refuse`, or `reject` for a tool name that names no tool) and the verdict's risk level (`low`, `high`, or `none`
 *   when no verdict was reached); a duplicate submit is not counted again;
 * - `ormuz_policy_gate_seconds{decision}`: how long a submit takes, from its arrival to the decision on the log.
 */
import { LATENCY_BUCKETS, type Counter, type Histogram, type ServiceMetrics } from '@ormuz/service-kit';

export type GateOutcome = 'authorize' | 'stage' | 'refuse' | 'reject';

export class PolicyMetrics {
  private readonly calls: Counter<'decision' | 'risk'>;
  private readonly gate: Histogram<'decision'>;

  constructor(metrics: ServiceMetrics) {
    this.calls = metrics.counter({
      name: 'ormuz_policy_calls_total',
      help: "Tool requests decided by the gate, by decision and the verdict's risk level.",
      labelNames: ['decision', 'risk'] as const,
    });
    this.gate = metrics.histogram({
      name: 'ormuz_policy_gate_seconds',
      help: 'Time from a submit to its decision on the log, by decision.',
      labelNames: ['decision'] as const,
      buckets: LATENCY_BUCKETS,
    });
  }

  /** One submit answered `decision` after `seconds`; `recorded` false for a duplicate, which is timed only. */
  decided(decision: GateOutcome, risk: 'low' | 'high' | 'none', seconds: number, recorded: boolean): void {
    if (recorded) this.calls.inc({ decision, risk });
    this.gate.observe({ decision }, seconds);
  }
}
