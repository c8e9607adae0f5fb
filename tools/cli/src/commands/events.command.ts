import type { Command } from 'commander';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { CONTEXTS, tenantFilter, type ContextName } from '@ormuz/contracts';
import { replay, streamName, type ReplayItem } from '@ormuz/event-log';
import { identifier, type CliContext } from '../context.js';

/** Reads one tenant's events from every context stream as NDJSON CloudEvents, optionally following live. */
export function registerEventCommands(program: Command, ctx: () => CliContext): void {
  const events = program.command('events').description("read a tenant's events from the log");

  events
    .command('tail')
    .description('print events as NDJSON CloudEvents (one per line); --follow keeps printing new ones')
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .option('--context <name>', `one context (${Object.keys(CONTEXTS).join(', ')}); default all`)
    .option('--from-seq <n>', 'start at this stream sequence')
    .option('--since <time>', 'start at this time (ISO 8601)')
    .option('--follow', 'keep running and print new events as they are appended')
    .action(async (o: { tenant: string; context?: string; fromSeq?: string; since?: string; follow?: boolean }) => {
      const c = ctx();
      const contexts = (o.context ? [o.context] : Object.keys(CONTEXTS)) as ContextName[];
      for (const name of contexts) {
        if (!(name in CONTEXTS)) throw new Error(`Unknown context ${name}; use one of ${Object.keys(CONTEXTS).join(', ')}.`);
      }
      const since = o.since ? new Date(o.since) : undefined;
      if (since && Number.isNaN(since.getTime())) throw new Error(`--since ${o.since} is not a date; use ISO 8601.`);
      const fromSequence = o.fromSeq === undefined ? undefined : Number(o.fromSeq);
      if (fromSequence !== undefined && !(Number.isInteger(fromSequence) && fromSequence >= 1)) {
        throw new Error('--from-seq takes a whole number from 1.');
      }
      const nc = await c.nc();
      const js = jetstream(nc);
      const jsm = await jetstreamManager(nc).catch((err: unknown) => {
        // Under the shipped NATS authorization only services read the streams (infra/README.md, NATS users).
        if (!/permissions violation/i.test(String(err))) throw err;
        throw new Error(
          `NATS user ${c.config.natsUser ?? '(none)'} may not read the event streams, which \`events tail\` reads ` +
            "directly. Read a tenant's archived events through the audit service (`audit.events`) instead.",
        );
      });
      const abort = new AbortController();
      process.once('SIGINT', () => abort.abort());
      const print = (item: ReplayItem) =>
        process.stdout.write(
          `${JSON.stringify(item.event ?? { error: item.error, seq: item.seq, subject: item.subject })}\n`,
        );
      await Promise.all(
        contexts.map(async (name) => {
          const stream = streamName(c.config.namespace, name);
          const exists = await jsm.streams.info(stream).then(
            () => true,
            () => false,
          );
          if (!exists) return;
          for await (const item of replay(js, {
            stream,
            filterSubject: tenantFilter(c.config.namespace, name, o.tenant),
            ...(fromSequence !== undefined ? { fromSequence } : {}),
            ...(since ? { fromTime: since } : {}),
            follow: Boolean(o.follow),
            signal: abort.signal,
          })) {
            print(item);
          }
        }),
      );
    });
}
