/**
 * Runs a side-effecting reaction to the events of one stream through one durable JetStream consumer.
 *
 * Unlike a projection (which writes Postgres and commits its checkpoint in the same transaction), a reaction acts on
 * other aggregates or services, so it must be idempotent: each message is acknowledged only after its handler
 * succeeded, and a crash before the ack means the message is delivered again on restart. Messages with the same key
 * (for the loop, the same conversation or call) are handled one at a time in delivery order; different keys run
 * concurrently. A failing message is retried with backoff; after `maxAttempts` it is parked in the schema's
 * `parked_messages` table and reported, never dropped silently.
 */
import {
  AckPolicy,
  DeliverPolicy,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { OrmuzEvent } from '@ormuz/contracts';
import { decodeEvent } from '@ormuz/event-log';

/** A delivery's position in its retries. */
export interface Delivery {
  /** 1 on the first delivery. */
  readonly attempt: number;
  readonly seq: number;
}

/** What to do with the events of one stream. */
export interface Reaction {
  /** Durable consumer name (and key in `parked_messages`); unique per reaction. */
  readonly name: string;
  readonly stream: string;
  /** One subject filter (NATS 2.9 accepts only one per consumer). */
  readonly filterSubject: string;
  /** Handles one event; must be idempotent. Throwing retries the message later. */
  handle(event: OrmuzEvent, delivery: Delivery): Promise<void>;
}

export interface DurableReactorOptions {
  /** Postgres schema whose `parked_messages` table receives messages that keep failing. */
  readonly schema: string;
  readonly logger: Logger;
  /** How long the server waits for an ack before redelivering, in ms. Default 30 s; long handlers send heartbeats. */
  readonly ackWaitMs?: number;
  /** Deliveries before a message is parked. Default 10. */
  readonly maxAttempts?: number;
  /** Unacknowledged messages the server lets this consumer hold. Default 256. */
  readonly maxAckPending?: number;
}

interface ParkedDB {
  parked_messages: { projection: string; stream: string; seq: number; subject: string; payload: string; error: string };
}

export class DurableReactor {
  private messages: ConsumerMessages | undefined;
  private loop: Promise<void> | undefined;
  private stopping = false;
  private readonly chains = new Map<string, Promise<void>>();
  private readonly ackWaitMs: number;
  private readonly maxAttempts: number;
  private readonly maxAckPending: number;

  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly db: Kysely<ParkedDB>,
    private readonly reaction: Reaction,
    private readonly opts: DurableReactorOptions,
  ) {
    this.ackWaitMs = opts.ackWaitMs ?? 30_000;
    this.maxAttempts = opts.maxAttempts ?? 10;
    this.maxAckPending = opts.maxAckPending ?? 256;
  }

  /** Creates the durable consumer if needed (from the stream's first message) and starts handling in the background. */
  async start(): Promise<void> {
    const { stream, name, filterSubject } = this.reaction;
    try {
      await this.jsm.consumers.info(stream, name);
    } catch {
      await this.jsm.consumers
        .add(stream, {
          durable_name: name,
          ack_policy: AckPolicy.Explicit,
          deliver_policy: DeliverPolicy.All,
          filter_subject: filterSubject,
          ack_wait: this.ackWaitMs * 1_000_000,
          max_ack_pending: this.maxAckPending,
          max_deliver: -1,
        })
        .catch((err: unknown) => {
          if (!/already (exists|in use)/i.test(String(err))) throw err;
        });
    }
    const consumer = await this.js.consumers.get(stream, name);
    this.stopping = false;
    this.messages = await consumer.consume({ max_messages: 64 });
    this.loop = this.run(this.messages);
  }

  /**
   * Stops taking messages, hands back (naks) those received but not started, and waits for the handlers in flight.
   * Nothing is lost: unacknowledged messages are delivered again to the next start.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.messages?.close().catch(() => undefined);
    await this.loop;
    while (this.chains.size > 0) await Promise.allSettled([...this.chains.values()]);
  }

  private async run(messages: ConsumerMessages): Promise<void> {
    for await (const msg of messages) {
      if (this.stopping) {
        msg.nak();
        continue;
      }
      // Keyed by subject: one conversation, or one call, is handled in order; others run alongside.
      const key = msg.subject;
      const next = (this.chains.get(key) ?? Promise.resolve()).then(() => this.process(msg));
      this.chains.set(key, next);
      void next.finally(() => {
        if (this.chains.get(key) === next) this.chains.delete(key);
      });
    }
  }

  private async process(msg: JsMsg): Promise<void> {
    if (this.stopping) {
      msg.nak();
      return;
    }
    let event: OrmuzEvent;
    try {
      event = decodeEvent(msg.subject, msg.seq, msg.data);
    } catch (err) {
      await this.giveUp(msg, err);
      return;
    }
    const attempt = msg.info.deliveryCount;
    const heartbeat = setInterval(() => msg.working(), Math.max(1000, Math.floor(this.ackWaitMs / 3)));
    try {
      await this.reaction.handle(event, { attempt, seq: msg.seq });
      msg.ack();
    } catch (err) {
      if (attempt >= this.maxAttempts) {
        await this.giveUp(msg, err);
      } else {
        const delay = Math.min(250 * 2 ** (attempt - 1), 30_000);
        this.opts.logger.warn(
          {
            reaction: this.reaction.name,
            seq: msg.seq,
            subject: msg.subject,
            attempt,
            retryInMs: delay,
            err: String(err),
          },
          'reaction failed; it will be retried',
        );
        msg.nak(delay);
      }
    } finally {
      clearInterval(heartbeat);
    }
  }

  /** Parks the message with its error and terminates its delivery; if parking fails, it is retried instead. */
  private async giveUp(msg: JsMsg, err: unknown): Promise<void> {
    const reason = err instanceof Error ? err.message : String(err);
    try {
      await this.db
        .withSchema(this.opts.schema)
        .insertInto('parked_messages')
        .values({
          projection: this.reaction.name,
          stream: this.reaction.stream,
          seq: msg.seq,
          subject: msg.subject,
          payload: new TextDecoder().decode(msg.data),
          error: reason,
        })
        .onConflict((oc) => oc.columns(['projection', 'stream', 'seq']).doNothing())
        .execute();
    } catch (parkErr) {
      this.opts.logger.error(
        { reaction: this.reaction.name, seq: msg.seq, err: String(parkErr) },
        'could not park a message',
      );
      msg.nak(30_000);
      return;
    }
    this.opts.logger.error(
      { reaction: this.reaction.name, seq: msg.seq, subject: msg.subject, err: reason },
      'message parked: it kept failing and was stored in parked_messages',
    );
    msg.term(reason.slice(0, 200));
  }
}
