/**
 * A pooled connection the server ends while it is handed out (inside a transaction, between two statements) fails
 * that transaction and is reported, without crashing the process; the pool then answers on a new connection.
 */
import pg from 'pg';
import { sql } from 'kysely';
import { createTestDatabase, waitFor, type TestDatabase } from '@ormuz/testing';
import { openDatabase } from '../src/index.js';

describe('openDatabase: a connection that ends while in use', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it('fails the transaction holding it, reports it, and serves the next query on a new connection', async () => {
    const reported: Error[] = [];
    const db = await openDatabase({ url: database.url, onIdleError: (err) => void reported.push(err) });
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      const failed = await db
        .transaction()
        .execute(async (trx) => {
          const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
          await admin.query('select pg_terminate_backend($1)', [rows[0]!.pid]);
          // The end of the session reaches the client as an error event, with no query in flight to take it.
          await waitFor(() => reported.length > 0, { message: 'the ended connection to be reported' });
          await sql`select 1`.execute(trx);
        })
        .then(
          () => undefined,
          (err: unknown) => err as Error,
        );
      expect(failed).toBeInstanceOf(Error);
      expect(reported[0]?.message).toMatch(/terminat/i);
      const { rows } = await sql<{ one: number }>`select 1 as one`.execute(db);
      expect(rows).toEqual([{ one: 1 }]);
    } finally {
      await admin.end();
      await db.destroy();
    }
  });
});
