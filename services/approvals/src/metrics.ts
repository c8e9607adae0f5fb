/**
 * Approvals' metrics, all declared here (served as `GET /metrics` on the probes' port, decision 0030), read from the
 * inbox at scrape time, across tenants:
 *
 * - `ormuz_approvals_pending`: staged calls waiting for their owner's decision;
 * - `ormuz_approvals_oldest_pending_seconds`: how long the oldest of them has waited (0 when none waits).
 *
 * Every replica reads the same table, so a dashboard takes the `max` over replicas, never the sum.
 */
import { collectFrom, sharedRead, type Infrastructure, type ServiceMetrics } from '@ormuz/service-kit';

export interface PendingApprovals {
  readonly count: number;
  readonly oldestStagedAt: Date | null;
}

/** How long the oldest pending approval has waited at `now`, in seconds (0 when none waits). */
export function oldestPendingSeconds(pending: PendingApprovals, now: Date): number {
  return pending.oldestStagedAt ? Math.max(0, now.getTime() - pending.oldestStagedAt.getTime()) / 1000 : 0;
}

export class ApprovalsMetrics {
  constructor(
    metrics: ServiceMetrics,
    pending: () => Promise<PendingApprovals>,
    logger: Pick<Infrastructure['logger'], 'warn'>,
  ) {
    const read = sharedRead(pending);
    metrics.gauge({
      name: 'ormuz_approvals_pending',
      help: "Staged calls waiting for their owner's decision.",
      collect: collectFrom(read, (gauge, p) => gauge.set(p.count), logger),
    });
    metrics.gauge({
      name: 'ormuz_approvals_oldest_pending_seconds',
      help: 'How long the oldest pending approval has waited, in seconds (0 when none waits).',
      collect: collectFrom(read, (gauge, p) => gauge.set(oldestPendingSeconds(p, new Date())), logger),
    });
  }
}
