import { createReadStream } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { Command } from 'commander';
import { checkGrant, loadShippedCatalog, type Catalog, type Grant } from '@ormuz/catalog';
import { classifyLine, coverageTable, lexiconCoverage, type LexiconCoverage, type ToolCheck } from '@ormuz/risk';
import { CliInputError, type CliContext } from '../context.js';

/**
 * Whether a tool is in the shipped catalog. An unknown name is answered with the closest real names: the catalog's
 * suggestions when a name is close, else the tools of the extension it names, else the extensions there are.
 */
export function catalogToolCheck(catalog: Catalog = loadShippedCatalog()): ToolCheck {
  const extensions = catalog.extensions.map((e) => e.name);
  const everything: Grant = { tenant: 'cli', agent_id: 'cli', allow: extensions };
  return (tool) => {
    const check = checkGrant(catalog, everything, tool);
    if (check.kind !== 'unknown') return undefined;
    const unknown = `There is no tool named ${JSON.stringify(tool.slice(0, 128))}.`;
    if (check.suggestions.length > 0) return `${unknown} The closest real names: ${check.suggestions.join(', ')}.`;
    const extension = tool.slice(0, Math.max(0, tool.indexOf('.')));
    const siblings = catalog.toolNames().filter((name) => name.startsWith(`${extension}.`));
    if (siblings.length > 0) return `${unknown} The ${extension} extension's tools are: ${siblings.join(', ')}.`;
    return `${unknown} Tools are named <extension>.<tool>; the extensions are: ${extensions.join(', ')}.`;
  };
}

/**
 * `ormuz risk classify`: JSON lines in (stdin or --file), one verdict line out per non-blank input line. Local and
 * pure: it needs no NATS, so the CLI context goes unused. Exits 1 when any line could not be read.
 */
export function registerRiskCommands(program: Command, ctx: () => CliContext): void {
  const risk = program.command('risk').description('the deterministic risk classifier');

  risk
    .command('coverage')
    .description("the lexicon's coverage: words per high-risk concept in each language (a Markdown table, or --json)")
    .action(() => {
      const coverage = lexiconCoverage();
      ctx().print(
        coverage,
        (c: LexiconCoverage) =>
          `${coverageTable(c)}\n\n${c.languages.length} languages, ${c.concepts.length} concepts, ${c.totalWords} words`,
      );
    });

  risk
    .command('classify')
    .description(
      'classify tool calls read as JSON lines ({"tool","args","target_text","foreground_package"}); writes one ' +
        '{"level","reasons","fix"?} line per call, or {"error":{"code","message"}} for a line it cannot read or a tool ' +
        'the catalog does not have (unknown_tool, with the closest real names)',
    )
    .option('--file <path>', 'read the JSON lines from this file instead of stdin')
    .option(
      '--explain',
      'add "explain": the concept, languages and lexicon form of each word of the target text that matched',
    )
    .action(async (o: { file?: string; explain?: boolean }) => {
      const input: Readable = o.file ? createReadStream(o.file, { encoding: 'utf8' }) : process.stdin;
      const checkTool = catalogToolCheck();
      let bad = 0;
      let lineNumber = 0;
      try {
        for await (const line of createInterface({ input, crlfDelay: Infinity })) {
          lineNumber++;
          if (line.trim() === '') continue;
          const result = classifyLine(line, lineNumber, undefined, checkTool, Boolean(o.explain));
          if (!result.ok) bad++;
          if (!process.stdout.write(`${result.output}\n`)) await once(process.stdout, 'drain');
        }
      } catch (err) {
        if (!o.file || typeof (err as NodeJS.ErrnoException).code !== 'string') throw err;
        throw new CliInputError(
          `--file ${o.file} cannot be read (${(err as Error).message}). Pass a readable file of JSON lines.`,
        );
      }
      if (bad > 0) process.exitCode = 1;
    });
}
