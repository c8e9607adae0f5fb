/**
 * The one way the adapters talk HTTP to a model API: Node's fetch, a bounded number of attempts with exponential
 * backoff and full jitter on 408/409/429/5xx and connection errors (honouring the server's `Retry-After`, capped), a
 * timeout per attempt combined with the turn's own signal, and errors that carry the last status and the API's
 * message but never the API key: the key is sent in a header, and any echo of it in a message is redacted.
 */
import { ModelUnavailableError } from '../../domain/errors.js';
import { backoffMs, isRetryableStatus, retryAfterMs, type RetryPolicy } from './retry.js';

/** Transport settings of one provider. */
export interface HttpSettings extends RetryPolicy {
  /** Bound of one attempt, in ms, from sending the request to the last byte of the reply (streamed or not). */
  readonly timeoutMs: number;
}

/** A note about a retry, for the service log; it holds no header and no key. */
export type RetryLog = (entry: {
  readonly model: string;
  readonly attempt: number;
  readonly delay_ms: number;
  readonly status?: number;
  readonly error?: string;
}) => void;

/** One POST of a JSON body. */
export interface JsonPost {
  /** `<provider>:<model>`, for errors. */
  readonly model: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
  /** The turn's signal: when it aborts, the attempt stops and nothing is retried. */
  readonly signal?: AbortSignal;
  /** Secrets to redact from every error message (the API key). */
  readonly secrets: readonly string[];
}

/** What `read` does with a successful response of try `attempt` (from 1); it runs under the attempt's timeout. */
export type ResponseReader<T> = (response: Response, signal: AbortSignal, attempt: number) => Promise<T>;

/** A response the reader could not use: not retried by the transport (the loop asks the model again). */
export class MalformedReplyError extends Error {}

export class ProviderHttp {
  constructor(
    private readonly settings: HttpSettings,
    private readonly log: RetryLog = () => {},
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * Posts `post.body` and hands a 2xx response to `read`; retries what may pass later. Throws ModelUnavailableError
   * with the last status or error once the attempts are spent, or at once for a status that will not change.
   */
  async post<T>(post: JsonPost, read: ResponseReader<T>): Promise<T> {
    const redact = (text: string) =>
      post.secrets.filter((s) => s.length > 0).reduce((t, s) => t.split(s).join('[redacted]'), text);
    const fail = (why: string) => new ModelUnavailableError(post.model, redact(why));
    const { attempts } = this.settings;
    let last = 'no attempt was made';
    for (let attempt = 1; attempt <= attempts; attempt++) {
      post.signal?.throwIfAborted();
      const timeout = AbortSignal.timeout(this.settings.timeoutMs);
      const signal = post.signal ? AbortSignal.any([post.signal, timeout]) : timeout;
      let wait: number | undefined;
      try {
        const response = await fetch(post.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...post.headers },
          body: JSON.stringify(post.body),
          signal,
        });
        if (response.ok) return await read(response, signal, attempt);
        const text = await response.text().catch(() => '');
        last = `HTTP ${response.status} from ${post.url}: ${apiMessage(text)}`;
        if (!isRetryableStatus(response.status)) throw fail(last);
        wait = retryAfterMs(response.headers, this.clock(), this.settings.maxDelayMs);
        if (attempt < attempts) this.log({ model: post.model, attempt, status: response.status, delay_ms: wait ?? -1 });
      } catch (err) {
        if (err instanceof ModelUnavailableError) throw err;
        if (err instanceof MalformedReplyError) throw fail(`${err.message} (from ${post.url})`);
        if (post.signal?.aborted) throw err;
        last = timeout.aborted
          ? `no complete reply from ${post.url} within ${this.settings.timeoutMs} ms`
          : `cannot reach ${post.url}: ${describe(err)}`;
        if (attempt < attempts) this.log({ model: post.model, attempt, error: redact(last), delay_ms: -1 });
      }
      if (attempt < attempts) await sleep(wait ?? backoffMs(attempt, this.settings), post.signal);
    }
    return Promise.reject(fail(`${last} (after ${attempts} attempt${attempts === 1 ? '' : 's'})`));
  }
}

/** The API's own message from an error body (OpenAI and Anthropic both nest it in `error.message`), cut short. */
export function apiMessage(text: string): string {
  let message = text.trim();
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown; type?: unknown } | string; message?: unknown };
    if (typeof body.error === 'string') message = body.error;
    else if (body.error && typeof body.error.message === 'string') {
      message = typeof body.error.type === 'string' ? `${body.error.type}: ${body.error.message}` : body.error.message;
    } else if (typeof body.message === 'string') message = body.message;
  } catch {
    // Not JSON: the text itself (a proxy's HTML page, say), cut short below.
  }
  if (message === '') return 'empty body';
  return message.length > 300 ? `${message.slice(0, 300)}…` : message;
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: unknown }).cause;
  const code = cause && typeof cause === 'object' && 'code' in cause ? String((cause as { code: unknown }).code) : '';
  return code ? `${err.message} (${code})` : err.message;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Reads a JSON body; a body that is not JSON is a malformed reply. */
export async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new MalformedReplyError(
      `the reply body is not JSON (${text.length} characters starting ${JSON.stringify(text.slice(0, 40))})`,
    );
  }
}
