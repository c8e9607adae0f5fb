import { createReadStream, readFileSync } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { Command } from 'commander';
import { checkGrant, loadShippedCatalog, type Catalog, type Grant } from '@ormuz/catalog';
import {
  classifyLine,
  coverageTable,
  lexiconCoverage,
  type LexiconCoverage,
  type LineContext,
  type ToolCheck,
} from '@ormuz/risk';
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

/** The roles `device.screen_observe` gives elements, named in `--role`'s help. */
const OBSERVED_ROLES = 'button, text, input, list_item, switch, header';
const MAX_ROLE_LENGTH = 64;

/** Commander collector for a repeatable `--screen-text`: each use adds one element's text, in order. */
export function collectText(value: string, previous: readonly string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

interface ClassifyOptions {
  readonly file?: string;
  readonly explain?: boolean;
  readonly role?: string;
  readonly screenText?: readonly string[];
  readonly screenTextFile?: string;
}

/**
 * What `--role`, `--screen-text` and `--screen-text-file` give every line, checked before any line is read. Throws
 * {@link CliInputError} saying what to pass instead: an empty or overlong role, both ways of giving the screen, an
 * unreadable file.
 */
export function classifyContext(o: ClassifyOptions): LineContext {
  let targetRole: string | undefined;
  if (o.role !== undefined) {
    targetRole = o.role.trim();
    if (targetRole === '' || targetRole.length > MAX_ROLE_LENGTH) {
      throw new CliInputError(
        `--role needs the element's role from the latest observation (${OBSERVED_ROLES}), at most ${MAX_ROLE_LENGTH} characters, e.g. --role switch.`,
      );
    }
  }
  if (o.screenText !== undefined && o.screenTextFile !== undefined) {
    throw new CliInputError(
      'Give the screen one way: --screen-text once per element, or --screen-text-file with one element per line.',
    );
  }
  let screenText = o.screenText;
  if (o.screenTextFile !== undefined) {
    let content: string;
    try {
      content = readFileSync(o.screenTextFile, 'utf8');
    } catch (err) {
      throw new CliInputError(
        `--screen-text-file ${o.screenTextFile} cannot be read (${(err as Error).message}). Pass a readable text file with one element's text per line.`,
      );
    }
    // One element per line; blank lines separate nothing and are not elements.
    screenText = content.split(/\r?\n/).filter((t) => t.trim() !== '');
  }
  return {
    explain: Boolean(o.explain),
    ...(targetRole !== undefined ? { targetRole } : {}),
    ...(screenText !== undefined ? { screenText } : {}),
  };
}

/**
 * `ormuz risk classify`: JSON lines in (stdin or --file), one verdict line out per non-blank input line; `--role` and
 * `--screen-text` give every line the observation's facts an operator would otherwise repeat on each. Local and pure:
 * it needs no NATS, so the CLI context goes unused. Exits 1 when any line could not be read.
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
      'classify tool calls read as JSON lines ({"tool","args","target_text","foreground_package","target_role"?,' +
        '"screen_text"?}); writes one {"level","reasons","fix"?} line per call, or {"error":{"code","message"}} for a ' +
        'line it cannot read or a tool the catalog does not have (unknown_tool, with the closest real names). ' +
        '--role and --screen-text give every line what the latest observation showed, as policy passes it',
    )
    .option('--file <path>', 'read the JSON lines from this file instead of stdin')
    .option(
      '--role <role>',
      `the target element's role in the latest observation (${OBSERVED_ROLES}), for every line: in Settings a tap ` +
        'on a switch, toggle, checkbox or radio changes a setting whatever its label says',
    )
    .option(
      '--screen-text <text>',
      'one text on the screen, in screen order; repeat for each element. For every line: an app on no list whose screen shows an IBAN, an account number or a balance is judged a finance app',
      collectText,
    )
    .option('--screen-text-file <path>', 'the texts on the screen, one element per line (instead of --screen-text)')
    .option(
      '--explain',
      'add "explain": the concept, languages and lexicon form of each word of the target text that matched, and ' +
        'what the role and the screen text changed (the level without them, and the reasons they added)',
    )
    .action(async (o: ClassifyOptions) => {
      const context = classifyContext(o);
      const input: Readable = o.file ? createReadStream(o.file, { encoding: 'utf8' }) : process.stdin;
      const checkTool = catalogToolCheck();
      let bad = 0;
      let lineNumber = 0;
      try {
        for await (const line of createInterface({ input, crlfDelay: Infinity })) {
          lineNumber++;
          if (line.trim() === '') continue;
          const result = classifyLine(line, lineNumber, undefined, checkTool, context);
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
