import type { WebhookEventV1 } from '@ormuz/contracts';

/** A tenant's endpoint (migrations 0004, 0005). */
export interface WebhookRow {
  tenant: string;
  webhook_id: string;
  url: string;
  events: WebhookEventV1[];
  enabled: boolean;
  description: string | null;
  /**
   * The HMAC key, as issued: null once it is kept sealed in `secret_sealed` (migration 0005, `WebhookSecretBox`).
   * Read only by the deliverer.
   */
  secret: string | null;
  /** The HMAC key sealed with AES-256-GCM under `ORMUZ_WEBHOOKS_SECRET_KEY`, or null when kept as issued. */
  secret_sealed: string | null;
  secret_issued_at: Date;
  created_at: Date;
  updated_at: Date;
  removed_at: Date | null;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One event to send to one endpoint. */
export interface DeliveryRow {
  delivery_id: string;
  tenant: string;
  webhook_id: string;
  event_id: string;
  event: WebhookEventV1;
  approval_id: string;
  call_id: string;
  agent_id: string | null;
  /** The JSON body, exactly as signed and sent. */
  body: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
  delivered_at: Date | null;
}

/** One POST of a delivery. */
export interface AttemptRow {
  delivery_id: string;
  attempt: number;
  started_at: Date;
  finished_at: Date | null;
  status_code: number | null;
  error: string | null;
}

/** The webhook tables of the approvals schema. */
export interface WebhooksDB {
  webhooks: WebhookRow;
  webhook_deliveries: DeliveryRow;
  webhook_attempts: AttemptRow;
}
