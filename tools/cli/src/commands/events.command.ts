import type { Command } from 'commander';
import { CONTEXTS, type ArchivedEventV1, type ContextName } from '@ormuz/contracts';
import { identifier, type CliContext } from '../context.js';

/** How long `--follow` waits before asking the archive again when it had nothing new. */
const FOLLOW_POLL_MS = 500;

/**
 * Reads one tenant's events as NDJSON CloudEvents from the audit archive (`audit.events`), a page at a time, in stream
 * order per context. The archive answers for the tenant of the caller's credential only (analysts, operators and
 * admins), so the CLI needs no access to the streams themselves. With `--follow` it keeps asking for what was archived
 * since.
 */
export function registerEventCommands(program: Command, ctx: () => CliContext): void {
  const events = program.command('events').description("read a tenant's events from the audit archive");

  events
    .command('tail')
    .description('print events as NDJSON CloudEvents (one per line); --follow keeps printing new ones')
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .option('--context <name>', `one context (${Object.keys(CONTEXTS).join(', ')}); default all`)
    .option('--from-seq <n>', 'start at this stream sequence')
    .option('--since <time>', 'only events recorded at or after this time (ISO 8601)')
    .option('--follow', 'keep running and print new events as they are archived')
    .action(async (o: { tenant: string; context?: string; fromSeq?: string; since?: string; follow?: boolean }) => {
      const c = ctx();
      const contexts = (o.context ? [o.context] : Object.keys(CONTEXTS)) as ContextName[];
      for (const name of contexts) {
        if (!(name in CONTEXTS))
          throw new Error(`Unknown context ${name}; use one of ${Object.keys(CONTEXTS).join(', ')}.`);
      }
      const since = o.since ? new Date(o.since) : undefined;
      if (since && Number.isNaN(since.getTime())) throw new Error(`--since ${o.since} is not a date; use ISO 8601.`);
      const fromSeq = o.fromSeq === undefined ? 1 : Number(o.fromSeq);
      if (!(Number.isInteger(fromSeq) && fromSeq >= 1)) throw new Error('--from-seq takes a whole number from 1.');
      let stopped = false;
      process.once('SIGINT', () => (stopped = true));
      const print = ({ event }: ArchivedEventV1) => {
        if (since && Date.parse(event.time) < since.getTime()) return;
        process.stdout.write(`${JSON.stringify(event)}\n`);
      };
      await Promise.all(
        contexts.map(async (context) => {
          let next = fromSeq;
          while (!stopped) {
            const page = await c.call('audit.events', { tenant: o.tenant, context, from_seq: next });
            page.events.forEach(print);
            if (page.next_from_seq !== null) {
              next = page.next_from_seq;
              continue;
            }
            const last = page.events.at(-1);
            if (last) next = last.seq + 1;
            if (!o.follow) return;
            await new Promise((resolve) => setTimeout(resolve, FOLLOW_POLL_MS));
          }
        }),
      );
    });
}
