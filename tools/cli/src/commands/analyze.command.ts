import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { addHistorySourceOptions, openHistory, type HistorySourceOptions } from '../analyze/history-source.js';
import { csv, rowObjects, textTable } from '../analyze/render.js';

/**
 * `ormuz analyze "SELECT …"`: one read-only DuckDB query over a tenant's history, from an export (`--input`) or a live
 * replay (`--tenant` and replay's range options), as the table `events` (the export's columns) and the view `calls`
 * (one row per call). The database is locked before the query runs (docs/decisions/0029).
 */
export function registerAnalyzeCommand(program: Command, ctx: () => CliContext): void {
  const command = program
    .command('analyze')
    .description('run one read-only SQL query (DuckDB) over the history: tables events and calls')
    .argument('<sql>', 'one query, e.g. "SELECT type, count(*) FROM events GROUP BY type"')
    .option('--csv', 'print CSV instead of a table');
  addHistorySourceOptions(command).action(async (sql: string, o: HistorySourceOptions & { csv?: boolean }) => {
    const c = ctx();
    if (o.csv && c.options.json) throw new Error('--csv and --json are two outputs: choose one.');
    const db = await openHistory(o, c);
    try {
      const answer = await db.query(sql);
      if (o.csv) process.stdout.write(csv(answer));
      else c.print(rowObjects(answer), () => textTable(answer));
    } finally {
      db.close();
    }
  });
}
