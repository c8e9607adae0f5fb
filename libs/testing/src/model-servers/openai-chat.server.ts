/**
 * OpenAI Chat Completions, locally: `POST /v1/chat/completions` (adapter base URL `${origin}/v1`), or Azure OpenAI's
 * `POST /openai/deployments/<deployment>/chat/completions?api-version=…` with an `api-key` header when constructed
 * with `azure`. Validates what the API checks before generating (auth, model, message order around tool calls,
 * function names, `stream_options`), answers `chat.completion` JSON or `chat.completion.chunk` SSE ending in
 * `[DONE]`, errors as `{"error":{"message","type","param","code"}}`, and `x-ratelimit-*` headers.
 */
import type { ServerResponse } from 'node:http';
import {
  ApiRejection,
  argumentText,
  bearer,
  FUNCTION_NAME,
  maskedKey,
  ModelServer,
  pieces,
  type ModelServerStep,
  type ReceivedRequest,
} from './model-server.js';

export interface AzureDeployment {
  readonly deployment: string;
  readonly apiVersion: string;
}

type Message = { role?: unknown; content?: unknown; tool_calls?: { id?: unknown }[]; tool_call_id?: unknown };

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

export class OpenAiChatServer extends ModelServer {
  constructor(
    apiKey: string,
    private readonly azure?: AzureDeployment,
  ) {
    super(apiKey);
  }

  /** The base URL the adapter is configured with. */
  get baseUrl(): string {
    return this.azure ? `${this.origin}/openai/deployments/${this.azure.deployment}` : `${this.origin}/v1`;
  }

  protected errorType(status: number): string {
    if (status === 401) return 'invalid_request_error';
    if (status === 429) return 'rate_limit_exceeded';
    return status >= 500 ? 'server_error' : 'invalid_request_error';
  }

  protected errorBody(r: ApiRejection): unknown {
    return { error: { message: r.message, type: r.type, param: r.param, code: r.code } };
  }

  protected commonHeaders(): Record<string, string> {
    return {
      'x-request-id': this.id('req_'),
      'x-ratelimit-limit-requests': '10000',
      'x-ratelimit-remaining-requests': '9999',
      'x-ratelimit-reset-requests': '6ms',
      'x-ratelimit-limit-tokens': '2000000',
      'x-ratelimit-remaining-tokens': '1999000',
      'x-ratelimit-reset-tokens': '30ms',
    };
  }

  protected validate(r: ReceivedRequest): void {
    if (this.azure) {
      if (r.path !== `/openai/deployments/${this.azure.deployment}/chat/completions`) {
        throw new ApiRejection(
          404,
          'The API deployment for this resource does not exist.',
          'invalid_request_error',
          null,
          'DeploymentNotFound',
        );
      }
      if (r.query['api-version'] !== this.azure.apiVersion) {
        throw new ApiRejection(
          400,
          'Missing or unsupported api-version query parameter.',
          'invalid_request_error',
          null,
          'BadRequest',
        );
      }
      if (r.headers['api-key'] !== this.apiKey) {
        throw new ApiRejection(
          401,
          'Access denied due to invalid subscription key or wrong API endpoint.',
          'invalid_request_error',
          null,
          '401',
        );
      }
    } else {
      if (r.method !== 'POST' || r.path !== '/v1/chat/completions') {
        throw new ApiRejection(404, `Invalid URL (${r.method} ${r.path})`, 'invalid_request_error');
      }
      const key = bearer(r);
      if (key !== this.apiKey) {
        throw new ApiRejection(
          401,
          key === ''
            ? "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
            : `Incorrect API key provided: ${maskedKey(key)}. You can find your API key at https://platform.openai.com/account/api-keys.`,
          'invalid_request_error',
          null,
          'invalid_api_key',
        );
      }
    }
    const b = r.body as {
      model?: unknown;
      messages?: unknown;
      tools?: unknown;
      stream?: unknown;
      stream_options?: unknown;
    };
    if (typeof b !== 'object' || b === null || Array.isArray(b)) {
      throw new ApiRejection(400, 'The request body must be a JSON object.', 'invalid_request_error');
    }
    if (!this.azure && typeof b.model !== 'string') {
      throw new ApiRejection(400, 'you must provide a model parameter', 'invalid_request_error');
    }
    if (!Array.isArray(b.messages) || b.messages.length === 0) {
      throw new ApiRejection(
        400,
        "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
        'invalid_request_error',
        'messages',
        'empty_array',
      );
    }
    const messages = b.messages as Message[];
    messages.forEach((m, i) => {
      if (!ROLES.has(String(m.role))) {
        throw new ApiRejection(
          400,
          `Invalid value: '${String(m.role)}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.`,
          'invalid_request_error',
          `messages[${i}].role`,
          'invalid_value',
        );
      }
      if (m.role === 'assistant' && m.content == null && !m.tool_calls?.length) {
        throw new ApiRejection(
          400,
          `Invalid value for 'content': expected a string, got null.`,
          'invalid_request_error',
          `messages.[${i}].content`,
        );
      }
      if (m.role !== 'assistant' && typeof m.content !== 'string' && !Array.isArray(m.content)) {
        throw new ApiRejection(
          400,
          `Invalid value for 'content': expected a string, got ${m.content === null ? 'null' : typeof m.content}.`,
          'invalid_request_error',
          `messages.[${i}].content`,
        );
      }
    });
    this.checkToolOrder(messages);
    if (b.stream_options !== undefined && b.stream !== true) {
      throw new ApiRejection(
        400,
        "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
        'invalid_request_error',
        'stream_options',
      );
    }
    if (b.tools !== undefined) {
      if (!Array.isArray(b.tools))
        throw new ApiRejection(400, "Invalid type for 'tools': expected an array.", 'invalid_request_error', 'tools');
      (b.tools as { type?: unknown; function?: { name?: unknown } }[]).forEach((t, i) => {
        if (t.type !== 'function' || typeof t.function?.name !== 'string' || !FUNCTION_NAME.test(t.function.name)) {
          throw new ApiRejection(
            400,
            `Invalid 'tools[${i}].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`,
            'invalid_request_error',
            `tools[${i}].function.name`,
            'invalid_value',
          );
        }
      });
    }
  }

  /** Every tool message answers a call of the assistant message before the tool messages; every call is answered. */
  private checkToolOrder(messages: readonly Message[]): void {
    let open: { at: number; ids: Set<string> } | undefined;
    const unanswered = () => {
      if (open && open.ids.size > 0) {
        throw new ApiRejection(
          400,
          `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...open.ids].join(', ')}`,
          'invalid_request_error',
          `messages.[${open.at}].role`,
        );
      }
    };
    messages.forEach((m, i) => {
      if (m.role === 'tool') {
        if (!open || !open.ids.delete(String(m.tool_call_id))) {
          throw new ApiRejection(
            400,
            "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
            'invalid_request_error',
            `messages.[${i}].role`,
          );
        }
        return;
      }
      unanswered();
      open =
        m.role === 'assistant' && m.tool_calls?.length
          ? { at: i, ids: new Set(m.tool_calls.map((c) => String(c.id))) }
          : undefined;
    });
    unanswered();
  }

  protected reply(r: ReceivedRequest, step: Extract<ModelServerStep, { kind: 'reply' }>, res: ServerResponse): void {
    const b = r.body as { model?: string; stream?: boolean; stream_options?: { include_usage?: boolean } };
    const calls = (step.tool_calls ?? []).map((c) => ({
      id: this.id('call_'),
      name: c.name,
      arguments: argumentText(c),
    }));
    const stop = step.stop ?? (calls.length > 0 ? 'tool_use' : 'end');
    const finish = {
      end: 'stop',
      tool_use: 'tool_calls',
      length: 'length',
      content_filter: 'content_filter',
      refusal: 'stop',
    }[stop];
    const refusal = stop === 'refusal' ? (step.refusal ?? "I'm sorry, I can't help with that.") : null;
    const text = step.text ?? (refusal === null ? '' : null);
    const usage = {
      prompt_tokens: step.usage?.input ?? 10,
      completion_tokens: step.usage?.output ?? 5,
      total_tokens: (step.usage?.input ?? 10) + (step.usage?.output ?? 5),
    };
    const id = this.id('chatcmpl-');
    const model = b.model ?? this.azure?.deployment ?? 'model';
    const created = Math.floor(Date.now() / 1000);
    if (b.stream !== true) {
      return this.json(res, 200, {
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: text === '' && calls.length > 0 ? null : text,
              refusal,
              ...(calls.length > 0
                ? {
                    tool_calls: calls.map((c) => ({
                      id: c.id,
                      type: 'function',
                      function: { name: c.name, arguments: c.arguments },
                    })),
                  }
                : {}),
            },
            logprobs: null,
            finish_reason: finish,
          },
        ],
        usage,
        system_fingerprint: 'fp_local',
      });
    }
    const withUsage = b.stream_options?.include_usage === true;
    const chunk = (delta: unknown, finish_reason: string | null = null) => ({
      data: {
        id,
        object: 'chat.completion.chunk',
        created,
        model,
        system_fingerprint: 'fp_local',
        choices: [{ index: 0, delta, logprobs: null, finish_reason }],
        ...(withUsage ? { usage: null } : {}),
      },
    });
    const events: { data: unknown }[] = [chunk({ role: 'assistant', content: '', refusal: null })];
    for (const p of pieces(text ?? '')) events.push(chunk({ content: p }));
    for (const p of pieces(refusal ?? '')) events.push(chunk({ refusal: p }));
    calls.forEach((c, index) => {
      events.push(
        chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] }),
      );
      for (const p of pieces(c.arguments, 7))
        events.push(chunk({ tool_calls: [{ index, function: { arguments: p } }] }));
    });
    events.push(chunk({}, finish));
    if (withUsage) {
      events.push({
        data: {
          id,
          object: 'chat.completion.chunk',
          created,
          model,
          system_fingerprint: 'fp_local',
          choices: [],
          usage,
        },
      });
    }
    void this.sse(res, events, '[DONE]', step);
  }
}
