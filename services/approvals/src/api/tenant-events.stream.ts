/**
 * `GET /v1/tenants/{tenant}/events`: one context's events of a tenant as server-sent events, read from JetStream by
 * an ordered consumer filtered to the tenant's subjects. No command serves this, so the edge is the one that checks
 * the caller: it verifies the credential and holds it to the route's access row and to the tenant its token names.
 *
 * Each SSE message is one stream message, `id:` its stream sequence, so a client that reconnects with `Last-Event-ID`
 * resumes right after it, never inside one decision's events. The consumer is created before the response starts
 * (an event appended once the client has the headers is delivered) and deleted as soon as the client goes. The stream
 * ends with an `end` event (`{ reason, message }`, no id) when the credential that opened it stops being valid: a
 * token at its `exp`, an API key once a periodic check finds it revoked (CredentialWatch).
 */
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { Inject, Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import { DeliverPolicy, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import { authorize } from '@ormuz/auth';
import {
  assertValid,
  SchemaViolationError,
  tenantFilter,
  type ContextName,
  type TenantEventsMessageV1,
  type TenantEventsRequestV1,
} from '@ormuz/contracts';
import { decodeEvents, streamName } from '@ormuz/event-log';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';
import { APPROVALS_CONFIG, type ApprovalsConfig } from '../config.js';
import { bearerOf } from '../console/bearer.js';
import { CredentialWatch, type CredentialEnd } from '../console/credential-watch.js';
import type { EventsRoute } from './api-routes.js';
import { routeRequest, type EdgeRequest } from './edge-request.js';

/** A comment line this often keeps proxies and load balancers from closing a quiet stream. */
const KEEP_ALIVE_MS = 15_000;
/** A consumer nobody pulls from (its edge died without deleting it) is removed by the server after this long. */
const INACTIVE_THRESHOLD_MS = 30_000;

@Injectable()
export class TenantEventsStream implements BeforeApplicationShutdown {
  /** Open streams: each entry stops one and resolves once its consumer is deleted. */
  private readonly open = new Set<() => Promise<void>>();

  constructor(
    @Inject(INFRA) private readonly infra: Infrastructure,
    @Inject(APPROVALS_CONFIG) private readonly config: ApprovalsConfig,
  ) {}

  /**
   * Serves the stream on `res` until the client disconnects or the service stops. Throws (before anything is written,
   * so the exception filter answers) UnauthenticatedError, ForbiddenError, InvalidIdentifierError or
   * SchemaViolationError.
   */
  async serve(route: EventsRoute, http: EdgeRequest, res: ServerResponse): Promise<void> {
    // As for the command routes: the URL first (identifiers, query parameters), then who is asking, then the request.
    const fromUrl = routeRequest(route, http);
    const header = http.headers.authorization;
    const caller = await this.infra.authenticator.fromHeader(Array.isArray(header) ? header[0] : header);
    authorize(route.access, caller, fromUrl);
    const request = assertValid<TenantEventsRequestV1>(route.requestSchema, fromUrl);
    const context = request.context ?? 'calls';
    const consumer = await this.infra.js.consumers.get(streamName(this.infra.config.namespace, context), {
      filter_subjects: tenantFilter(this.infra.config.namespace, context, request.tenant),
      inactive_threshold: INACTIVE_THRESHOLD_MS,
      ...startAt(request.from, http.headers['last-event-id'], route.requestSchema),
    });
    let messages: ConsumerMessages;
    try {
      messages = await consumer.consume({ max_messages: 256 });
    } catch (err) {
      await consumer.delete().catch(() => false);
      throw err;
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      // nginx buffers responses unless told not to; a buffered event stream arrives late or never.
      'x-accel-buffering': 'no',
    });
    res.flushHeaders();
    res.once('close', () => messages.stop());
    let ended: CredentialEnd | undefined;
    const watch = new CredentialWatch(this.infra.authenticator, bearerOf(header), {
      recheckMs: this.config.streamRecheckMs,
      onRecheckError: (err) =>
        this.infra.logger.warn({ err: err.message }, 'an event stream could not verify its credential again'),
    });
    watch.start((why) => {
      ended = why;
      messages.stop();
    });
    const finished = this.relay(context, messages, res, () => ended).finally(() => {
      watch.stop();
      return consumer.delete().catch(() => false);
    });
    const stop = async () => {
      messages.stop();
      await finished;
    };
    this.open.add(stop);
    try {
      await finished;
    } finally {
      this.open.delete(stop);
    }
  }

  /** Stops every open stream, and waits for their consumers to be deleted, before the HTTP server closes. */
  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all([...this.open].map((stop) => stop()));
  }

  /**
   * Writes each message as one server-sent event until the consumer stops; then, when the credential ended the
   * stream, an `end` event saying why; then ends the response.
   */
  private async relay(
    context: ContextName,
    messages: ConsumerMessages,
    res: ServerResponse,
    ended: () => CredentialEnd | undefined,
  ): Promise<void> {
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
    try {
      for await (const m of messages) {
        if (res.destroyed || ended()) break;
        if (!res.write(frame(context, m))) await drained(res);
      }
    } catch (err) {
      // The headers are out: the client learns of the failure by the stream ending, and resumes from its last id.
      this.infra.logger.warn({ err, context }, 'event stream ended by a consumer error');
    } finally {
      clearInterval(keepAlive);
      const why = ended();
      if (why && !res.destroyed) res.write(`event: end\ndata: ${JSON.stringify(why)}\n\n`);
      res.end();
    }
  }
}

/** Resolves once `res` takes more (a slow client has read what was buffered), or is gone; leaves no listener behind. */
async function drained(res: ServerResponse): Promise<void> {
  const done = new AbortController();
  const on = (event: string) => once(res, event, { signal: done.signal }).catch(() => undefined);
  await Promise.race([on('drain'), on('close')]);
  done.abort();
}

/** One stream message as one server-sent event. */
function frame(context: ContextName, m: JsMsg): string {
  let data: TenantEventsMessageV1;
  try {
    data = { context, seq: m.seq, events: decodeEvents(m.subject, m.seq, m.data) };
  } catch (err) {
    data = { context, seq: m.seq, events: [], error: (err as Error).message };
  }
  // JSON has no raw newlines, so the data is one `data:` line.
  return `id: ${m.seq}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * Where the consumer starts: after `Last-Event-ID` when the client resumes, else at `from` (a sequence or a time),
 * else at the next event appended.
 */
function startAt(from: string | undefined, lastEventId: string | string[] | undefined, schema: string) {
  if (lastEventId !== undefined) {
    const last = Array.isArray(lastEventId) ? lastEventId[0] : lastEventId;
    if (!last || !/^[0-9]{1,15}$/.test(last)) {
      throw new SchemaViolationError(schema, [
        'Last-Event-ID must be the stream sequence of an event this stream sent',
      ]);
    }
    return { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: Number(last) + 1 };
  }
  if (from === undefined) return { deliver_policy: DeliverPolicy.New };
  if (/^[0-9]+$/.test(from)) return { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: Number(from) };
  return { deliver_policy: DeliverPolicy.StartTime, opt_start_time: new Date(from).toISOString() };
}
