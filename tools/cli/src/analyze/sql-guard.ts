/**
 * What `ormuz analyze` lets through: exactly one statement, and that statement a query. Anything else (a write,
 * `COPY`, `ATTACH`, `SET`, `INSTALL`/`LOAD`, `PRAGMA`, several statements) is refused with the reason before it runs.
 * The database under it is also locked (no file or network access, configuration frozen: see {@link HistoryDatabase}),
 * so a query that names a file is refused by DuckDB at prepare time; that refusal is reworded here too.
 */
import { StatementType, type DuckDBConnection, type DuckDBPreparedStatement } from '@duckdb/node-api';

/** The user's SQL was refused; the message says why and what is allowed. */
export class SqlRefusedError extends Error {}

const ALLOWED = 'Only one read-only query (SELECT, WITH … SELECT, FROM …) over the views events and calls is allowed';

/** The name DuckDB gives a statement type, lower case ("insert", "copy", "attach"). */
const statementName = (type: StatementType): string =>
  (StatementType[type] ?? 'unknown').replace(/_STATEMENT$/, '').toLowerCase();

/** Prepares `sql` on `connection` if it is one read-only query; throws {@link SqlRefusedError} otherwise. */
export async function prepareReadOnlyQuery(
  connection: DuckDBConnection,
  sql: string,
): Promise<DuckDBPreparedStatement> {
  if (!/[^\s;]/.test(sql)) throw new SqlRefusedError(`${ALLOWED}; this SQL holds no statement.`);
  let prepared: DuckDBPreparedStatement;
  try {
    const statements = await connection.extractStatements(sql);
    if (statements.count !== 1) {
      throw new SqlRefusedError(
        `${ALLOWED}; this SQL holds ${statements.count === 0 ? 'no statement' : `${statements.count} statements`}.`,
      );
    }
    prepared = await statements.prepare(0);
  } catch (err) {
    if (err instanceof SqlRefusedError) throw err;
    const message = (err as Error).message;
    if (/external access|disabled by configuration|Permission Error/i.test(message)) {
      throw new SqlRefusedError(
        `${ALLOWED}: the history is the only data here, and files, URLs and other databases can be neither read nor written (${message}).`,
      );
    }
    throw new SqlRefusedError(`The query does not run: ${message}`);
  }
  const type = prepared.statementType;
  if (type !== StatementType.SELECT) {
    prepared.destroySync();
    throw new SqlRefusedError(`${ALLOWED}; this is ${statementName(type)}, which is refused.`);
  }
  return prepared;
}
