import pg from 'pg';
import type { Kysely } from 'kysely';
import { openDatabase, redactDatabaseUrl } from '@ormuz/postgres';
import { testEnv } from './env.js';
import { randomNamespace } from './namespace.js';

/** A Postgres database created for one test file; drop it in `afterAll`. */
export interface TestDatabase {
  /** Connection URL of the new database (same server and user as the admin URL). */
  readonly url: string;
  /** Its name, `ormuz_t_<8 hex digits>`. */
  readonly name: string;
  /** Drops the database, closing any connections still open to it. Safe to call twice. */
  drop(): Promise<void>;
}

/**
 * Creates an empty database on the test server, so each spec file migrates and writes in isolation.
 *
 * @param adminUrl a database the test user can connect to and run `CREATE DATABASE` from; default
 *   `testEnv().databaseUrl`.
 * @throws the `pg` error, with the server's URL (password hidden) in the message, when the server cannot be reached
 *   or refuses.
 */
export async function createTestDatabase(adminUrl: string = testEnv().databaseUrl): Promise<TestDatabase> {
  const name = `ormuz_${randomNamespace('t_')}`;
  await admin(adminUrl, `CREATE DATABASE "${name}"`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  let dropped = false;
  return {
    url: url.toString(),
    name,
    async drop() {
      if (dropped) return;
      await admin(adminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      dropped = true;
    },
  };
}

/** A {@link TestDatabase} with a kysely pool open on it. */
export interface OpenTestDatabase<DB> extends TestDatabase {
  readonly db: Kysely<DB>;
  /** Closes the pool, then drops the database. Safe to call twice. */
  drop(): Promise<void>;
}

/**
 * Creates a database for one test file, as {@link createTestDatabase}, and opens a pool on it (`openDatabase` of
 * `@ormuz/postgres`); `drop()` in `afterAll` closes the pool and drops the database.
 */
export async function openTestDatabase<DB>(adminUrl?: string): Promise<OpenTestDatabase<DB>> {
  const database = await createTestDatabase(adminUrl);
  let db: Kysely<DB>;
  try {
    db = await openDatabase<DB>({ url: database.url });
  } catch (err) {
    await database.drop();
    throw err;
  }
  let closed = false;
  return {
    url: database.url,
    name: database.name,
    db,
    async drop() {
      if (!closed) await db.destroy();
      closed = true;
      await database.drop();
    },
  };
}

async function admin(adminUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  try {
    await client.connect();
    await client.query(statement);
  } catch (err) {
    throw new Error(
      `${statement} failed on ${redactDatabaseUrl(adminUrl)}: ${err instanceof Error ? err.message : String(err)}`,
      {
        cause: err,
      },
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}
