/**
 * A tenant's history in an in-memory DuckDB database, for SQL: the replay rows (from an export file, Parquet or NDJSON,
 * or from a live replay gathered as NDJSON) loaded into the table `events`, with the export's typed columns, and the
 * view `calls` folding each call's events into one row. Once loaded, the database is locked: no file, URL or other
 * database can be read or written, no extension loaded, and the configuration cannot be changed back
 * (docs/decisions/0029). User SQL then goes through {@link prepareReadOnlyQuery}.
 */
import { open } from 'node:fs/promises';
import { DuckDBInstance, DuckDBTypeId, type DuckDBConnection } from '@duckdb/node-api';
import { ToolCallEventType as T } from '@ormuz/contracts';
import { ndjsonRows, quote } from '../replay/duckdb-sql.js';
import { REPLAY_ROW_COLUMNS } from '../replay/replay-row.js';
import { prepareReadOnlyQuery } from './sql-guard.js';

/** DuckDB's memory cap (it spills to its temporary directory beyond it). */
const MEMORY_LIMIT = '512MB';

/** A query's answer: its column names and rows, values as JSON (integers as numbers when they fit). */
export interface QueryResult {
  readonly columns: readonly string[];
  readonly rows: readonly (readonly unknown[])[];
}

const NUMERIC = new Set<DuckDBTypeId>([
  DuckDBTypeId.BIGINT,
  DuckDBTypeId.UBIGINT,
  DuckDBTypeId.HUGEINT,
  DuckDBTypeId.UHUGEINT,
  DuckDBTypeId.DECIMAL,
]);

const types = (...names: string[]) => names.map(quote).join(', ');

/**
 * One row per call: its tool, agent and device (from its request and dispatch), its risk (high if any verdict was),
 * its last outcome (`open` while it has none), its approval (staged and decided times, the decision), its refusal reason,
 * and whether it started, was sealed or ended `outcome_unknown`.
 */
const CALLS_VIEW = `
CREATE VIEW calls AS
SELECT
  call_id,
  any_value(tool) AS tool,
  any_value(agent_id) AS agent_id,
  arg_min(device_id, seq) FILTER (WHERE device_id IS NOT NULL) AS device_id,
  min(time) AS first_seen,
  CASE WHEN bool_or(risk = 'high') THEN 'high' WHEN bool_or(risk = 'low') THEN 'low' END AS risk,
  coalesce(arg_max(outcome, seq) FILTER (WHERE outcome IS NOT NULL), 'open') AS outcome,
  min(time) FILTER (WHERE type = ${quote(T.Staged)}) AS staged_at,
  min(time) FILTER (WHERE type IN (${types(T.Approved, T.Denied, T.Expired)})) AS decided_at,
  arg_min(split_part(type, '.', 3), seq) FILTER (WHERE type IN (${types(T.Approved, T.Denied, T.Expired)})) AS decision,
  any_value(json_extract_string(data, '$.reason_code')) FILTER (WHERE type = ${quote(T.Refused)}) AS refused_reason,
  bool_or(type = ${quote(T.Started)}) AS started,
  bool_or(type = ${quote(T.Sealed)}) AS sealed,
  bool_or(type = ${quote(T.OutcomeUnknown)}) AS outcome_unknown
FROM events
WHERE context = 'calls' AND call_id IS NOT NULL
GROUP BY call_id`;

/** The first bytes of every Parquet file. */
const PARQUET_MAGIC = 'PAR1';

async function isParquet(path: string): Promise<boolean> {
  const handle = await open(path, 'r').catch((err: unknown) => {
    throw new Error(`Cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? String(err)}).`);
  });
  try {
    const head = Buffer.alloc(4);
    await handle.read(head, 0, 4, 0);
    return head.toString('latin1') === PARQUET_MAGIC;
  } finally {
    await handle.close();
  }
}

/** The history of one export or replay, queryable with read-only SQL. */
export class HistoryDatabase {
  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
  ) {}

  /**
   * Loads `path` (a Parquet export, or NDJSON rows as `ormuz replay --format ndjson` writes them) into `events`, then
   * locks the database. A file that is not such an export is refused, saying what to give instead.
   */
  static async load(path: string): Promise<HistoryDatabase> {
    const parquet = await isParquet(path);
    const columns = Object.entries(REPLAY_ROW_COLUMNS)
      .map(([name, type]) => `CAST(${name} AS ${type}) AS ${name}`)
      .join(', ');
    const source = parquet ? `read_parquet(${quote(path)})` : ndjsonRows(path);
    const instance = await DuckDBInstance.create(':memory:', {
      memory_limit: MEMORY_LIMIT,
      threads: '2',
      autoinstall_known_extensions: 'false',
      autoload_known_extensions: 'false',
    });
    const connection = await instance.connect();
    const db = new HistoryDatabase(instance, connection);
    try {
      await connection.run(`CREATE TABLE events AS SELECT ${columns} FROM ${source}`).catch((err: unknown) => {
        throw new Error(
          `${path} is not an export of ormuz replay (${(err as Error).message.split('\n')[0]}). Give a file written by ` +
            '`ormuz replay --format parquet` or `--format ndjson` (not cloudevents).',
        );
      });
      const unnamed = await connection.runAndReadAll('SELECT count(*) FROM events WHERE seq IS NULL OR type IS NULL');
      if (Number(unnamed.getRowsJS()[0]![0]) > 0) {
        throw new Error(
          `${path} has rows without seq or type: it is not an export of ormuz replay rows. Export with ` +
            '`ormuz replay --format parquet` or `--format ndjson` (not cloudevents).',
        );
      }
      await connection.run(CALLS_VIEW);
      await connection.run('SET enable_external_access = false');
      await connection.run('SET lock_configuration = true');
      return db;
    } catch (err) {
      db.close();
      throw err;
    }
  }

  /** Runs one read-only query (refused otherwise, see {@link prepareReadOnlyQuery}). */
  async query(sql: string): Promise<QueryResult> {
    const prepared = await prepareReadOnlyQuery(this.connection, sql);
    try {
      const reader = await prepared.runAndReadAll();
      const numeric = reader.columnTypes().map((t) => NUMERIC.has(t.typeId));
      const rows = reader
        .getRowsJson()
        .map((row) =>
          row.map((v, i) =>
            numeric[i] && typeof v === 'string' && Number.isSafeInteger(Math.trunc(Number(v))) ? Number(v) : v,
          ),
        );
      return { columns: reader.columnNames(), rows };
    } finally {
      prepared.destroySync();
    }
  }

  close(): void {
    this.connection.closeSync();
    this.instance.closeSync();
  }
}
