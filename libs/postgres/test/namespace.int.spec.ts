/**
 * A database belongs to the first namespace that opens it; every other namespace is refused before it writes
 * anything. A namespace's default database is created on first use.
 */
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import {
  createTestDatabase,
  openTestDatabase,
  randomNamespace,
  waitFor,
  type OpenTestDatabase,
  type TestDatabase,
} from '@ormuz/testing';
import {
  claimNamespace,
  DatabaseMissingError,
  NamespaceMismatchError,
  openDatabase,
  PostgresUnavailableError,
} from '../src/index.js';

describe('claimNamespace', () => {
  let database: OpenTestDatabase<unknown>;
  let db: Kysely<unknown>;

  beforeAll(async () => {
    database = await openTestDatabase();
    db = database.db;
  });
  afterAll(() => database?.drop());

  it('records the first namespace and accepts it again', async () => {
    const first = await claimNamespace(db, 'alpha');
    expect(first).toMatchObject({ namespace: 'alpha', claimed: true });
    const again = await claimNamespace(db, 'alpha');
    expect(again).toMatchObject({ namespace: 'alpha', claimed: false, claimedAt: first.claimedAt });
  });

  it('refuses another namespace, naming both and the fix', async () => {
    const err = await claimNamespace(db, 'beta').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NamespaceMismatchError);
    expect(err).toMatchObject({
      code: 'namespace_mismatch',
      owner: 'alpha',
      requested: 'beta',
      database: database.name,
    });
    expect((err as Error).message).toMatch(/belongs to namespace alpha, not beta/);
    expect((err as Error).message).toMatch(/DATABASE_URL/);
    expect((err as Error).message).toMatch(/ORMUZ_NAMESPACE=alpha/);
    // The refusal changed nothing: the database still belongs to alpha.
    await expect(claimNamespace(db, 'alpha')).resolves.toMatchObject({ namespace: 'alpha' });
  });

  it('lets exactly one of several namespaces racing for a fresh database win', async () => {
    const fresh = await createTestDatabase();
    const handles = await Promise.all(Array.from({ length: 6 }, () => openDatabase({ url: fresh.url, max: 1 })));
    try {
      const results = await Promise.allSettled(handles.map((h, i) => claimNamespace(h, i % 2 === 0 ? 'even' : 'odd')));
      const won = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value.namespace] : []));
      const lost = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
      expect(new Set(won).size).toBe(1);
      expect(won).toHaveLength(3);
      expect(lost).toHaveLength(3);
      for (const e of lost) expect(e).toBeInstanceOf(NamespaceMismatchError);
      expect(results.filter((r) => r.status === 'fulfilled' && r.value.claimed)).toHaveLength(1);
    } finally {
      await Promise.all(handles.map((h) => h.destroy()));
      await fresh.drop();
    }
  });
});

describe('openDatabase', () => {
  const adminUrl = (): URL => new URL(process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test');
  const urlOf = (name: string): string => {
    const u = adminUrl();
    u.pathname = `/${name}`;
    return u.toString();
  };
  const dropDatabase = async (name: string): Promise<void> => {
    const client = new pg.Client({ connectionString: adminUrl().toString() });
    await client.connect();
    try {
      await client.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
    } finally {
      await client.end();
    }
  };

  it('says a missing database is missing, and how to get one, when it may not create it', async () => {
    const name = `ormuz_${randomNamespace('m_')}`;
    const err = await openDatabase({ url: urlOf(name) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DatabaseMissingError);
    expect((err as Error).message).toMatch(new RegExp(`Database "${name}" does not exist`));
    expect((err as Error).message).toMatch(/unset DATABASE_URL/);
  });

  it("creates a namespace's default database once, however many processes start at once", async () => {
    const name = `ormuz_${randomNamespace('d_')}`;
    try {
      const handles = await Promise.all(
        Array.from({ length: 4 }, () => openDatabase({ url: urlOf(name), createIfMissing: true, max: 1 })),
      );
      for (const h of handles) await h.destroy();
      const again = await openDatabase({ url: urlOf(name) });
      await again.destroy();
    } finally {
      await dropDatabase(name);
    }
  });

  it('still names an unreachable server as unreachable', async () => {
    const err = await openDatabase({ url: 'postgres://postgres@127.0.0.1:1/x', createIfMissing: true }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(PostgresUnavailableError);
  });
});

describe('a pool whose idle connections the server ends', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it('reports them, keeps the process alive, and answers the next query on a new connection', async () => {
    // One connection ending is told twice (by the pool, and by the listener on the connection) with the same error.
    const failures = new Set<Error>();
    const db = await openDatabase({ url: database.url, onIdleError: (err) => failures.add(err) });
    try {
      // Two idle connections in the pool, then the server ends every session of the database (as a restart would).
      await Promise.all([sql`select pg_sleep(0)`.execute(db), sql`select pg_sleep(0)`.execute(db)]);
      const admin = new pg.Client({
        connectionString: process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test',
      });
      await admin.connect();
      let ended: number;
      try {
        const { rows } = await admin.query<{ n: number }>(
          `select (count(*) filter (where pg_terminate_backend(pid)))::int as n from pg_stat_activity
            where datname = $1 and backend_type = 'client backend'`,
          [database.name],
        );
        ended = rows[0]!.n;
      } finally {
        await admin.end();
      }
      expect(ended).toBeGreaterThan(0);
      // Each ended connection is told when the server's FATAL message reaches its own socket: until the last is told,
      // the pool may still hand it out, and the query below would meet it.
      await waitFor(() => failures.size >= ended, { message: 'every ended connection to be reported' });
      for (const failure of failures) expect(failure.message).toMatch(/terminating connection/);
      const { rows } = await sql<{ one: number }>`select 1 as one`.execute(db);
      expect(rows).toEqual([{ one: 1 }]);
    } finally {
      await db.destroy();
    }
  });
});
