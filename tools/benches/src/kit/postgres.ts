import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** DATABASE_URL (an admin database the user may CREATE DATABASE from), default postgres://postgres@127.0.0.1:5432/postgres. */
export const adminDbUrl = (env: NodeJS.ProcessEnv = process.env): string =>
  env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

/** A fresh database name for one run: `ormuz_bench_<8 hex>`. */
export const benchDbName = (): string => `ormuz_bench_${randomBytes(4).toString('hex')}`;

/** `adminUrl` with its database replaced by `name`. */
export function databaseUrl(adminUrl: string, name: string): string {
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Runs one statement on a connection of its own to `adminUrl`, closed afterwards. */
export async function adminQuery(adminUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  try {
    await client.connect();
    await client.query(statement);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** CREATE DATABASE "<name>" through `adminUrl`. */
export const createDatabase = (adminUrl: string, name: string): Promise<void> =>
  adminQuery(adminUrl, `CREATE DATABASE "${name}"`);

/** DROP DATABASE IF EXISTS "<name>" WITH (FORCE) through `adminUrl`. */
export const dropDatabase = (adminUrl: string, name: string): Promise<void> =>
  adminQuery(adminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
