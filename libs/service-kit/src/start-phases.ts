/**
 * Names what a starting service is waiting on. A start that stalls (a JetStream API that does not answer, a lock held
 * by another process, a consumer that cannot be created) would otherwise show nothing between the last line logged and
 * the orchestrator's timeout; here each phase that takes longer than `warnAfterMs` says so, and again at each further
 * interval, until it ends.
 */
import type { Logger } from 'pino';

export class StartPhases {
  private readonly started = Date.now();

  constructor(
    private readonly logger: Logger,
    private readonly warnAfterMs = 10_000,
  ) {}

  /** Runs one phase of the start, warning while it takes longer than the bound. */
  async run<T>(phase: string, work: () => Promise<T>): Promise<T> {
    const begun = Date.now();
    const timer = setInterval(() => {
      this.logger.warn(
        { phase, phaseMs: Date.now() - begun, startMs: Date.now() - this.started },
        `start: still waiting on ${phase}`,
      );
    }, this.warnAfterMs);
    timer.unref();
    try {
      return await work();
    } finally {
      clearInterval(timer);
    }
  }
}
