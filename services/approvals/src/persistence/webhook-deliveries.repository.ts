import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { WebhookDeliveryViewV1, WebhookEventV1 } from '@ormuz/contracts';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';
import { APPROVALS_SCHEMA } from './migrations.js';
import type { AttemptRow, DeliveryRow, DeliveryStatus, WebhooksDB } from './webhook.tables.js';

/** One event to send to some endpoints: the same body for each. */
export interface NewDeliveries {
  readonly tenant: string;
  readonly webhookIds: readonly string[];
  readonly eventId: string;
  readonly event: WebhookEventV1;
  readonly approvalId: string;
  readonly callId: string;
  readonly agentId: string | null;
  readonly body: string;
}

/** How an attempt ended, and so what becomes of its delivery. */
export interface AttemptResult {
  readonly statusCode: number | null;
  readonly error: string | null;
  /** `pending` with `nextAttemptAt` to try again; `delivered` or `failed` to stop. */
  readonly status: DeliveryStatus;
  readonly nextAttemptAt: Date | null;
}

/** Filters of the delivery log. */
export interface DeliveryFilter {
  readonly webhookId?: string;
  readonly status?: DeliveryStatus;
  readonly approvalId?: string;
  /** Only deliveries about these agents' calls (an owner who decides for named agents). */
  readonly agents?: readonly string[];
  readonly limit: number;
}

export function toDeliveryView(row: DeliveryRow, attempts: readonly AttemptRow[]): WebhookDeliveryViewV1 {
  return {
    delivery_id: row.delivery_id,
    webhook_id: row.webhook_id,
    tenant: row.tenant,
    event_id: row.event_id,
    event: row.event,
    approval_id: row.approval_id,
    call_id: row.call_id,
    status: row.status,
    attempts: row.attempts,
    next_attempt_at: row.status === 'pending' ? (row.next_attempt_at?.toISOString() ?? null) : null,
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    created_at: row.created_at.toISOString(),
    delivered_at: row.delivered_at?.toISOString() ?? null,
    body: row.body,
    attempt_log: attempts.map((a) => ({
      attempt: a.attempt,
      started_at: a.started_at.toISOString(),
      finished_at: a.finished_at?.toISOString() ?? null,
      status_code: a.status_code,
      error: a.error,
    })),
  };
}

/**
 * The only code that reads and writes the delivery log (`webhook_deliveries`, `webhook_attempts`). Pending rows are
 * the deliverer's queue: they outlive the process, and an attempt claims its row with a lease so that a process that
 * dies mid-attempt leaves it due again once the lease runs out.
 */
@Injectable()
export class WebhookDeliveriesRepository {
  private readonly db: Kysely<WebhooksDB>;
  constructor(@Inject(INFRA) infra: Infrastructure) {
    this.db = (infra.db as Kysely<WebhooksDB>).withSchema(APPROVALS_SCHEMA);
  }

  /**
   * Records a delivery of the event to each endpoint, due at `now`. An endpoint that already has one for the event
   * keeps it (unique on endpoint and event): handling an event again creates nothing. Returns how many are new.
   */
  async enqueue(d: NewDeliveries, now: Date): Promise<number> {
    if (d.webhookIds.length === 0) return 0;
    const rows = await this.db
      .insertInto('webhook_deliveries')
      .values(
        d.webhookIds.map((webhookId) => ({
          delivery_id: randomUUID(),
          tenant: d.tenant,
          webhook_id: webhookId,
          event_id: d.eventId,
          event: d.event,
          approval_id: d.approvalId,
          call_id: d.callId,
          agent_id: d.agentId,
          body: d.body,
          status: 'pending' as const,
          attempts: 0,
          next_attempt_at: now,
          last_status_code: null,
          last_error: null,
          created_at: now,
          updated_at: now,
          delivered_at: null,
        })),
      )
      .onConflict((oc) => oc.columns(['webhook_id', 'event_id']).doNothing())
      .returning('delivery_id')
      .execute();
    return rows.length;
  }

  /**
   * Claims up to `limit` pending deliveries due at `now`: each one's attempt count goes up, an attempt row is opened,
   * and it is not due again before `leaseUntil`. Rows another process is claiming are skipped, so replicas share the
   * queue without sending a delivery twice at once.
   */
  claim(now: Date, leaseUntil: Date, limit: number): Promise<DeliveryRow[]> {
    return this.db.transaction().execute(async (trx) => {
      const due = await trx
        .selectFrom('webhook_deliveries')
        .select('delivery_id')
        .where('status', '=', 'pending')
        .where('next_attempt_at', '<=', now)
        .orderBy('next_attempt_at')
        .limit(limit)
        .forUpdate()
        .skipLocked()
        .execute();
      if (due.length === 0) return [];
      const claimed = await trx
        .updateTable('webhook_deliveries')
        .set({ attempts: sql<number>`attempts + 1`, next_attempt_at: leaseUntil, updated_at: now })
        .where(
          'delivery_id',
          'in',
          due.map((r) => r.delivery_id),
        )
        .returningAll()
        .execute();
      await trx
        .insertInto('webhook_attempts')
        .values(claimed.map((r) => ({ delivery_id: r.delivery_id, attempt: r.attempts, started_at: now })))
        .execute();
      return claimed;
    });
  }

  /**
   * Records how attempt `attempt` of a delivery ended. Nothing changes when the delivery has moved on meanwhile (its
   * lease ran out and another attempt claimed it, or it is no longer pending): the later attempt decides.
   */
  finish(deliveryId: string, attempt: number, result: AttemptResult, now: Date): Promise<void> {
    return this.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('webhook_attempts')
        .set({ finished_at: now, status_code: result.statusCode, error: result.error })
        .where('delivery_id', '=', deliveryId)
        .where('attempt', '=', attempt)
        .execute();
      await trx
        .updateTable('webhook_deliveries')
        .set({
          status: result.status,
          next_attempt_at: result.status === 'pending' ? result.nextAttemptAt : null,
          last_status_code: result.statusCode,
          last_error: result.error,
          updated_at: now,
          ...(result.status === 'delivered' ? { delivered_at: now } : {}),
        })
        .where('delivery_id', '=', deliveryId)
        .where('attempts', '=', attempt)
        .where('status', '=', 'pending')
        .execute();
    });
  }

  /** A tenant's deliveries, newest first, each with its attempts in order. */
  async list(tenant: string, filter: DeliveryFilter): Promise<WebhookDeliveryViewV1[]> {
    let q = this.db.selectFrom('webhook_deliveries').selectAll().where('tenant', '=', tenant);
    if (filter.webhookId) q = q.where('webhook_id', '=', filter.webhookId);
    if (filter.status) q = q.where('status', '=', filter.status);
    if (filter.approvalId) q = q.where('approval_id', '=', filter.approvalId);
    if (filter.agents) {
      q = filter.agents.length === 0 ? q.where(sql<boolean>`false`) : q.where('agent_id', 'in', filter.agents);
    }
    const rows = await q.orderBy('created_at', 'desc').orderBy('delivery_id').limit(filter.limit).execute();
    if (rows.length === 0) return [];
    const attempts = await this.db
      .selectFrom('webhook_attempts')
      .selectAll()
      .where(
        'delivery_id',
        'in',
        rows.map((r) => r.delivery_id),
      )
      .orderBy('delivery_id')
      .orderBy('attempt')
      .execute();
    return rows.map((row) =>
      toDeliveryView(
        row,
        attempts.filter((a) => a.delivery_id === row.delivery_id),
      ),
    );
  }
}
