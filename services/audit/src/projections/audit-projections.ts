import { Inject, Injectable } from '@nestjs/common';
import { CONTEXTS, type ContextName } from '@ormuz/contracts';
import { ProjectionRunner, type Projection } from '@ormuz/event-log';
import { INFRA, LeadingConsumers, LeadingConsumersHost, type Infrastructure } from '@ormuz/service-kit';
import { AUDIT_CONFIG, type AuditConfig } from '../config.js';
import { RebuildInProgressError } from '../domain/errors.js';
import { callRecordsProjection } from './call-records.projection.js';
import { archiveProjectionName, eventArchiveProjection } from './event-archive.projection.js';

/** Every context with a stream; the archive follows new contexts without code changes here. */
export const AUDITED_CONTEXTS = Object.keys(CONTEXTS) as ContextName[];

/** One running read model under its public name (`call_records`, `archive_calls`, …). */
export interface AuditProjection {
  readonly name: string;
  readonly projection: Projection;
  readonly runner: ProjectionRunner;
}

/**
 * Runs audit's projections: the archive of each context's stream and the call records. Each has its own durable
 * consumer and checkpoint, so a message one of them parks does not hold back the others. They run in the replica that
 * holds audit's lease (LeadingConsumers); every replica answers the queries, reading checkpoints from Postgres.
 */
@Injectable()
export class AuditProjections extends LeadingConsumersHost {
  private readonly byName = new Map<string, AuditProjection>();
  private readonly rebuilds = new Map<string, Promise<void>>();
  /** Stream sequence each rebuilt projection must reach before its table is whole again. */
  private readonly targets = new Map<string, number>();
  protected readonly leading: LeadingConsumers;

  constructor(
    @Inject(INFRA) private readonly infra: Infrastructure,
    @Inject(AUDIT_CONFIG) config: AuditConfig,
  ) {
    super();
    const ns = config.namespace;
    const all: [string, Projection][] = [
      ['call_records', callRecordsProjection(ns)],
      ...AUDITED_CONTEXTS.map((c): [string, Projection] => [archiveProjectionName(c), eventArchiveProjection(ns, c)]),
    ];
    for (const [name, projection] of all) {
      const runner = new ProjectionRunner(infra.js, infra.jsm, infra.db, projection, {
        logger: infra.logger,
        batchSize: config.batchSize,
        pullExpiresMs: config.pullExpiresMs,
      });
      this.byName.set(name, { name, projection, runner });
    }
    this.leading = new LeadingConsumers(
      infra,
      'audit',
      this.list().map((p) => p.runner),
    );
  }

  /** A rebuild under way finishes before the consumers stop. */
  override async onApplicationShutdown() {
    await Promise.allSettled(this.rebuilds.values());
    await super.onApplicationShutdown();
  }

  list(): AuditProjection[] {
    return [...this.byName.values()];
  }

  /** The projection named `name`; the transport's schema only lets known names through. */
  get(name: string): AuditProjection {
    const p = this.byName.get(name);
    if (!p) throw new Error(`unknown audit projection ${name}`);
    return p;
  }

  /**
   * True from the start of a rebuild until the projection has applied everything that was in its stream then, as far
   * as this replica knows (it started the rebuild); `checkpoint` is where the projection stands.
   */
  isRebuilding(name: string, checkpoint: number): boolean {
    return this.rebuilds.has(name) || (this.targets.get(name) ?? 0) > checkpoint;
  }

  /**
   * Empties one projection and restarts it from sequence 1 (ProjectionRunner.rebuild; on a standby, the leader's
   * runner restarts from the emptied checkpoint). Resolves with the stream's last sequence at that moment: the rebuild
   * has caught up when the checkpoint reaches it.
   */
  async rebuild(name: string): Promise<{ stream: string; targetSeq: number }> {
    const { projection, runner } = this.get(name);
    if (this.rebuilds.has(name)) throw new RebuildInProgressError(name);
    const targetSeq = await this.lastSeq(projection.stream);
    this.targets.set(name, targetSeq);
    const done = runner.rebuild().finally(() => this.rebuilds.delete(name));
    this.rebuilds.set(name, done);
    await done;
    this.infra.logger.info({ projection: name, targetSeq }, 'projection rebuilding from sequence 1');
    return { stream: projection.stream, targetSeq };
  }

  /** Last sequence of `stream` (0 when empty). */
  async lastSeq(stream: string): Promise<number> {
    const info = await this.infra.jsm.streams.info(stream);
    return info.state.last_seq;
  }

  /** Resolves once every projection has applied everything now in its stream (tests, the demo, the CLI). */
  async catchUp(timeoutMs = 30_000): Promise<void> {
    await Promise.all(this.list().map((p) => p.runner.catchUp(timeoutMs)));
  }
}
