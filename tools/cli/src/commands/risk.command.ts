import { createReadStream } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { Command } from 'commander';
import { classifyLine } from '@ormuz/risk';
import { CliInputError, type CliContext } from '../context.js';

/**
 * `ormuz risk classify`: JSON lines in (stdin or --file), one verdict line out per non-blank input line. Local and
 * pure: it needs no NATS, so the CLI context goes unused. Exits 1 when any line could not be read.
 */
export function registerRiskCommands(program: Command, _ctx: () => CliContext): void {
  const risk = program.command('risk').description('the deterministic risk classifier');

  risk
    .command('classify')
    .description(
      'classify tool calls read as JSON lines ({"tool","args","target_text","foreground_package"}); writes one ' +
        '{"level","reasons","fix"?} line per call, or {"error":{"code","message"}} for a line it cannot read',
    )
    .option('--file <path>', 'read the JSON lines from this file instead of stdin')
    .action(async (o: { file?: string }) => {
      const input: Readable = o.file ? createReadStream(o.file, { encoding: 'utf8' }) : process.stdin;
      let bad = 0;
      let lineNumber = 0;
      try {
        for await (const line of createInterface({ input, crlfDelay: Infinity })) {
          lineNumber++;
          if (line.trim() === '') continue;
          const result = classifyLine(line, lineNumber);
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
