/**
 * Compares a read model's tables in two schemas row by row, in the database: rows are matched on the live table's
 * primary key, and a row counts as different when it is missing on one side or any column differs. Only the first
 * {@link SHOWN_ROWS} differing rows are brought back, column by column, so the answer stays small whatever the tables.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { ProjectionRowDifferenceV1 } from '@ormuz/contracts';
import type { ReadModelTable } from '@ormuz/event-log';

const SHOWN_ROWS = 100;

export interface TableComparison {
  readonly table: string;
  readonly live_rows: number;
  readonly rebuilt_rows: number;
  readonly differing: number;
}

export interface Comparison {
  readonly tables: TableComparison[];
  readonly differences: ProjectionRowDifferenceV1[];
}

type Row = Record<string, unknown>;

export class ReadModelDiff {
  /** Compares `tables` of `live` with those of `rebuilt`, inside `trx` (a snapshot both sides are read in). */
  async compare(
    trx: Transaction<unknown> | Kysely<unknown>,
    live: string,
    rebuilt: string,
    tables: readonly ReadModelTable[],
  ): Promise<Comparison> {
    const result: Comparison = { tables: [], differences: [] };
    for (const table of tables) {
      const key = await this.primaryKey(trx, live, table.name);
      const side = (schema: string) => {
        const where = table.rows ? sql`where t.${sql.ref(table.rows.column)} = ${table.rows.value}` : sql``;
        const keyed = sql.join(key.map((c) => sql`${sql.lit(c)}::text, t.${sql.ref(c)}`));
        const row = table.uncompared?.length ? sql`to_jsonb(t) - ${[...table.uncompared]}::text[]` : sql`to_jsonb(t)`;
        return sql`select jsonb_build_object(${keyed}) as k, ${row} as r
          from ${sql.table(`${schema}.${table.name}`)} t ${where}`;
      };
      const joined = sql`with l as (${side(live)}), b as (${side(rebuilt)})`;
      const { rows: counts } = await sql<{ live_rows: number; rebuilt_rows: number; differing: number }>`${joined}
        select (select count(*) from l)::int as live_rows, (select count(*) from b)::int as rebuilt_rows,
          (select count(*) from l full join b on l.k = b.k where l.r is distinct from b.r)::int as differing`.execute(
        trx,
      );
      result.tables.push({ table: table.name, ...counts[0]! });
      if (counts[0]!.differing === 0 || result.differences.length >= SHOWN_ROWS) continue;
      const { rows } = await sql<{ k: Row; live: Row | null; rebuilt: Row | null }>`${joined}
        select coalesce(l.k, b.k) as k, l.r as live, b.r as rebuilt from l full join b on l.k = b.k
        where l.r is distinct from b.r order by 1 limit ${SHOWN_ROWS}`.execute(trx);
      for (const row of rows) result.differences.push(...columnsOf(table.name, row.k, row.live, row.rebuilt));
    }
    return result;
  }

  /** The live table's primary key columns, in key order. */
  private async primaryKey(
    db: Transaction<unknown> | Kysely<unknown>,
    schema: string,
    table: string,
  ): Promise<string[]> {
    const { rows } = await sql<{ column: string }>`select a.attname as column
      from pg_index i join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
      where i.indrelid = ${`${schema}.${table}`}::regclass and i.indisprimary
      order by array_position(i.indkey::int2[], a.attnum)`.execute(db);
    if (rows.length === 0) throw new Error(`${schema}.${table} has no primary key to match rows on.`);
    return rows.map((r) => r.column);
  }
}

/** The columns that differ in one row: every column when the row is missing on one side (`*`). */
function columnsOf(table: string, key: Row, live: Row | null, rebuilt: Row | null): ProjectionRowDifferenceV1[] {
  if (!live || !rebuilt) return [{ table, key, column: '*', live, rebuilt }];
  const columns = [...new Set([...Object.keys(live), ...Object.keys(rebuilt)])];
  return columns
    .filter((c) => JSON.stringify(live[c]) !== JSON.stringify(rebuilt[c]))
    .map((column) => ({ table, key, column, live: live[column] ?? null, rebuilt: rebuilt[column] ?? null }));
}
