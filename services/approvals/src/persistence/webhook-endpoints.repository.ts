import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import { WEBHOOK_EVENTS, type WebhookEventV1, type WebhookViewV1 } from '@ormuz/contracts';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';
import { APPROVALS_SCHEMA } from './migrations.js';
import type { StoredSecret } from './webhook-secret-box.js';
import type { WebhookRow, WebhooksDB } from './webhook.tables.js';

/** What a change of an endpoint may set; absent fields keep their value. */
export interface WebhookChange {
  readonly url?: string;
  readonly events?: readonly WebhookEventV1[];
  readonly enabled?: boolean;
  readonly description?: string;
  /** A new secret, issued now, as it is to be stored. */
  readonly secret?: StoredSecret;
}

/** An endpoint as the deliverer needs it: where to send, what to sign with, and whether it still wants anything. */
export type EndpointTarget = Pick<WebhookRow, 'url' | 'secret' | 'secret_sealed' | 'enabled' | 'removed_at'>;

export function toWebhookView(row: WebhookRow): WebhookViewV1 {
  return {
    webhook_id: row.webhook_id,
    tenant: row.tenant,
    url: row.url,
    events: WEBHOOK_EVENTS.filter((e) => row.events.includes(e)),
    enabled: row.enabled,
    description: row.description,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    secret_issued_at: row.secret_issued_at.toISOString(),
  };
}

/** The only code that reads and writes the `webhooks` table. Every query is scoped to one tenant. */
@Injectable()
export class WebhookEndpointsRepository {
  private readonly db: Kysely<WebhooksDB>;
  constructor(@Inject(INFRA) infra: Infrastructure) {
    this.db = (infra.db as Kysely<WebhooksDB>).withSchema(APPROVALS_SCHEMA);
  }

  async create(row: Omit<WebhookRow, 'removed_at'>): Promise<WebhookRow> {
    return this.db
      .insertInto('webhooks')
      .values({ ...row, removed_at: null })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /** Applies `change` to a registered (not removed) endpoint; undefined when there is none. */
  update(tenant: string, webhookId: string, change: WebhookChange, now: Date): Promise<WebhookRow | undefined> {
    const { secret, events, ...rest } = change;
    return this.db
      .updateTable('webhooks')
      .set({
        ...rest,
        ...(events ? { events: [...events] } : {}),
        ...(secret ? { ...secret, secret_issued_at: now } : {}),
        updated_at: now,
      })
      .where('tenant', '=', tenant)
      .where('webhook_id', '=', webhookId)
      .where('removed_at', 'is', null)
      .returningAll()
      .executeTakeFirst();
  }

  /** Stores an endpoint's secret anew (sealed, where it was in plain text), keeping when it was issued. */
  async restore(tenant: string, webhookId: string, secret: StoredSecret): Promise<void> {
    await this.db
      .updateTable('webhooks')
      .set({ ...secret })
      .where('tenant', '=', tenant)
      .where('webhook_id', '=', webhookId)
      .execute();
  }

  /** Marks an endpoint removed; undefined when there is none. */
  remove(tenant: string, webhookId: string, now: Date): Promise<WebhookRow | undefined> {
    return this.db
      .updateTable('webhooks')
      .set({ removed_at: now, enabled: false, updated_at: now })
      .where('tenant', '=', tenant)
      .where('webhook_id', '=', webhookId)
      .where('removed_at', 'is', null)
      .returningAll()
      .executeTakeFirst();
  }

  /** A tenant's endpoints, oldest first (removed ones are left out). */
  list(tenant: string): Promise<WebhookRow[]> {
    return this.db
      .selectFrom('webhooks')
      .selectAll()
      .where('tenant', '=', tenant)
      .where('removed_at', 'is', null)
      .orderBy('created_at')
      .execute();
  }

  /**
   * The endpoints to tell about `event`, which happened at `occurredAt`: enabled ones that asked for it and were
   * registered by then. The last condition is what keeps a replay of the log (a reset checkpoint) from sending an
   * endpoint events older than the endpoint itself.
   */
  subscribed(tenant: string, event: WebhookEventV1, occurredAt: Date): Promise<Pick<WebhookRow, 'webhook_id'>[]> {
    return this.db
      .selectFrom('webhooks')
      .select('webhook_id')
      .where('tenant', '=', tenant)
      .where('enabled', '=', true)
      .where('removed_at', 'is', null)
      .where(sql<boolean>`${event} = any(events)`)
      .where('created_at', '<=', occurredAt)
      .execute();
  }

  /** Where and how to send one delivery: the endpoint as it is now, removed or not. */
  target(tenant: string, webhookId: string): Promise<EndpointTarget | undefined> {
    return this.db
      .selectFrom('webhooks')
      .select(['url', 'secret', 'secret_sealed', 'enabled', 'removed_at'])
      .where('tenant', '=', tenant)
      .where('webhook_id', '=', webhookId)
      .executeTakeFirst();
  }
}
