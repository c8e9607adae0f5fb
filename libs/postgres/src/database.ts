/**
 * Postgres access through kysely: one pool per process, one schema per service, migrations run at start and by
 * `ormuz migrate`. Repositories are the only code that touches kysely.
 */
import { Kysely, PostgresDialect, sql } from 'kysely';
import { Migrator, type Migration, type MigrationProvider } from 'kysely/migration';
import pg from 'pg';
import Cursor from 'pg-cursor';
import { OrmuzError } from '@ormuz/contracts';

// Postgres BIGINT (stream sequences) arrives as text by default; sequences stay far below 2^53.
pg.types.setTypeParser(20, (v) => Number.parseInt(v, 10));

/** Postgres cannot be reached. */
export class PostgresUnavailableError extends OrmuzError {
  readonly code = 'postgres_unavailable';
  constructor(
    readonly url: string,
    reason: string,
  ) {
    super(
      `PostgreSQL is not reachable at ${redactDatabaseUrl(url)} (${reason}). Start it (for example ` +
        '`pg_ctlcluster 15 main start` or `docker compose up postgres`), or point DATABASE_URL at a running server.',
    );
  }
}

/**
 * A database URL fit for a message: its password, if any, replaced by `***`. A string that does not parse as a URL is
 * not echoed (it may hold a password where the parser could not find one).
 */
export function redactDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable DATABASE_URL)';
  }
}

/** The server answers, but the database in the URL does not exist (and was not to be created). */
export class DatabaseMissingError extends OrmuzError {
  readonly code = 'database_missing';
  constructor(
    readonly url: string,
    readonly database: string,
  ) {
    super(
      `Database "${database}" does not exist on ${redactDatabaseUrl(url)}. Create it (for example \`createdb ${database}\`), or ` +
        'unset DATABASE_URL: each namespace then gets its own database, named after the namespace, created on first start.',
    );
  }
}

export interface DatabaseOptions {
  readonly url: string;
  /** Pool size. Default 10. */
  readonly max?: number;
  /**
   * Create the database when the server answers that it does not exist (through the server's `postgres` database).
   * Default false: a missing database is then a {@link DatabaseMissingError}.
   */
  readonly createIfMissing?: boolean;
  /**
   * Told when a pooled connection fails (the server restarted, went away, or ended the session), idle or in use: the
   * pool drops that connection and the next query opens a new one, and a query or transaction that held it fails on
   * its own promise, so this is a report, not a failure. Default: nothing is told.
   */
  readonly onIdleError?: (err: Error) => void;
}

/**
 * Creates a pool and checks that the server answers; throws {@link PostgresUnavailableError} when it does not and
 * {@link DatabaseMissingError} when the database does not exist and `createIfMissing` is not set.
 */
export async function openDatabase<DB>(opts: DatabaseOptions): Promise<Kysely<DB>> {
  try {
    return await connect<DB>(opts);
  } catch (err) {
    if (!isMissingDatabase(err)) throw unavailable(opts.url, err);
    const name = databaseName(opts.url);
    if (!opts.createIfMissing) throw new DatabaseMissingError(opts.url, name);
    await createDatabase(opts.url, name);
    return connect<DB>(opts).catch((again: unknown) => {
      throw unavailable(opts.url, again);
    });
  }
}

/**
 * How long a new connection may take before Postgres counts as unavailable. Generous: on a loaded machine (a service
 * restarting beside its peers, CI) a connection can take seconds, and "unavailable" then names the wrong fault.
 */
const CONNECT_TIMEOUT_MS = 10_000;

async function connect<DB>(opts: DatabaseOptions): Promise<Kysely<DB>> {
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.max ?? 10,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  });
  // Without a listener, an idle connection the server ends (a restart, a terminated session) crashes the process.
  pool.on('error', (err) => opts.onIdleError?.(err));
  // The same for a connection that ends while handed out (a transaction between two statements, say): pg fails the
  // query in flight and then emits the error on the client, where the pool listens only while the client is idle, so
  // a database that went away would crash the process instead of failing the work, which retries once it is back.
  pool.on('connect', (client) => client.on('error', (err) => opts.onIdleError?.(err)));
  // `cursor` lets a repository stream a long result (`.stream()`) a batch of rows at a time.
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool, cursor: Cursor }) });
  try {
    await sql`select 1`.execute(db);
  } catch (err) {
    await db.destroy();
    throw err;
  }
  return db;
}

function unavailable(url: string, err: unknown): PostgresUnavailableError {
  return new PostgresUnavailableError(url, err instanceof Error ? err.message : String(err));
}

// 3D000 invalid_catalog_name: "database ... does not exist".
const isMissingDatabase = (err: unknown): boolean => (err as { code?: unknown } | null)?.code === '3D000';

function databaseName(url: string): string {
  return decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
}

async function createDatabase(url: string, name: string): Promise<void> {
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString(), connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  try {
    await client.connect();
    await client.query(`create database ${pg.escapeIdentifier(name)}`);
  } catch (err) {
    // Several services start at once: the losers of the race see duplicate_database (or the catalog's unique index).
    const code = (err as { code?: unknown }).code;
    if (code !== '42P04' && code !== '23505') throw unavailable(url, err);
  } finally {
    await client.end().catch(() => undefined);
  }
}

class RecordProvider implements MigrationProvider {
  constructor(private readonly migrations: Record<string, Migration>) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    return this.migrations;
  }
}

/**
 * Creates `schema` if needed and applies `migrations` (name → migration, applied in name order) inside it, with
 * kysely's migration table kept in the same schema. Concurrent callers are serialised by kysely's lock.
 */
export async function migrateSchema<DB>(
  db: Kysely<DB>,
  schema: string,
  migrations: Record<string, Migration>,
): Promise<string[]> {
  await sql`create schema if not exists ${sql.id(schema)}`.execute(db).catch(async (err: unknown) => {
    // Two processes creating the schema at once: the loser sees a unique violation; the schema exists either way.
    if (!/duplicate|already exists|unique/i.test(String(err))) throw err;
  });
  const migrator = new Migrator({
    // Unqualified names in migrations land in the service's schema.
    db: db.withSchema(schema),
    provider: new RecordProvider(migrations),
    migrationTableSchema: schema,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
