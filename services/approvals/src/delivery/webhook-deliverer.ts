import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { WEBHOOK_EVENT_TYPES } from '@ormuz/contracts';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';
import { APPROVALS_CONFIG, type ApprovalsConfig } from '../config.js';
import { judgeAttempt, nextDelayMs, type AttemptAnswer } from '../domain/webhook-retry.js';
import { WebhookDeliveriesRepository, type AttemptResult } from '../persistence/webhook-deliveries.repository.js';
import { WebhookEndpointsRepository } from '../persistence/webhook-endpoints.repository.js';
import { WebhookSecretBox, WebhookSecretUnavailable } from '../persistence/webhook-secret-box.js';
import type { DeliveryRow } from '../persistence/webhook.tables.js';
import { WebhookSender } from './webhook-sender.js';

/** Deliveries claimed at once; they are sent concurrently. */
const BATCH = 16;

/**
 * Sends pending deliveries when they are due, and records each attempt. The queue is the table, not memory: a
 * delivery waiting for its next attempt when the service stops is sent by whichever process runs next, once due.
 * An attempt holds its row with a lease (the POST's timeout and a margin), so one cut short by a crash is due again
 * when the lease runs out; the receiver may then get it twice, with the same `Idempotency-Key`.
 */
@Injectable()
export class WebhookDeliverer implements OnApplicationBootstrap, OnApplicationShutdown {
  private running = false;
  private loop: Promise<void> | undefined;
  private wakeUp: (() => void) | undefined;
  private woken = false;
  private stop = new AbortController();

  constructor(
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly endpoints: WebhookEndpointsRepository,
    private readonly sender: WebhookSender,
    private readonly box: WebhookSecretBox,
    @Inject(APPROVALS_CONFIG) private readonly config: ApprovalsConfig,
    @Inject(INFRA) private readonly infra: Infrastructure,
  ) {}

  onApplicationBootstrap() {
    this.running = true;
    this.stop = new AbortController();
    this.loop = this.run();
  }

  /** Stops claiming, aborts the POSTs in flight (recorded as unanswered, due again at once) and waits for them. */
  async onApplicationShutdown() {
    this.running = false;
    this.stop.abort();
    this.wake();
    await this.loop;
  }

  /** New deliveries are due now: look at once instead of at the next poll. */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  private async run(): Promise<void> {
    while (this.running) {
      this.woken = false;
      let claimed = 0;
      try {
        claimed = await this.deliverDue();
      } catch (err) {
        this.infra.logger.error({ err: String(err) }, 'webhook deliveries could not be claimed; retrying');
      }
      // A full batch may have more behind it; otherwise wait for the poll or a wake-up.
      if (claimed < BATCH && !this.woken) await this.idle(this.config.webhooks.pollMs);
    }
  }

  /** Claims the deliveries due now and sends them; returns how many it claimed. */
  async deliverDue(): Promise<number> {
    const now = new Date();
    const lease = new Date(now.getTime() + this.config.webhooks.timeoutMs + 5_000);
    const claimed = await this.deliveries.claim(now, lease, BATCH);
    await Promise.all(claimed.map((row) => this.attempt(row)));
    return claimed.length;
  }

  private async attempt(row: DeliveryRow): Promise<void> {
    try {
      const result = await this.outcome(row);
      await this.deliveries.finish(row.delivery_id, row.attempts, result, new Date());
    } catch (err) {
      // Not recorded: the lease makes the delivery due again, and the next attempt is counted as such.
      this.infra.logger.error({ err: String(err), delivery: row.delivery_id }, 'webhook attempt not recorded');
    }
  }

  /** Sends one attempt (unless the endpoint is gone or the attempts are spent) and says what becomes of it. */
  private async outcome(row: DeliveryRow): Promise<AttemptResult> {
    const settings = this.config.webhooks;
    const endpoint = await this.endpoints.target(row.tenant, row.webhook_id);
    if (!endpoint || endpoint.removed_at || !endpoint.enabled) {
      const why = endpoint?.removed_at ? 'removed' : 'disabled';
      return { status: 'failed', statusCode: null, error: `not sent: the webhook was ${why}`, nextAttemptAt: null };
    }
    if (row.attempts > settings.maxAttempts) {
      // The last allowed attempt was cut short (the process died during it): no answer ever came.
      return { status: 'failed', statusCode: null, error: 'the last attempt got no answer', nextAttemptAt: null };
    }
    let secret: string;
    try {
      secret = this.box.open(row, endpoint);
    } catch (err) {
      if (!(err instanceof WebhookSecretUnavailable)) throw err;
      return { status: 'failed', statusCode: null, error: `not sent: ${err.message}`, nextAttemptAt: null };
    }
    const answer: AttemptAnswer = await this.sender.send(
      {
        url: endpoint.url,
        secret,
        deliveryId: row.delivery_id,
        eventType: WEBHOOK_EVENT_TYPES[row.event],
        body: row.body,
        attempt: row.attempts,
      },
      this.stop.signal,
    );
    const now = new Date();
    const statusCode = answer.kind === 'response' ? answer.status : null;
    if (this.stop.signal.aborted && answer.kind === 'no_response') {
      // Cut short by shutdown, not by the receiver: due at once for whichever process runs next.
      return { status: 'pending', statusCode, error: answer.error, nextAttemptAt: now };
    }
    const verdict = judgeAttempt(answer, now);
    if (verdict.next === 'delivered') return { status: 'delivered', statusCode, error: null, nextAttemptAt: null };
    if (verdict.next === 'failed') return { status: 'failed', statusCode, error: verdict.why, nextAttemptAt: null };
    const delay = nextDelayMs(row.attempts, verdict.retryAfterMs, settings);
    if (delay === undefined) {
      const error = `${verdict.why}; gave up after ${row.attempts} attempts`;
      return { status: 'failed', statusCode, error, nextAttemptAt: null };
    }
    return { status: 'pending', statusCode, error: verdict.why, nextAttemptAt: new Date(now.getTime() + delay) };
  }

  /** Waits `ms`, or less when woken. */
  private async idle(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.wakeUp?.(), ms);
      this.wakeUp = () => {
        clearTimeout(timer);
        this.wakeUp = undefined;
        resolve();
      };
    });
  }
}
