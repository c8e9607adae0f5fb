/**
 * Converts a replay's rows (NDJSON, one `ReplayRowV1` a line) into Parquet with DuckDB: typed columns for the
 * fields analysts filter on and the event data as JSON. DuckDB streams the file through a bounded buffer, so memory
 * stays flat however many rows there are.
 */
import { rm } from 'node:fs/promises';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { ndjsonRows, quote } from './duckdb-sql.js';

/** DuckDB's memory cap during the conversion (it spills to a temporary directory beyond it). */
const DUCKDB_MEMORY_LIMIT = '256MB';

/** Rows per Parquet row group: smaller than DuckDB's default (122,880) so a group's buffers stay small. */
const ROW_GROUP_SIZE = 16_384;

/** A DuckDB instance for one conversion, opened while the rows are still being read (loading DuckDB takes a while). */
export class ParquetConverter {
  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
  ) {}

  static async open(): Promise<ParquetConverter> {
    const instance = await DuckDBInstance.create(':memory:', { memory_limit: DUCKDB_MEMORY_LIMIT, threads: '1' });
    return new ParquetConverter(instance, await instance.connect());
  }

  /** Writes `out` (Parquet, zstd) from the NDJSON rows in `rows`; removes a half-written `out` when it fails. */
  async convert(rows: string, out: string): Promise<void> {
    try {
      await this.connection.run(
        `COPY (SELECT * FROM ${ndjsonRows(rows)}) ` +
          `TO ${quote(out)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${ROW_GROUP_SIZE})`,
      );
    } catch (err) {
      await rm(out, { force: true }).catch(() => undefined);
      throw new Error(`Writing ${out} as Parquet failed: ${(err as Error).message}`);
    }
  }

  close(): void {
    this.connection.closeSync();
    this.instance.closeSync();
  }
}
