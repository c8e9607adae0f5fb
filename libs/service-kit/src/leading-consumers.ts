/**
 * A service's consumers of the log, run by one replica per namespace: the holder of a {@link LeaderLease} named
 * `<namespace>:<role>` (decision 0033). Every replica serves the service's commands (a NATS queue group); only the
 * leader runs its projections and reactors. When the leader dies its Postgres session ends, the lock is released and a
 * standby takes it at its next try, starting the same consumers from their checkpoints.
 *
 * A standby runs no consumer, so it stays silent to `consumers.status | retry | rebuild` (the leader answers) and its
 * readiness passes on the consumers check: it is ready, since it serves commands.
 */
import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { OperatedConsumer } from './log-consumers.js';
import { LeaderLease } from '@ormuz/postgres';
import type { Infrastructure } from './infrastructure.js';

/** A projection or reaction runner: started when this replica leads, stopped when it no longer does. */
export interface LeadConsumer extends OperatedConsumer {
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface LeadingConsumersOptions {
  /** How often a standby tries to take the lease, in ms; default 1000 (`LeaderLease`). */
  readonly retryMs?: number;
}

export class LeadingConsumers {
  private readonly lease: LeaderLease;
  private started: LeadConsumer[] = [];

  /**
   * `role` names what is led within the namespace (`audit`, `model-loop`, `policy.read-models`): replicas of one
   * deployment must use the same. `consumers` start in the order given and stop in the reverse order.
   */
  constructor(
    private readonly infra: Infrastructure,
    readonly role: string,
    private readonly consumers: readonly LeadConsumer[],
    opts: LeadingConsumersOptions = {},
  ) {
    this.lease = new LeaderLease({
      url: infra.config.databaseUrl,
      name: `${infra.config.namespace}:${role}`,
      onAcquired: () => this.lead(),
      onLost: () => this.follow(),
      onError: (err) => infra.logger.warn({ err: String(err), role }, 'leader lease: Postgres session problem'),
      ...(opts.retryMs === undefined ? {} : { retryMs: opts.retryMs }),
    });
  }

  /** True while this replica runs the consumers. */
  get isLeader(): boolean {
    return this.lease.isLeader;
  }

  /** Takes the lease if it is free (then the consumers run once this resolves) and keeps trying if it is not. */
  start(): Promise<void> {
    return this.lease.start();
  }

  /** Stops the consumers (if they run here) and gives the lease up, so that a standby takes over at once. */
  stop(): Promise<void> {
    return this.lease.stop();
  }

  private async lead(): Promise<void> {
    this.infra.logger.info(
      { role: this.role, pid: process.pid },
      'this replica leads: it runs the consumers of the log',
    );
    // All registered first: until each has started, `consumers.status` and readiness show it as not running.
    for (const consumer of this.consumers) this.infra.consumers.add(consumer);
    try {
      for (const consumer of this.consumers) {
        this.started.push(consumer);
        await consumer.start();
      }
    } catch (err) {
      // The lease stops what started and is given up; this replica or another tries again within a second.
      this.infra.logger.warn(
        { err: String(err), role: this.role },
        'the consumers could not start: giving the lease up',
      );
      throw err;
    }
  }

  private async follow(): Promise<void> {
    const started = this.started.reverse();
    this.started = [];
    for (const consumer of this.consumers) this.infra.consumers.remove(consumer);
    for (const consumer of started) await consumer.stop();
    if (started.length > 0)
      this.infra.logger.info({ role: this.role }, 'this replica no longer leads: consumers stopped');
  }
}

/**
 * A service's provider of its {@link LeadingConsumers}, for the application's life: the lease is sought once the
 * application has started and given up when it shuts down (the consumers stop first, and a standby takes over at once).
 */
export abstract class LeadingConsumersHost implements OnApplicationBootstrap, OnApplicationShutdown {
  protected abstract readonly leading: LeadingConsumers;

  onApplicationBootstrap(): Promise<void> {
    return this.leading.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.leading.stop();
  }
}
