/**
 * Whether a service process can do its work now: what `GET /readyz` answers (decision 0022). Four checks, run at once
 * and each bounded in time, so a dependency that hangs fails its own check instead of the probe:
 *
 * - `nats`: the connection is open and the server answers a ping;
 * - `streams`: every stream the service writes or reads exists;
 * - `postgres`: the database answers a query;
 * - `consumers`: every projection and reactor the process runs is running, and none has more than `maxLag` messages
 *   after its checkpoint. A process that runs none (a standby that does not hold its service's lease, decision 0033;
 *   policy's commands role) passes: it serves commands.
 *
 * Parked messages do not make a process unready: every replica would be taken out for one bad event, and the
 * operator's fix (`ormuz projections retry`) needs the service up.
 */
import type { ContextName, ProbeCheckV1, ReadinessV1 } from '@ormuz/contracts';
import { streamName } from '@ormuz/event-log';
import { sql } from 'kysely';
import type { Infrastructure } from './infrastructure.js';

/** What readiness tolerates: see `HealthSettings`. */
export interface ReadinessBounds {
  /** Messages after its checkpoint a running consumer may have. */
  readonly maxLag: number;
  /** How long one check may take, in milliseconds. */
  readonly checkTimeoutMs: number;
}

export class ReadinessCheck {
  constructor(
    private readonly infra: Infrastructure,
    private readonly streams: readonly ContextName[],
    private readonly bounds: ReadinessBounds,
  ) {}

  /** Runs every check; never throws (a check that throws or times out is a failed check with its error). */
  async evaluate(): Promise<ReadinessV1> {
    const checks = await Promise.all([
      this.bounded('nats', () => this.nats()),
      this.bounded('streams', () => this.streamsExist()),
      this.bounded('postgres', () => this.postgres()),
      this.bounded('consumers', () => this.consumers()),
    ]);
    const failed = checks.filter((c) => !c.ok).map((c) => c.name);
    return { service: this.infra.service, ready: failed.length === 0, failed, checks };
  }

  private async nats(): Promise<ProbeCheckV1> {
    if (this.infra.nc.isClosed()) return { name: 'nats', ok: false, error: 'the NATS connection is closed' };
    await this.infra.nc.rtt();
    return { name: 'nats', ok: true };
  }

  private async streamsExist(): Promise<ProbeCheckV1> {
    const missing: string[] = [];
    for (const context of this.streams) {
      const name = streamName(this.infra.config.namespace, context);
      const found = await this.infra.jsm.streams.info(name).then(
        () => true,
        (err: unknown) => {
          // Only "not found" means missing; anything else (no answer, no permission) is the check's own failure.
          if (err instanceof Error && /not found/i.test(err.message)) return false;
          throw err;
        },
      );
      if (!found) missing.push(name);
    }
    return missing.length === 0
      ? { name: 'streams', ok: true }
      : { name: 'streams', ok: false, error: `missing stream${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}` };
  }

  private async postgres(): Promise<ProbeCheckV1> {
    await sql`select 1`.execute(this.infra.db);
    return { name: 'postgres', ok: true };
  }

  private async consumers(): Promise<ProbeCheckV1> {
    const statuses = await this.infra.consumers.status();
    const consumers = statuses.map((s) => ({ name: s.name, running: s.running, lag: s.lag }));
    const problems = statuses.flatMap((s) => {
      if (!s.running) return [`${s.name} is stopped`];
      if (s.lag === null) return [`${s.name}: its NATS consumer does not answer, so its lag is unknown`];
      if (s.lag > this.bounds.maxLag) return [`${s.name} lags ${s.lag} messages (bound ${this.bounds.maxLag})`];
      return [];
    });
    return problems.length === 0
      ? { name: 'consumers', ok: true, consumers }
      : { name: 'consumers', ok: false, error: problems.join('; '), consumers };
  }

  private async bounded(name: ProbeCheckV1['name'], check: () => Promise<ProbeCheckV1>): Promise<ProbeCheckV1> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<ProbeCheckV1>((resolve) => {
      timer = setTimeout(
        () => resolve({ name, ok: false, error: `no answer within ${this.bounds.checkTimeoutMs} ms` }),
        this.bounds.checkTimeoutMs,
      );
    });
    try {
      return await Promise.race([
        check().catch((err: unknown) => ({
          name,
          ok: false,
          error: err instanceof Error ? err.message || err.name : String(err),
        })),
        timeout,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }
}
