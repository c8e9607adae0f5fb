/**
 * The metrics every process that consumes the log exposes about its projections and reactors, read at scrape time
 * from {@link LogConsumers} (the same status `ormuz projections status` and `/readyz` show) and the streams' last
 * sequence:
 *
 * - `ormuz_consumer_lag_messages`: the stream's last sequence minus the consumer's checkpoint (0 once nothing in its
 *   filter waits), how far its read model is behind the log;
 * - `ormuz_consumer_pending_messages`: what its NATS consumer has not yet delivered or had acknowledged;
 * - `ormuz_consumer_parked_messages`: messages it could not handle, waiting for `ormuz projections retry`;
 * - `ormuz_consumer_running`: 1 while it runs, 0 when stopped.
 *
 * A consumer this process does not run (a bridge follower's) has no series here; the process that runs it shows them.
 */
import type { JetStreamManager } from '@nats-io/jetstream';
import type { ConsumerStatus } from '@ormuz/event-log';
import type { Logger } from 'pino';
import type { LogConsumers } from '../log-consumers.js';
import { collectFrom, sharedRead } from './scrape.js';
import type { ServiceMetrics } from './service-metrics.js';

/**
 * How many messages of the stream the consumer's checkpoint is behind: `lastSeq - checkpoint`, never below 0, and 0
 * when its NATS consumer has nothing pending (the stream's last messages are outside its filter). Undefined when the
 * stream's last sequence is unknown.
 */
export function consumerLag(
  checkpoint: number,
  lastSeq: number | undefined,
  pending: number | null,
): number | undefined {
  if (pending === 0) return 0;
  if (lastSeq === undefined) return undefined;
  return Math.max(0, lastSeq - checkpoint);
}

interface ConsumersSample {
  readonly statuses: readonly ConsumerStatus[];
  readonly lastSeqs: ReadonlyMap<string, number>;
}

export function registerConsumerMetrics(
  metrics: ServiceMetrics,
  consumers: LogConsumers,
  jsm: JetStreamManager,
  logger: Pick<Logger, 'warn'>,
): void {
  const read = sharedRead(async (): Promise<ConsumersSample> => {
    const statuses = await consumers.status();
    const lastSeqs = new Map<string, number>();
    for (const stream of new Set(statuses.map((s) => s.stream))) {
      const info = await jsm.streams.info(stream).catch(() => undefined);
      if (info) lastSeqs.set(stream, info.state.last_seq);
    }
    return { statuses, lastSeqs };
  });
  metrics.gauge({
    name: 'ormuz_consumer_lag_messages',
    help: "Messages of the stream after the consumer's checkpoint (0 once nothing in its filter waits).",
    labelNames: ['consumer', 'stream'] as const,
    collect: collectFrom(
      read,
      (lag, { statuses, lastSeqs }) => {
        for (const s of statuses) {
          const value = consumerLag(s.checkpoint, lastSeqs.get(s.stream), s.lag);
          if (value !== undefined) lag.set({ consumer: s.name, stream: s.stream }, value);
        }
      },
      logger,
    ),
  });
  // One series per consumer, its name the label.
  const perConsumer: readonly [name: string, help: string, value: (s: ConsumerStatus) => number | null][] = [
    [
      'ormuz_consumer_pending_messages',
      'Messages its NATS consumer has not delivered or has not had acknowledged.',
      (s) => s.lag,
    ],
    [
      'ormuz_consumer_parked_messages',
      'Messages the consumer could not handle and parked (ormuz projections retry).',
      (s) => s.parked,
    ],
    ['ormuz_consumer_running', '1 while the consumer runs in this process, 0 when it is stopped.', (s) => +s.running],
  ];
  for (const [name, help, value] of perConsumer) {
    metrics.gauge({
      name,
      help,
      labelNames: ['consumer'] as const,
      collect: collectFrom(
        read,
        (gauge, { statuses }) => {
          for (const s of statuses) {
            const v = value(s);
            if (v !== null) gauge.set({ consumer: s.name }, v);
          }
        },
        logger,
      ),
    });
  }
}
