/**
 * "Approval X of tenant T changed": a core NATS message the inbox projection publishes once the change has committed,
 * and every replica's live streams listen to. A replica's own projection may not be the one that applied the event
 * (replicas share the read model), so the notice goes over NATS, not through memory. It carries only the id: a stream
 * reads the row itself, as its own caller may see it, so a notice never leaks what a reader may not see and is never
 * older than the table. Notices are not on a stream (nothing stores them): a page that reconnects is sent a fresh
 * snapshot instead.
 */
import { assertIdentifier } from '@ormuz/contracts';
import type { Infrastructure } from '@ormuz/service-kit';

export class InboxNotices {
  constructor(
    private readonly nc: Infrastructure['nc'],
    private readonly namespace: string,
  ) {}

  /** `<namespace>.notice.approvals.<tenant>`: outside every stream's subjects (`<namespace>.<context>.>`). */
  subject(tenant: string): string {
    assertIdentifier('tenant', tenant);
    return `${this.namespace}.notice.approvals.${tenant}`;
  }

  publish(tenant: string, approvalId: string): void {
    this.nc.publish(this.subject(tenant), JSON.stringify({ approval_id: approvalId }));
  }

  /** Calls `changed` with the id of every approval of `tenant` that changes from now on; returns the unsubscribe. */
  subscribe(tenant: string, changed: (approvalId: string) => void): () => void {
    const sub = this.nc.subscribe(this.subject(tenant), {
      callback: (err, msg) => {
        if (err) return;
        const notice = JSON.parse(msg.string()) as { approval_id?: unknown };
        if (typeof notice.approval_id === 'string') changed(notice.approval_id);
      },
    });
    return () => sub.unsubscribe();
  }

  /** Resolves once the server has every subscription made so far: a notice published after it reaches them. */
  flush(): Promise<void> {
    return this.nc.flush();
  }
}
