import pg from 'pg';
import { createTestDatabase, testEnv, type TestDatabase } from '../src/index.js';

async function query<R extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

async function exists(name: string): Promise<boolean> {
  const rows = await query(testEnv().databaseUrl, 'SELECT 1 FROM pg_database WHERE datname = $1', [name]);
  return rows.length === 1;
}

describe('createTestDatabase', () => {
  const created: TestDatabase[] = [];
  afterAll(async () => {
    await Promise.all(created.map((db) => db.drop()));
  });

  it('creates an empty database that can be written to', async () => {
    const db = await createTestDatabase();
    created.push(db);
    expect(db.name).toMatch(/^ormuz_t_[0-9a-f]{8}$/);
    expect(new URL(db.url).pathname).toBe(`/${db.name}`);
    expect(await exists(db.name)).toBe(true);

    await query(db.url, 'CREATE TABLE calls (id text PRIMARY KEY)');
    await query(db.url, "INSERT INTO calls VALUES ('c1')");
    expect(await query(db.url, 'SELECT id FROM calls')).toEqual([{ id: 'c1' }]);
    const [current] = await query<{ name: string }>(db.url, 'SELECT current_database() AS name');
    expect(current?.name).toBe(db.name);
  });

  it('gives every caller its own database', async () => {
    const [a, b] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    created.push(a, b);
    expect(a.name).not.toBe(b.name);
    await query(a.url, 'CREATE TABLE only_in_a (x int)');
    const tables = await query(b.url, "SELECT 1 FROM information_schema.tables WHERE table_name = 'only_in_a'");
    expect(tables).toEqual([]);
  });

  it('drops the database even while a connection to it is open, and a second drop is harmless', async () => {
    const db = await createTestDatabase();
    const open = new pg.Client({ connectionString: db.url });
    await open.connect();
    open.on('error', () => undefined);
    await db.drop();
    await db.drop();
    expect(await exists(db.name)).toBe(false);
    await open.end().catch(() => undefined);
  });
});
