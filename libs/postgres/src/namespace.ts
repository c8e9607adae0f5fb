/**
 * One database belongs to one namespace (decision 0009). The first service or migration that opens a database in a
 * namespace records that namespace in it; from then on every process of another namespace refuses the database, so
 * two platforms can never read or write each other's credentials, grants, call rows or audit rows.
 */
import { sql, type Kysely } from 'kysely';
import { OrmuzError } from '@ormuz/contracts';

/** The schema holding the platform's own record of which namespace the database belongs to. */
export const PLATFORM_SCHEMA = 'ormuz_platform';

/** The database already belongs to another namespace. Nothing was written to it. */
export class NamespaceMismatchError extends OrmuzError {
  readonly code = 'namespace_mismatch';
  constructor(
    /** The database's name. */
    readonly database: string,
    /** The namespace the database belongs to. */
    readonly owner: string,
    /** The namespace that tried to use it. */
    readonly requested: string,
  ) {
    super(
      `Database "${database}" belongs to namespace ${owner}, not ${requested}: two namespaces never share a database. ` +
        `Point DATABASE_URL at a database of namespace ${requested} (or unset it: each namespace then gets its own ` +
        `database, named after it), or set ORMUZ_NAMESPACE=${owner} to join the platform that owns it.`,
    );
  }
}

/** Who owns a database, as {@link claimNamespace} found or made it. */
export interface NamespaceClaim {
  readonly namespace: string;
  /** True when this call recorded the namespace (the database had none). */
  readonly claimed: boolean;
  readonly claimedAt: Date;
}

/**
 * Records `namespace` as the owner of the database when it has none yet, and checks it otherwise. Idempotent and
 * safe to run from several processes at once (a transaction-scoped advisory lock serialises the first claims).
 *
 * @throws NamespaceMismatchError when the database belongs to another namespace.
 */
export async function claimNamespace(db: Kysely<unknown>, namespace: string): Promise<NamespaceClaim> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext('ormuz:namespace'))`.execute(trx);
    await sql`create schema if not exists ${sql.id(PLATFORM_SCHEMA)}`.execute(trx);
    await sql`
      create table if not exists ${sql.id(PLATFORM_SCHEMA, 'namespace')} (
        only_row boolean primary key default true check (only_row),
        namespace text not null,
        claimed_at timestamptz not null default now()
      )`.execute(trx);
    const inserted = await sql<{ namespace: string; claimed_at: Date }>`
      insert into ${sql.id(PLATFORM_SCHEMA, 'namespace')} (namespace) values (${namespace})
      on conflict (only_row) do nothing
      returning namespace, claimed_at`.execute(trx);
    const row =
      inserted.rows[0] ??
      (
        await sql<{ namespace: string; claimed_at: Date }>`
          select namespace, claimed_at from ${sql.id(PLATFORM_SCHEMA, 'namespace')}`.execute(trx)
      ).rows[0];
    if (!row) throw new Error('The namespace record vanished inside its own transaction.');
    if (row.namespace !== namespace) {
      const { rows } = await sql<{ name: string }>`select current_database() as name`.execute(trx);
      throw new NamespaceMismatchError(rows[0]?.name ?? '(unknown)', row.namespace, namespace);
    }
    return { namespace: row.namespace, claimed: inserted.rows.length > 0, claimedAt: row.claimed_at };
  });
}
