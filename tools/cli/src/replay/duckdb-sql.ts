/** DuckDB SQL text for replay rows, without loading DuckDB (commands that only name tables stay light). */
import { REPLAY_ROW_COLUMNS } from './replay-row.js';

/** `s` as a SQL string literal. */
export const quote = (s: string): string => `'${s.replaceAll("'", "''")}'`;

/** A DuckDB table expression reading the NDJSON rows in `rows` with the export's column types. */
export function ndjsonRows(rows: string): string {
  const columns = Object.entries(REPLAY_ROW_COLUMNS)
    .map(([name, type]) => `${name}: ${quote(type)}`)
    .join(', ');
  return `read_json(${quote(rows)}, format = 'newline_delimited', columns = {${columns}})`;
}
