/**
 * The report as one self-contained HTML page: for each standing question a horizontal bar chart drawn as inline SVG
 * here (no script, no font, no stylesheet or image fetched) and the table of its answer.
 */
import type { QueryResult } from './history-database.js';
import { textTable } from './render.js';
import type { StandingQuestion } from './standing-questions.js';

export interface AnsweredQuestion {
  readonly question: StandingQuestion;
  readonly answer: QueryResult;
}

const escape = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Colour of the n-th value column. */
const COLOURS = ['#2f6fb0', '#d9822b', '#4c9a2a', '#a23b72'];
const BAR = 14;
const LABEL_WIDTH = 260;
const PLOT_WIDTH = 420;

/** Bars of `values` per row, scaled to the largest; a row with no number draws no bar. */
export function barChart(q: StandingQuestion, { columns, rows }: QueryResult): string {
  const index = (name: string) => columns.indexOf(name);
  const values = q.chart.values.map(index);
  const labels = q.chart.label.map(index);
  const numbers = rows.flatMap((r) => values.map((i) => r[i])).filter((v): v is number => typeof v === 'number');
  const max = Math.max(1e-9, ...numbers);
  const groupHeight = BAR * values.length + 8;
  const legendHeight = 20;
  const height = legendHeight + Math.max(1, rows.length) * groupHeight;
  const width = LABEL_WIDTH + PLOT_WIDTH + 80;
  const parts: string[] = [];
  q.chart.values.forEach((name, k) => {
    const x = LABEL_WIDTH + k * 150;
    parts.push(`<rect x="${x}" y="4" width="10" height="10" fill="${COLOURS[k % COLOURS.length]}"/>`);
    parts.push(`<text x="${x + 14}" y="13">${escape(name)}</text>`);
  });
  if (rows.length === 0) parts.push(`<text x="0" y="${legendHeight + 12}">no rows</text>`);
  rows.forEach((r, n) => {
    const y = legendHeight + n * groupHeight;
    const label = labels.map((i) => String(r[i] ?? '')).join(' · ');
    parts.push(`<text x="${LABEL_WIDTH - 6}" y="${y + BAR - 3}" text-anchor="end">${escape(label)}</text>`);
    values.forEach((i, k) => {
      const v = r[i];
      if (typeof v !== 'number') return;
      const w = Math.max(1, (v / max) * PLOT_WIDTH);
      const by = y + k * BAR;
      parts.push(
        `<rect class="bar" x="${LABEL_WIDTH}" y="${by}" width="${w.toFixed(1)}" height="${BAR - 2}" ` +
          `fill="${COLOURS[k % COLOURS.length]}"><title>${escape(`${label}: ${q.chart.values[k]} ${v}`)}</title></rect>`,
      );
      parts.push(`<text x="${LABEL_WIDTH + w + 4}" y="${by + BAR - 4}">${v}</text>`);
    });
  });
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-question="${q.id}" role="img" ` +
    `aria-label="${escape(q.title)}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ` +
    `font-family="sans-serif" font-size="11">${parts.join('')}</svg>`
  );
}

export function htmlReport(title: string, answered: readonly AnsweredQuestion[], generatedAt: Date): string {
  const sections = answered.map(
    ({ question, answer }) =>
      `<section id="${question.id}"><h2>${escape(question.title)}</h2>${barChart(question, answer)}` +
      `<pre>${escape(textTable(answer))}</pre></section>`,
  );
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'"><title>${escape(title)}</title>
<style>body{font-family:sans-serif;margin:2em;color:#222}h2{font-size:1.1em;margin-top:2em}pre{font-size:12px;background:#f6f6f6;padding:.5em;overflow:auto}</style>
</head><body><h1>${escape(title)}</h1><p>Generated ${generatedAt.toISOString()} by ormuz report.</p>
${sections.join('\n')}
</body></html>
`;
}
