import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { INFRA, PeriodicTask, type Infrastructure } from '@ormuz/service-kit';
import type { ErasableKind } from '../domain/archive-chain.js';
import { AUDIT_CONFIG, type AuditConfig } from '../config.js';
import { ArchiveEraser, type Erased } from '../persistence/archive-eraser.js';
import { RetentionRepository, type RetentionRule } from '../persistence/retention.repository.js';

const DAY_MS = 86_400_000;

/**
 * Applies tenants' retention rules: at start, every `AUDIT_RETENTION_INTERVAL_MS`, and when a rule is set. A rule of
 * N days for a kind erases that kind of data recorded more than N days ago.
 */
@Injectable()
export class RetentionSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly task: PeriodicTask;

  constructor(
    private readonly rules: RetentionRepository,
    private readonly eraser: ArchiveEraser,
    @Inject(INFRA) private readonly infra: Infrastructure,
    @Inject(AUDIT_CONFIG) config: AuditConfig,
  ) {
    this.task = new PeriodicTask(() => this.sweep(), {
      intervalMs: config.retentionIntervalMs,
      logger: infra.logger,
      failure: 'retention sweep failed',
    });
  }

  onApplicationBootstrap() {
    this.task.start();
  }

  async onApplicationShutdown() {
    await this.task.stop();
  }

  /** Applies one tenant's rule now. */
  async apply(rule: RetentionRule, now = new Date()): Promise<Erased> {
    let events = 0;
    let calls = 0;
    const kinds: [ErasableKind, number | null][] = [
      ['payloads', rule.payloads_days],
      ['results', rule.results_days],
    ];
    for (const [kind, days] of kinds) {
      if (days === null) continue;
      const erased = await this.eraser.erase(rule.tenant, new Date(now.getTime() - days * DAY_MS), [kind]);
      events += erased.events;
      calls += erased.calls;
    }
    if (events + calls > 0) this.infra.logger.info({ tenant: rule.tenant, events, calls }, 'retention erased data');
    return { events, calls };
  }

  /** Applies every tenant's rule once. */
  private async sweep(): Promise<void> {
    for (const rule of await this.rules.bounded()) await this.apply(rule);
  }
}
