import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { addHistorySourceOptions, openHistory, type HistorySourceOptions } from '../analyze/history-source.js';
import { htmlReport, type AnsweredQuestion } from '../analyze/html-report.js';
import { rowObjects, textTable } from '../analyze/render.js';
import { STANDING_QUESTIONS } from '../analyze/standing-questions.js';

/**
 * `ormuz report`: the standing questions (analyze/standing-questions.ts) over a history, as tables, as JSON, or with
 * `--html FILE` as a self-contained page with a chart per question.
 */
export function registerReportCommand(program: Command, ctx: () => CliContext): void {
  const command = program
    .command('report')
    .description('calls per tool, approval waits, device outcomes, refusals and token use over the history')
    .option('--html <file>', 'also write a self-contained HTML report with charts');
  addHistorySourceOptions(command).action(async (o: HistorySourceOptions & { html?: string }) => {
    const c = ctx();
    const db = await openHistory(o, c);
    const answered: AnsweredQuestion[] = [];
    try {
      for (const question of STANDING_QUESTIONS) answered.push({ question, answer: await db.query(question.sql) });
    } finally {
      db.close();
    }
    if (o.html) {
      const title = `Ormuz report: ${o.tenant ? `tenant ${o.tenant}` : o.input}`;
      await writeFile(o.html, htmlReport(title, answered, new Date()));
    }
    c.print(
      {
        ...(o.html ? { html: o.html } : {}),
        questions: answered.map(({ question, answer }) => ({
          id: question.id,
          title: question.title,
          rows: rowObjects(answer),
        })),
      },
      () =>
        [
          ...answered.map(({ question, answer }) => `${question.title}\n${textTable(answer)}\n`),
          ...(o.html ? [`HTML report written to ${o.html}`] : []),
        ].join('\n'),
    );
  });
}
