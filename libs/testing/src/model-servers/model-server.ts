/**
 * Local stand-ins for model APIs: real HTTP servers (node:http, a free loopback port) that speak one provider's wire
 * format, driven by a per-test script of steps and recording every request they receive. Each subclass validates a
 * request the way its API does (answering what the API would reject with the API's status and error body) and renders
 * scripted replies as that API's JSON or SSE stream, with its rate-limit headers. A test double, not a mock: the
 * adapter under test does real fetches, reads real headers and parses real streams.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** How a scripted reply ended, in the servers' shared terms; each server writes its API's own value. */
export type ScriptedStop = 'end' | 'tool_use' | 'length' | 'content_filter' | 'refusal';

/** A tool call in a scripted reply. `arguments`: the exact text to send (may be invalid JSON), or a value to encode. */
export interface ScriptedToolCall {
  readonly name: string;
  readonly arguments: string | Readonly<Record<string, unknown>>;
}

/** One step of a script: what the server does with the next request that passes validation. */
export type ModelServerStep =
  | {
      readonly kind: 'reply';
      readonly text?: string;
      readonly tool_calls?: readonly ScriptedToolCall[];
      /** Default: `tool_use` when there are tool calls, else `end`. */
      readonly stop?: ScriptedStop;
      /** The refusal text, for `stop: 'refusal'`. */
      readonly refusal?: string;
      readonly usage?: { readonly input: number; readonly output: number };
      /** Streamed replies only: close the connection after this many events, as a dropped stream does. */
      readonly cutAfter?: number;
      /**
       * Streamed replies only: send this many events, then the rest once `until` settles, as a model still writing
       * does (a test lets the stream end once it has seen the first pieces arrive wherever they go).
       */
      readonly holdAfter?: { readonly events: number; readonly until: PromiseLike<unknown> };
    }
  /** An API error with the API's body shape; `headers` such as `retry-after`. */
  | {
      readonly kind: 'error';
      readonly status: number;
      readonly message?: string;
      readonly type?: string;
      readonly headers?: Readonly<Record<string, string>>;
    }
  /** A body sent as is (not JSON, say), with status 200 unless given. */
  | { readonly kind: 'raw'; readonly status?: number; readonly contentType?: string; readonly body: string }
  /** Accept the request and never answer (until the client gives up or the server closes). */
  | { readonly kind: 'hang' }
  /** Close the connection without answering. */
  | { readonly kind: 'drop' };

/** A request as received. */
export interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly headers: Readonly<Record<string, string>>;
  /** The parsed JSON body, or the raw text when it did not parse. */
  readonly body: unknown;
}

/** An error the API would answer, raised by validation. */
export class ApiRejection extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
  ) {
    super(message);
  }
}

export abstract class ModelServer {
  /** Every request received, validated or not, in order. */
  readonly requests: ReceivedRequest[] = [];
  private readonly steps: ModelServerStep[] = [];
  private readonly sockets = new Set<Socket>();
  private server: Server | undefined;
  private port = 0;
  private counter = 0;

  constructor(
    /** The API key the server accepts. */
    readonly apiKey: string,
  ) {}

  /** Starts listening on a free loopback port. */
  async start(): Promise<this> {
    const server = createServer((req, res) => void this.handle(req, res));
    server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  /** `http://127.0.0.1:<port>`; each server documents the base URL an adapter appends its paths to. */
  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Adds steps to the script, in order. */
  script(...steps: ModelServerStep[]): this {
    this.steps.push(...steps);
    return this;
  }

  /** Steps not used yet. */
  get remaining(): number {
    return this.steps.length;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** A fresh id with the API's prefix. */
  protected id(prefix: string): string {
    this.counter += 1;
    return `${prefix}${this.counter.toString(16).padStart(24, '0')}`;
  }

  /** Checks auth, headers, path and body as the API does; throws {@link ApiRejection}. */
  protected abstract validate(request: ReceivedRequest): void;
  /** The API's error body. */
  protected abstract errorBody(rejection: ApiRejection): unknown;
  /** The API's error `type` for a status. */
  protected abstract errorType(status: number): string;
  /** Rate-limit and request-id headers the API sends on every response. */
  protected abstract commonHeaders(): Record<string, string>;
  /** Answers a validated request with a scripted reply (JSON or SSE, as the request asked). */
  protected abstract reply(
    request: ReceivedRequest,
    step: Extract<ModelServerStep, { kind: 'reply' }>,
    res: ServerResponse,
  ): void;

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', this.origin);
    let body: unknown = text;
    let parsed = true;
    try {
      body = JSON.parse(text);
    } catch {
      parsed = false;
    }
    const headers = Object.fromEntries(
      Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]),
    );
    const request: ReceivedRequest = {
      method: req.method ?? '',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers,
      body,
    };
    this.requests.push(request);
    try {
      if (!parsed)
        throw new ApiRejection(400, 'We could not parse the JSON body of your request.', 'invalid_request_error');
      this.validate(request);
    } catch (err) {
      if (!(err instanceof ApiRejection)) throw err;
      return this.json(res, err.status, this.errorBody(err));
    }
    const step = this.steps.shift() ?? { kind: 'error', status: 500, message: 'The test script has no step left.' };
    switch (step.kind) {
      case 'reply':
        return this.reply(request, step, res);
      case 'error': {
        const rejection = new ApiRejection(
          step.status,
          step.message ?? 'Scripted error.',
          step.type ?? this.errorType(step.status),
        );
        return this.json(res, step.status, this.errorBody(rejection), step.headers);
      }
      case 'raw':
        res.writeHead(step.status ?? 200, { 'content-type': step.contentType ?? 'text/html', ...this.commonHeaders() });
        res.end(step.body);
        return;
      case 'hang':
        return;
      case 'drop':
        req.socket.destroy();
        return;
    }
  }

  /** Writes a JSON response with the common headers. */
  protected json(
    res: ServerResponse,
    status: number,
    body: unknown,
    headers: Readonly<Record<string, string>> = {},
  ): void {
    res.writeHead(status, { 'content-type': 'application/json', ...this.commonHeaders(), ...headers });
    res.end(JSON.stringify(body));
  }

  /**
   * Writes an SSE stream: each event with its `event:` line when named, then `[DONE]` if `done` is given; cut off or
   * held as the step says (`cutAfter`, `holdAfter`).
   */
  protected async sse(
    res: ServerResponse,
    events: readonly { event?: string; data: unknown }[],
    done: string | undefined,
    { cutAfter, holdAfter }: Pick<Extract<ModelServerStep, { kind: 'reply' }>, 'cutAfter' | 'holdAfter'>,
  ): Promise<void> {
    if (cutAfter !== undefined) {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', ...this.commonHeaders() });
      for (const e of events.slice(0, cutAfter)) res.write(`data: ${JSON.stringify(e.data)}\n\n`);
      res.socket?.destroy();
      return;
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      ...this.commonHeaders(),
    });
    for (const [i, e] of events.entries()) {
      if (i === holdAfter?.events) await holdAfter.until;
      res.write(`${e.event ? `event: ${e.event}\n` : ''}data: ${JSON.stringify(e.data)}\n\n`);
    }
    if (done !== undefined) res.write(`data: ${done}\n\n`);
    res.end();
  }
}

/** Splits `text` into pieces of at most `size` characters, as a stream delivers it. */
export function pieces(text: string, size = 4): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** The argument text of a scripted call. */
export function argumentText(call: ScriptedToolCall): string {
  return typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
}

/** Function names the three APIs accept. */
export const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** The request's bearer token, or `''`. */
export function bearer(request: ReceivedRequest): string {
  const auth = request.headers.authorization ?? '';
  return auth.startsWith('Bearer ') ? auth.slice('Bearer '.length) : '';
}

/** A key as OpenAI echoes a wrong one: its first three and last four characters. */
export function maskedKey(key: string): string {
  return key.length > 8 ? `${key.slice(0, 3)}*****${key.slice(-4)}` : '*****';
}
