import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';
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
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly rules: RetentionRepository,
    private readonly eraser: ArchiveEraser,
    @Inject(INFRA) private readonly infra: Infrastructure,
    @Inject(AUDIT_CONFIG) private readonly config: AuditConfig,
  ) {}

  onApplicationBootstrap() {
    this.sweepInBackground();
    this.timer = setInterval(() => this.sweepInBackground(), this.config.retentionIntervalMs);
    this.timer.unref();
  }

  async onApplicationShutdown() {
    clearInterval(this.timer);
    await this.running;
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

  private sweepInBackground(): void {
    this.running = this.running.then(async () => {
      try {
        for (const rule of await this.rules.bounded()) await this.apply(rule);
      } catch (err) {
        // The next sweep tries again; a failing sweep must not stop the service.
        this.infra.logger.error({ err }, 'retention sweep failed');
      }
    });
  }
}
