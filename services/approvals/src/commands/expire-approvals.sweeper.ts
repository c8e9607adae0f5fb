import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { isOrmuzError } from '@ormuz/contracts';
import { INFRA, ToolCalls, type Infrastructure } from '@ormuz/service-kit';
import { APPROVALS_CONFIG, type ApprovalsConfig } from '../config.js';
import { InboxRepository } from '../persistence/inbox.repository.js';

/**
 * Expires pending approvals whose time has passed. Expiry is a decision on the log like any other, and what is due
 * is read from the inbox (projected from the log), never from a timer in memory: the timer only says when to look.
 * It looks at start too, so approvals that fell due while the service was down expire as soon as it is back.
 */
@Injectable()
export class ExpireApprovalsSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly inbox: InboxRepository,
    private readonly calls: ToolCalls,
    @Inject(APPROVALS_CONFIG) private readonly config: ApprovalsConfig,
    @Inject(INFRA) private readonly infra: Infrastructure,
  ) {}

  onApplicationBootstrap() {
    this.schedule();
    this.timer = setInterval(() => this.schedule(), this.config.sweepIntervalMs);
  }

  /** Queues one sweep after the one running; a failed sweep is logged and the next one runs all the same. */
  private schedule(): void {
    this.running = this.running.then(async () => {
      try {
        await this.sweep();
      } catch (err) {
        this.infra.logger.error({ err: String(err) }, 'expiry sweep failed; the next one retries');
      }
    });
  }

  async onApplicationShutdown() {
    clearInterval(this.timer);
    await this.running;
  }

  /** Expires every due approval once; returns how many it expired. */
  async sweep(now = new Date()): Promise<number> {
    let expired = 0;
    for (const row of await this.inbox.due(now)) {
      try {
        const r = await this.calls.execute(
          row.tenant,
          row.call_id,
          { type: 'ExpireApproval', data: { call_id: row.call_id, approval_id: row.approval_id } },
          { correlationid: row.call_id, causationid: randomUUID() },
        );
        expired += r.events.length > 0 ? 1 : 0;
      } catch (err) {
        // Decided meanwhile (approved or denied first): the inbox catches up from the log.
        if (!isOrmuzError(err)) this.infra.logger.error({ err, approval: row.approval_id }, 'expiry failed');
      }
    }
    return expired;
  }
}
