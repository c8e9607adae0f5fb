/**
 * Postgres access through kysely: one pool per process, one schema per service, migrations run at start and by
 * `ormuz migrate`. Repositories are the only code that touches kysely.
 */
import { Kysely, PostgresDialect, sql } from 'kysely';
import { Migrator, type Migration, type MigrationProvider } from 'kysely/migration';
import pg from 'pg';
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
      `PostgreSQL is not reachable at ${redact(url)} (${reason}). Start it (for example ` +
        '`pg_ctlcluster 15 main start` or `docker compose up postgres`), or point DATABASE_URL at a running server.',
    );
  }
}

function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}

export interface DatabaseOptions {
  readonly url: string;
  /** Pool size. Default 10. */
  readonly max?: number;
}

/** Creates a pool and checks that the server answers; throws {@link PostgresUnavailableError} otherwise. */
export async function openDatabase<DB>(opts: DatabaseOptions): Promise<Kysely<DB>> {
  const pool = new pg.Pool({ connectionString: opts.url, max: opts.max ?? 10, connectionTimeoutMillis: 3000 });
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  try {
    await sql`select 1`.execute(db);
  } catch (err) {
    await db.destroy();
    throw new PostgresUnavailableError(opts.url, err instanceof Error ? err.message : String(err));
  }
  return db;
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
