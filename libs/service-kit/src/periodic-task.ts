import type { Logger } from 'pino';

/**
 * Runs a task at start and every `intervalMs` after, one run at a time: a run that falls due while another is going
 * waits for it (two sweeps never race on the same rows), and a failed run is logged while the next one runs all the
 * same (a failing sweep must not stop the service). The timer alone never keeps the process alive. `stop` waits for
 * the run under way, so a service shuts down after its work, not in the middle of it.
 */
export class PeriodicTask {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly task: () => Promise<unknown>,
    private readonly options: {
      readonly intervalMs: number;
      readonly logger: Logger;
      /** What the log says when a run fails. */
      readonly failure: string;
    },
  ) {}

  start(): void {
    this.queue();
    this.timer = setInterval(() => this.queue(), this.options.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** Queues one run after the one under way. */
  private queue(): void {
    this.running = this.running.then(async () => {
      try {
        await this.task();
      } catch (err) {
        this.options.logger.error({ err }, this.options.failure);
      }
    });
  }
}
