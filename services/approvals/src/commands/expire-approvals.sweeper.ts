import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { isOrmuzError } from '@ormuz/contracts';
import { INFRA, PeriodicTask, ToolCalls, type Infrastructure } from '@ormuz/service-kit';
import { APPROVALS_CONFIG, type ApprovalsConfig } from '../config.js';
import { InboxRepository } from '../persistence/inbox.repository.js';

/**
 * Expires pending approvals whose time has passed. Expiry is a decision on the log like any other, and what is due
 * is read from the inbox (projected from the log), never from a timer in memory: the timer only says when to look.
 * It looks at start too, so approvals that fell due while the service was down expire as soon as it is back.
 */
@Injectable()
export class ExpireApprovalsSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly task: PeriodicTask;

  constructor(
    private readonly inbox: InboxRepository,
    private readonly calls: ToolCalls,
    @Inject(APPROVALS_CONFIG) config: ApprovalsConfig,
    @Inject(INFRA) private readonly infra: Infrastructure,
  ) {
    this.task = new PeriodicTask(() => this.sweep(), {
      intervalMs: config.sweepIntervalMs,
      logger: infra.logger,
      failure: 'expiry sweep failed; the next one retries',
    });
  }

  onApplicationBootstrap() {
    this.task.start();
  }

  async onApplicationShutdown() {
    await this.task.stop();
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
