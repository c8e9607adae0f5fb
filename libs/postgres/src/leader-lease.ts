/**
 * One leader among a service's replicas, decided by a Postgres session advisory lock: the replica whose session holds
 * the lock leads; when its process or connection dies, Postgres releases the lock and another replica takes it at its
 * next try. Used for work that must run in one place per deployment (a projection with a single checkpoint, a
 * deadline sweeper), while every replica keeps serving its own connections.
 */
import pg from 'pg';

export interface LeaderLeaseOptions {
  readonly url: string;
  /** What is led, e.g. `ormuz:device-bridge`; replicas of one deployment must use the same name. */
  readonly name: string;
  /** Called when this replica becomes the leader. */
  readonly onAcquired: () => Promise<void> | void;
  /** Called when leadership ends (connection lost or {@link LeaderLease.stop}); stop leader-only work here. */
  readonly onLost: () => Promise<void> | void;
  /** How often a follower tries to take the lock, in ms. Default 1000. */
  readonly retryMs?: number;
  readonly onError?: (err: unknown) => void;
}

/** The word after the process id in a lease session's `application_name`. */
const LEASE_APPLICATION = 'ormuz-lease';

/** Who holds lease `name`: the holder's process id and host as its session reports them, or undefined when free. */
export async function leaseHolder(
  db: { query: pg.ClientBase['query'] } | pg.Pool,
  name: string,
): Promise<{ pid: number; clientAddress: string | null } | undefined> {
  // pg_try_advisory_lock(bigint) keys the lock by the key's high and low 32 bits (classid, objid), objsubid 1.
  const { rows } = await (db as pg.Pool).query<{ application_name: string; client_addr: string | null }>(
    `select a.application_name, a.client_addr::text as client_addr
       from pg_locks l join pg_stat_activity a on a.pid = l.pid
      where l.locktype = 'advisory' and l.granted and l.objsubid = 1
        and l.database = (select oid from pg_database where datname = current_database())
        and l.objid = (hashtext($1)::bigint & 4294967295)::oid
        and l.classid = ((hashtext($1)::bigint >> 32) & 4294967295)::oid`,
    [name],
  );
  const row = rows[0];
  const pid = Number(row?.application_name.split(' ')[0]);
  return row && Number.isSafeInteger(pid) ? { pid, clientAddress: row.client_addr } : undefined;
}

export class LeaderLease {
  private client: pg.Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  private leading = false;
  private stopped = false;
  private attempt: Promise<void> = Promise.resolve();

  constructor(private readonly opts: LeaderLeaseOptions) {}

  get isLeader(): boolean {
    return this.leading;
  }

  /** Starts trying; resolves after the first attempt (so a lone replica leads once this resolves). */
  async start(): Promise<void> {
    await this.tryOnce();
    this.schedule();
  }

  /** Gives up leadership (the lock is released with the session) and stops trying. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.attempt;
    await this.lose();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.attempt = this.tryOnce().finally(() => this.schedule());
    }, this.opts.retryMs ?? 1000);
    this.timer.unref();
  }

  private async tryOnce(): Promise<void> {
    if (this.leading || this.stopped) return;
    try {
      const client = (this.client ??= await this.connect());
      const { rows } = await client.query<{ locked: boolean }>('select pg_try_advisory_lock(hashtext($1)) as locked', [
        this.opts.name,
      ]);
      if (!rows[0]?.locked || this.stopped) return;
      this.leading = true;
      await this.opts.onAcquired();
    } catch (err) {
      this.opts.onError?.(err);
      await this.lose();
    }
  }

  private async connect(): Promise<pg.Client> {
    const client = new pg.Client({
      connectionString: this.opts.url,
      connectionTimeoutMillis: 3000,
      keepAlive: true,
      // Who holds a lease shows in pg_stat_activity, and leaseHolder reads it: the process id first (the name is cut
      // to 63 bytes).
      application_name: `${process.pid} ${LEASE_APPLICATION} ${this.opts.name}`,
    });
    // A dead session has released the lock: whatever this replica still does as leader must stop.
    client.on('error', (err) => {
      this.opts.onError?.(err);
      void this.lose();
    });
    client.on('end', () => void this.lose());
    try {
      await client.connect();
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    // A process that dies closes its socket and Postgres releases the lock at once; a host that vanishes sends nothing.
    // Keepalives on the server's side of this session end it (and release the lock) within about 11 s instead of the
    // system's default of hours.
    await client
      .query('set tcp_keepalives_idle = 5; set tcp_keepalives_interval = 2; set tcp_keepalives_count = 3')
      .catch(async (err: unknown) => {
        await client.end().catch(() => undefined);
        throw err;
      });
    return client;
  }

  private async lose(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    const wasLeading = this.leading;
    this.leading = false;
    // The leader's work stops before the lock is released, so that two leaders never work at once.
    try {
      if (wasLeading) await this.opts.onLost();
    } finally {
      if (client) await client.end().catch(() => undefined);
    }
  }
}
