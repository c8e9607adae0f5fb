/**
 * The consumers of the log a service process runs (its projections and reactors), and the two NATS commands that let
 * an operator see them, retry what they parked and rebuild a read model beside the live one:
 * `<ns>.<service>.consumers.status`, `…consumers.retry` and `…consumers.rebuild` (`ormuz projections status | retry |
 * rebuild`). A replica that runs none (a standby, LeadingConsumers, or a device-bridge follower) stays silent, so the
 * one that runs them answers.
 */
import { authorize, type Authenticator } from '@ormuz/auth';
import { callerOf } from './caller.js';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import {
  assertValid,
  commandSubject,
  SERVICE_CONSUMERS_REBUILD_V1,
  type ConsumersStatusV1,
  type RebuildProjectionReplyV1,
  type RebuildProjectionRequestV1,
  type RetryParkedReplyV1,
  type RpcName,
} from '@ormuz/contracts';
import { ProjectionRunner, type ConsumerStatus, type ParkedMessage } from '@ormuz/event-log';
import type { Logger } from 'pino';
import type { ProjectionRebuilder } from './rebuild/projection-rebuilder.js';
import { toErrorBody, type RpcReply } from './rpc.js';

/** What a registered consumer offers: a ProjectionRunner or a ReactionRunner. */
export interface OperatedConsumer {
  readonly name: string;
  status(): Promise<ConsumerStatus>;
  retryParked(): Promise<{ retried: number; stillParked: ParkedMessage[]; rebuilt: boolean }>;
}

/** The answer to `consumers.retry`. */
export type RetryParkedReply = RetryParkedReplyV1;

export class LogConsumers {
  private readonly byName = new Map<string, OperatedConsumer>();
  private readonly subscriptions: Subscription[] = [];

  /** `rebuilder` answers `consumers.rebuild` for the projections among the consumers. */
  constructor(private readonly rebuilder?: ProjectionRebuilder) {}

  add(consumer: OperatedConsumer): void {
    this.byName.set(consumer.name, consumer);
  }

  remove(consumer: OperatedConsumer): void {
    if (this.byName.get(consumer.name) === consumer) this.byName.delete(consumer.name);
  }

  status(): Promise<ConsumerStatus[]> {
    return Promise.all([...this.byName.values()].map((c) => c.status()));
  }

  /** Retries the parked messages of `name`; undefined when this process does not run it. */
  async retry(name: string): Promise<RetryParkedReply | undefined> {
    const consumer = this.byName.get(name);
    if (!consumer) return undefined;
    const { retried, stillParked, rebuilt } = await consumer.retryParked();
    return { name, retried, rebuilt, still_parked: stillParked.map((p) => ({ seq: p.seq, error: p.error })) };
  }

  /**
   * Rebuilds projection `name` into another schema (see ProjectionRebuilder); undefined when this process does not run
   * it. A name no process runs is refused by the CLI, which lists the names every service runs.
   */
  async rebuild(request: RebuildProjectionRequestV1): Promise<RebuildProjectionReplyV1 | undefined> {
    const consumer = this.byName.get(request.name);
    if (!consumer || !this.rebuilder) return undefined;
    if (!(consumer instanceof ProjectionRunner)) {
      throw Object.assign(new Error(`${request.name} is a reactor: it keeps no read model to rebuild.`), {
        code: 'bad_request',
      });
    }
    return this.rebuilder.rebuild(consumer, request);
  }

  /** Answers the commands for `service` until {@link close}. */
  serve(nc: NatsConnection, namespace: string, service: string, logger: Logger, authenticator: Authenticator): void {
    const answer = (
      name: 'consumers.status' | 'consumers.retry' | 'consumers.rebuild',
      handle: (body: Record<string, unknown>) => Promise<unknown>,
    ) => {
      const sub = nc.subscribe(commandSubject(namespace, service, name));
      this.subscriptions.push(sub);
      void (async () => {
        for await (const msg of sub) {
          if (this.byName.size === 0) continue;
          let reply: RpcReply<unknown>;
          try {
            // Every tenant's consumers: a platform administrator's command (libs/auth access table).
            authorize(`${service}.${name}` as RpcName, await callerOf(authenticator, msg.headers, false), {});
            const body = msg.data.length > 0 ? (JSON.parse(msg.string()) as unknown) : {};
            if (typeof body !== 'object' || body === null || Array.isArray(body))
              throw new Error('The body must be a JSON object.');
            const data = await handle(body as Record<string, unknown>);
            if (data === undefined) continue;
            reply = { ok: true, data };
          } catch (err) {
            logger.warn({ err: String(err), command: name }, 'consumers command failed');
            reply = { ok: false, error: toErrorBody(err) };
          }
          msg.respond(JSON.stringify(reply));
        }
      })();
    };
    answer('consumers.status', async (): Promise<ConsumersStatusV1> => ({ service, consumers: await this.status() }));
    answer('consumers.retry', async (body) => {
      if (typeof body.name !== 'string')
        throw Object.assign(new Error('Name the consumer: {"name": "<consumer>"}.'), { code: 'bad_request' });
      return this.retry(body.name);
    });
    answer('consumers.rebuild', async (body) =>
      this.rebuild(assertValid<RebuildProjectionRequestV1>(SERVICE_CONSUMERS_REBUILD_V1, body)),
    );
  }

  close(): void {
    for (const sub of this.subscriptions.splice(0)) sub.unsubscribe();
  }
}
