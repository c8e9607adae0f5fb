import { Inject, Injectable } from '@nestjs/common';
import http from 'node:http';
import https from 'node:https';
import { APPROVALS_CONFIG, type ApprovalsConfig } from '../config.js';
import type { AttemptAnswer } from '../domain/webhook-retry.js';
import { SIGNATURE_HEADER, signatureHeader } from '../domain/webhook-signature.js';
import { WebhookAddressGuard, WebhookAddressRefused } from './webhook-address-guard.js';

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
 * other): a signed request is only ever sent to the URL the operator registered. node:http(s) rather than fetch, so
 * that the connection's own DNS lookup is the guarded one ({@link WebhookAddressGuard}): the address checked is the
 * address connected to.
 */
@Injectable()
export class WebhookSender {
  constructor(
    @Inject(APPROVALS_CONFIG) private readonly config: ApprovalsConfig,
    private readonly guard: WebhookAddressGuard,
  ) {}

  /** `stop` aborts the request (the service is shutting down); that is reported as no answer. */
  async send(request: WebhookRequest, stop: AbortSignal, now = new Date()): Promise<AttemptAnswer> {
    const timestamp = Math.floor(now.getTime() / 1000);
    const url = new URL(request.url);
    try {
      // An address in the URL itself is never looked up: check it here (and the scheme) before connecting. A name is
      // checked by the connection's lookup, on the addresses it connects to.
      this.guard.assertDirect(url);
    } catch (err) {
      if (err instanceof WebhookAddressRefused) return { kind: 'refused', error: `not sent: ${err.message}` };
      return { kind: 'no_response', error: describe(err) };
    }
    const timeout = AbortSignal.timeout(this.config.webhooks.timeoutMs);
    const body = Buffer.from(request.body, 'utf8');
    return new Promise<AttemptAnswer>((resolve) => {
      const client = url.protocol === 'https:' ? https : http;
      const req = client.request(
        url,
        {
          method: 'POST',
          signal: AbortSignal.any([stop, timeout]),
          lookup: this.guard.lookup,
          headers: {
            'content-type': 'application/json',
            'content-length': String(body.length),
            'user-agent': 'Ormuz-Webhooks/1',
            [SIGNATURE_HEADER]: signatureHeader(request.secret, request.body, timestamp),
            'Ormuz-Delivery-Id': request.deliveryId,
            'Idempotency-Key': request.deliveryId,
            'Ormuz-Event-Type': request.eventType,
            'Ormuz-Attempt': String(request.attempt),
          },
        },
        (res) => {
          const retryAfter = res.headers['retry-after'];
          resolve({ kind: 'response', status: res.statusCode ?? 0, retryAfter: retryAfter ?? null });
          // The answer's body is not used; reading it to the end lets the connection be reused.
          res.on('error', () => undefined).resume();
        },
      );
      req.on('error', (err) => {
        if (stop.aborted) return resolve({ kind: 'no_response', error: 'the service stopped during the attempt' });
        if (timeout.aborted) {
          return resolve({ kind: 'no_response', error: `no answer within ${this.config.webhooks.timeoutMs} ms` });
        }
        if (err instanceof WebhookAddressRefused)
          return resolve({ kind: 'refused', error: `not sent: ${err.message}` });
        resolve({ kind: 'no_response', error: describe(err) });
      });
      req.end(body);
    });
  }
}

/** The socket's error and its code (`ECONNREFUSED`, `ECONNRESET`, …); errors that wrap one in `cause` say both. */
function describe(err: unknown): string {
  const e = err as { message?: string; code?: string; cause?: { code?: string; message?: string } };
  const cause = e.cause?.code ?? e.cause?.message ?? (e.message?.includes(e.code ?? '') ? undefined : e.code);
  return `${e.message ?? String(err)}${cause ? ` (${cause})` : ''}`.slice(0, 500);
}
