/**
 * A NestJS transport strategy that serves `@MessagePattern('<name>')` handlers on
 * `<namespace>.cmd.<service>.<name>` (callers present a bearer credential) and on `<namespace>.int.<service>.<name>`
 * (other services, acting within a tenant), in a queue group so replicas share the load. Each handler is given the
 * caller's verified identity (see `caller.ts`).
 *
 * NestJS's built-in NATS server binds patterns to fixed subjects; Ormuz needs the namespace in front (deployments and
 * test runs share one NATS account) and one reply shape with error codes, so the strategy is ours. It reuses the
 * service's single NATS connection.
 */
import {
  Catch,
  HttpException,
  Logger as NestLogger,
  NotFoundException,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import { Server, type CustomTransportStrategy } from '@nestjs/microservices';
import { headers, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import type { Authenticator } from '@ormuz/auth';
import { lastValueFrom, throwError, type Observable } from 'rxjs';
import type { Logger } from 'pino';
import { commandSubject, internalCommandSubject } from '@ormuz/contracts';
import { inSpan, SpanKind, traceContextOf } from '@ormuz/tracing';
import { callerOf, type RpcCallContext } from './caller.js';
import { JsonText } from './json-text.js';
import { PARTS_HEADER, StreamedReply } from './streamed-reply.js';
import { logContextOf } from './log-context.js';
import { MAX_RPC_BYTES, toErrorBody, type RpcErrorBody, type RpcReply } from './rpc.js';

export class NatsRpcServer extends Server implements CustomTransportStrategy {
  private subscriptions: Subscription[] = [];

  constructor(
    private readonly nc: NatsConnection,
    private readonly namespace: string,
    private readonly service: string,
    private readonly log: Logger,
    private readonly authenticator: Authenticator,
  ) {
    super();
  }

  listen(callback: () => void): void {
    for (const [pattern, handler] of this.messageHandlers) {
      for (const internal of [false, true]) {
        const subject = (internal ? internalCommandSubject : commandSubject)(this.namespace, this.service, pattern);
        const sub = this.nc.subscribe(subject, {
          queue: `${this.namespace}.${this.service}`,
          callback: (err, msg) => {
            if (err) {
              this.log.error({ err: String(err), subject }, 'subscription error');
              return;
            }
            if (msg.reply !== undefined && !msg.reply.startsWith(INBOX_PREFIX)) {
              // NATS lets a service answer on whatever reply subject a request names, and a reply there could pass
              // for an event of the log: a request whose reply is not an inbox is not served at all.
              this.log.warn({ subject, reply: msg.reply }, 'request refused: its reply subject is not an inbox');
              return;
            }
            void this.traced(pattern, handler, msg, subject, internal)
              .then(({ reply, parts }) => {
                if (msg.reply) msg.respond(replyText(reply), parts === undefined ? {} : { headers: partsSent(parts) });
              })
              .catch((err: unknown) => this.log.error({ err, subject }, 'reply not sent'));
          },
        });
        this.subscriptions.push(sub);
      }
    }
    callback();
  }

  /**
   * Serves one request in a server span named `<service>/<command>`, continuing the trace the caller sent in the
   * request's headers (a new one when it sent none).
   */
  private traced(
    pattern: string,
    handler: (data: unknown, context: RpcCallContext) => Promise<unknown>,
    msg: Msg,
    subject: string,
    internal: boolean,
  ): Promise<Served> {
    const name = `${this.service}/${pattern}`;
    const attributes = { 'rpc.system': 'nats', 'rpc.service': this.service, 'rpc.method': pattern };
    return inSpan(
      `@ormuz/${this.service}`,
      name,
      { kind: SpanKind.SERVER, attributes, parent: traceContextOf(msg.headers) },
      async (span) => {
        const served = await this.serve(handler, msg, subject, internal);
        if (!served.reply.ok) span.setAttribute('error.type', served.reply.error.code);
        return served;
      },
    );
  }

  private async serve(
    handler: (data: unknown, context: RpcCallContext) => Promise<unknown>,
    msg: Msg,
    subject: string,
    internal: boolean,
  ): Promise<Served> {
    const bytes = msg.data;
    if (bytes.length > MAX_RPC_BYTES) {
      return {
        reply: {
          ok: false,
          error: {
            code: 'payload_too_large',
            message: `The request is ${bytes.length} bytes; the limit is ${MAX_RPC_BYTES}.`,
          },
        },
      };
    }
    let body: unknown;
    try {
      body = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
    } catch (err) {
      return {
        reply: {
          ok: false,
          error: { code: 'malformed_json', message: `The request is not valid UTF-8 JSON: ${(err as Error).message}.` },
        },
      };
    }
    const started = performance.now();
    // A streamed reply counts its parts, also when it fails after some: the final reply says how many went.
    let parts: number | undefined;
    try {
      const context: RpcCallContext = { identity: await callerOf(this.authenticator, msg.headers, internal) };
      const result = await handler(body, context);
      let data = await lastValueFrom(this.transformToObservable(result as Observable<unknown>), {
        defaultValue: null,
      });
      if (data instanceof StreamedReply) {
        const stream = data as StreamedReply<unknown>;
        if (!msg.reply) await stream.cancel();
        else {
          parts = 0;
          data = await stream.send(this.nc, msg.reply, headers, (sent) => (parts = sent));
        }
      }
      if (this.log.isLevelEnabled('debug')) {
        this.log.debug({ subject, ...logContextOf(body), ms: performance.now() - started }, 'command served');
      }
      return { reply: { ok: true, data }, parts };
    } catch (err) {
      const error = toErrorBody(err);
      const fields = { subject, ...logContextOf(body), code: error.code };
      if (error.code === 'internal') this.log.error({ err, ...fields }, 'command failed');
      else this.log.debug({ ...fields, ms: performance.now() - started }, 'command refused');
      return { reply: { ok: false, error }, parts };
    }
  }

  close(): void {
    for (const sub of this.subscriptions) sub.unsubscribe();
    this.subscriptions = [];
  }

  on(): never {
    throw new Error('NatsRpcServer does not emit events');
  }

  unwrap<T>(): T {
    return this.nc as T;
  }
}

/** Where every client's replies go (`_INBOX.`, or `_INBOX.<user>.` under the shipped authorization). */
const INBOX_PREFIX = '_INBOX.';

/** The final reply's header of a streamed reply: how many parts went before it. */
function partsSent(parts: number) {
  const h = headers();
  h.set(PARTS_HEADER, String(parts));
  return h;
}

/** A command's final reply, and how many parts of a streamed reply went before it. */
interface Served {
  readonly reply: RpcReply<unknown>;
  readonly parts?: number;
}

/** The reply as sent: data given as JSON text goes in as it is. */
function replyText(reply: RpcReply<unknown>): string {
  return reply.ok && reply.data instanceof JsonText ? `{"ok":true,"data":${reply.data.text}}` : JSON.stringify(reply);
}

/**
 * The one place errors meet transports. For NATS commands the error passes through unchanged, so `toErrorBody` maps
 * it; for HTTP the error code becomes a status and the body is `{ error: { code, message } }`.
 */
@Catch()
export class OrmuzExceptionFilter implements ExceptionFilter<unknown> {
  catch(exception: unknown, host: ArgumentsHost): Observable<never> | void {
    if (host.getType() !== 'http') return throwError(() => exception);
    const http = host.switchToHttp();
    const res = http.getResponse<{ status(code: number): { json(body: unknown): void } }>();
    if (exception instanceof HttpException) {
      res.status(exception.getStatus()).json({ error: httpExceptionBody(exception, http.getRequest<RequestLine>()) });
      return;
    }
    const body = toErrorBody(exception);
    if (body.code === 'internal')
      httpLog.error(exception instanceof Error ? (exception.stack ?? exception.message) : String(exception));
    res.status(httpStatusFor(body.code)).json({ error: body });
  }
}

const httpLog = new NestLogger('http');

interface RequestLine {
  readonly method: string;
  readonly url: string;
}

/**
 * The error body of an exception raised before any route ran, in the words a caller can act on: an unknown route, or
 * a body Express's parser refused (not JSON, too large, an encoding it cannot read). The parser's error travels as
 * the exception's cause; its `type` says which.
 */
export function httpExceptionBody(exception: HttpException, request: RequestLine): RpcErrorBody {
  const cause = exception.cause as { readonly type?: unknown; readonly limit?: unknown; readonly length?: unknown };
  switch (cause?.type) {
    case 'entity.parse.failed':
      return { code: 'malformed_json', message: `The request body is not valid JSON: ${exception.message}.` };
    case 'entity.too.large': {
      const size = typeof cause.length === 'number' ? `${cause.length} bytes` : 'larger than allowed';
      return {
        code: 'payload_too_large',
        message: `The request body is ${size}; the limit is ${String(cause.limit)}.`,
      };
    }
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return { code: 'unsupported_media_type', message: `${exception.message}: send UTF-8 JSON.` };
  }
  if (exception instanceof NotFoundException) {
    const path = request.url.split('?')[0];
    return { code: 'route_not_found', message: `No route answers ${request.method} ${path}.` };
  }
  return { code: 'http_error', message: exception.message };
}

const HTTP_STATUS: Record<string, number> = {
  schema_violation: 400,
  unauthenticated: 401,
  forbidden: 403,
  malformed_json: 400,
  invalid_identifier: 400,
  invalid_webhook: 400,
  invalid_model_settings: 400,
  non_canonical_value: 400,
  as_of_in_future: 400,
  payload_too_large: 413,
  unsupported_media_type: 415,
  internal: 500,
  service_unavailable: 503,
  append_unacknowledged: 503,
};

/** HTTP status for an error code: explicit map first, then by suffix (`*_not_found` 404, `*_conflict` 409, ...). */
export function httpStatusFor(code: string): number {
  const explicit = HTTP_STATUS[code];
  if (explicit) return explicit;
  if (code.endsWith('_not_found')) return 404;
  if (code.endsWith('_expired')) return 410;
  if (code.startsWith('nats_') || code.startsWith('postgres_')) return 503;
  return 409;
}
