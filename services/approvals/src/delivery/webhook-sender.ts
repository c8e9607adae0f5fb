import { Inject, Injectable } from '@nestjs/common';
import { APPROVALS_CONFIG, type ApprovalsConfig } from '../config.js';
import type { AttemptAnswer } from '../domain/webhook-retry.js';
import { SIGNATURE_HEADER, signatureHeader } from '../domain/webhook-signature.js';

/** One POST to send: where, what, and the identifiers that stay the same on every attempt. */
export interface WebhookRequest {
  readonly url: string;
  readonly secret: string;
  readonly deliveryId: string;
  /** `approval.staged`, … */
  readonly eventType: string;
  readonly body: string;
  readonly attempt: number;
}

/**
 * Sends one webhook POST and reports what came back; it never throws. The body is sent as stored; the signature is
 * made at send time, so its timestamp is the attempt's. Redirects are not followed (a 3xx is an answer like any
 * other): a signed request is only ever sent to the URL the operator registered.
 */
@Injectable()
export class WebhookSender {
  constructor(@Inject(APPROVALS_CONFIG) private readonly config: ApprovalsConfig) {}

  /** `stop` aborts the request (the service is shutting down); that is reported as no answer. */
  async send(request: WebhookRequest, stop: AbortSignal, now = new Date()): Promise<AttemptAnswer> {
    const timestamp = Math.floor(now.getTime() / 1000);
    const timeout = AbortSignal.timeout(this.config.webhooks.timeoutMs);
    try {
      const res = await fetch(request.url, {
        method: 'POST',
        redirect: 'manual',
        signal: AbortSignal.any([stop, timeout]),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Ormuz-Webhooks/1',
          [SIGNATURE_HEADER]: signatureHeader(request.secret, request.body, timestamp),
          'Ormuz-Delivery-Id': request.deliveryId,
          'Idempotency-Key': request.deliveryId,
          'Ormuz-Event-Type': request.eventType,
          'Ormuz-Attempt': String(request.attempt),
        },
        body: request.body,
      });
      // The answer's body is not used; reading it to the end lets the connection be reused.
      await res.arrayBuffer().catch(() => undefined);
      return { kind: 'response', status: res.status, retryAfter: res.headers.get('retry-after') };
    } catch (err) {
      if (stop.aborted) return { kind: 'no_response', error: 'the service stopped during the attempt' };
      if (timeout.aborted) {
        return { kind: 'no_response', error: `no answer within ${this.config.webhooks.timeoutMs} ms` };
      }
      return { kind: 'no_response', error: describe(err) };
    }
  }
}

/** fetch's errors wrap the socket's (`ECONNREFUSED`, `ECONNRESET`, …) in `cause`: say both. */
function describe(err: unknown): string {
  const e = err as { message?: string; cause?: { code?: string; message?: string } };
  const cause = e.cause?.code ?? e.cause?.message;
  return `${e.message ?? String(err)}${cause ? ` (${cause})` : ''}`.slice(0, 500);
}
