/** How a query's answer is printed: an aligned text table, CSV (RFC 4180), or JSON row objects. */
import type { QueryResult } from './history-database.js';

const cell = (v: unknown): string =>
  v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);

/** Columns padded to their widest cell; numbers right-aligned; `(n rows)` below. */
export function textTable({ columns, rows }: QueryResult): string {
  const cells = rows.map((r) => r.map(cell));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i]!.length)));
  const numeric = columns.map(
    (_, i) => rows.length > 0 && rows.every((r) => r[i] === null || typeof r[i] === 'number'),
  );
  const line = (r: readonly string[]) =>
    r
      .map((v, i) => (numeric[i] ? v.padStart(widths[i]!) : v.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(columns), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line), `(${rows.length} rows)`].join(
    '\n',
  );
}

const csvField = (v: string): string => (/[",\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);

export function csv({ columns, rows }: QueryResult): string {
  return [columns, ...rows.map((r) => r.map(cell))].map((r) => r.map(csvField).join(',')).join('\r\n') + '\r\n';
}

export function rowObjects({ columns, rows }: QueryResult): Record<string, unknown>[] {
  return rows.map((r) => Object.fromEntries(columns.map((c, i) => [c, r[i]])));
}
