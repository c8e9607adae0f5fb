/**
 * One leader among several leases of the same name: the first to try leads; the next takes over when the leader
 * stops, and a lease whose Postgres session dies says so before anyone leads again.
 */
import pg from 'pg';
import { createTestDatabase, waitFor, type TestDatabase } from '@ormuz/testing';
import { LeaderLease } from '../src/index.js';

describe('LeaderLease', () => {
  let db: TestDatabase;
  const leases: LeaderLease[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => {
    for (const lease of leases.splice(0)) await lease.stop();
  });
  afterAll(() => db.drop());

  function lease(name: string, log: string[], id: string): LeaderLease {
    const l = new LeaderLease({
      url: db.url,
      name,
      retryMs: 50,
      onAcquired: () => void log.push(`${id} leads`),
      onLost: () => void log.push(`${id} lost`),
    });
    leases.push(l);
    return l;
  }

  it('lets one lease lead and hands over when it stops', async () => {
    const log: string[] = [];
    const a = lease('ns:svc', log, 'a');
    const b = lease('ns:svc', log, 'b');
    await a.start();
    await b.start();
    expect([a.isLeader, b.isLeader]).toEqual([true, false]);
    await a.stop();
    await waitFor(() => b.isLeader, { message: 'b leads' });
    expect(log).toEqual(['a leads', 'a lost', 'b leads']);
  });

  it('keeps leases of other names apart', async () => {
    const log: string[] = [];
    const a = lease('ns:one', log, 'a');
    const b = lease('ns:two', log, 'b');
    await a.start();
    await b.start();
    expect([a.isLeader, b.isLeader]).toEqual([true, true]);
  });

  it('ends leadership when its session is killed; then one lease leads again', async () => {
    const log: string[] = [];
    const a = lease('ns:killed', log, 'a');
    const b = lease('ns:killed', log, 'b');
    await a.start();
    await b.start();
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    try {
      // The only session holding an advisory lock in this database is the leader's (a follower's try took none).
      const { rowCount } = await admin.query(
        `select pg_terminate_backend(pid) from pg_locks
         where locktype = 'advisory' and granted and database = (select oid from pg_database where datname = current_database())`,
      );
      expect(rowCount).toBe(1);
    } finally {
      await admin.end();
    }
    // Whichever lease tries first after the loss leads again (the old leader's process is still alive); never both.
    await waitFor(() => log.includes('a lost') && log.filter((l) => l.endsWith('leads')).length === 2, {
      message: 'a lost, then one lease leads',
    });
    expect(log.slice(0, 2)).toEqual(['a leads', 'a lost']);
    expect([a.isLeader, b.isLeader].filter(Boolean)).toHaveLength(1);
  });
});
