import type { Command } from 'commander';
import type { ConsumerStatusV1, RetryParkedReplyV1 } from '@ormuz/contracts';
import { ServiceUnavailableError } from '@ormuz/service-kit/client';
import type { CliContext } from '../context.js';
import { LOG_CONSUMING_SERVICES, type ServiceName } from '../services.js';

interface ServiceConsumers {
  readonly service: ServiceName;
  /** Null when no process of the service answered. */
  readonly consumers: readonly ConsumerStatusV1[] | null;
}

const ASK_MS = 3_000;

const row = (c: ConsumerStatusV1) =>
  `  ${c.name.padEnd(30)} ${c.kind.padEnd(10)} ${(c.running ? 'running' : 'stopped').padEnd(8)} ` +
  `checkpoint ${String(c.checkpoint).padStart(7)}  lag ${String(c.lag ?? '?').padStart(6)}  parked ${c.parked}` +
  (c.oldest_parked
    ? `\n      oldest parked: seq ${c.oldest_parked.seq} ${c.oldest_parked.subject}: ${c.oldest_parked.error}`
    : '');

/** `ormuz projections status | retry`: where each projection and reactor stands, and a retry of what it parked. */
export function registerProjectionCommands(program: Command, ctx: () => CliContext): void {
  const projections = program
    .command('projections')
    .description("the services' read models and reactors: lag, parked messages, retries");

  const ask = async (): Promise<ServiceConsumers[]> =>
    Promise.all(
      LOG_CONSUMING_SERVICES.map(async (service) => {
        try {
          const reply = await ctx().call(`${service}.consumers.status`, {}, ASK_MS);
          return { service, consumers: reply.consumers };
        } catch (err) {
          if (err instanceof ServiceUnavailableError) return { service, consumers: null };
          throw err;
        }
      }),
    );

  projections
    .command('status')
    .description('list every projection and reactor with its checkpoint, lag, parked count and oldest parked error')
    .action(async () => {
      const services = await ask();
      ctx().print({ services }, (r: { services: ServiceConsumers[] }) =>
        r.services
          .map((s) =>
            s.consumers === null
              ? `${s.service}: not answering (is it running? start it with \`npm start -w @ormuz/${s.service}\`)`
              : `${s.service}:\n${s.consumers.map(row).join('\n')}`,
          )
          .join('\n'),
      );
      if (services.some((s) => s.consumers?.some((c) => c.parked > 0))) process.exitCode = 3;
    });

  projections
    .command('retry <name>')
    .description(
      'apply the parked messages of one projection or reactor again; those that now succeed leave the parked list',
    )
    .action(async (name: string) => {
      const services = await ask();
      const owner = services.find((s) => s.consumers?.some((c) => c.name === name));
      if (!owner) {
        const known = services.flatMap((s) => s.consumers?.map((c) => c.name) ?? []);
        const silent = services.filter((s) => s.consumers === null).map((s) => s.service);
        throw new Error(
          `No running service holds ${name}. Known: ${known.join(', ') || 'none'}` +
            (silent.length > 0 ? `; not answering: ${silent.join(', ')} (start them, then retry).` : '.'),
        );
      }
      const reply = await ctx().call(`${owner.service}.consumers.retry`, { name }, 60_000);
      ctx().print(
        reply,
        (r: RetryParkedReplyV1) =>
          `${r.name}: ${r.retried} retried and applied${r.rebuilt ? ' (rebuilt from sequence 1, to apply them in order)' : ''}; ` +
          `${r.still_parked.length} still parked` +
          r.still_parked.map((p) => `\n  seq ${p.seq}: ${p.error}`).join(''),
      );
      if (reply.still_parked.length > 0) process.exitCode = 3;
    });
}
