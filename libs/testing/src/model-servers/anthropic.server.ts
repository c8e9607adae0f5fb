/**
 * Anthropic Messages, locally: `POST /v1/messages` (adapter base URL `${origin}/v1`). Validates what the API checks
 * (`x-api-key`, `anthropic-version`, `model`, `max_tokens`, roles, each `tool_use` answered by a `tool_result` first
 * in the next user message and no result without its use, tool names), answers a `message` or its SSE events
 * (`message_start` … `message_stop`, with `event:` lines and a `ping`), errors as
 * `{"type":"error","error":{"type","message"},"request_id"}`, and `anthropic-ratelimit-*` headers.
 */
import type { ServerResponse } from 'node:http';
import {
  ApiRejection,
  argumentText,
  ModelServer,
  pieces,
  type ModelServerStep,
  type ReceivedRequest,
} from './model-server.js';

type Block = { type?: unknown; id?: unknown; tool_use_id?: unknown; name?: unknown };
type Message = { role?: unknown; content?: unknown };

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

export class AnthropicServer extends ModelServer {
  /** The base URL the adapter is configured with. */
  get baseUrl(): string {
    return `${this.origin}/v1`;
  }

  protected errorType(status: number): string {
    switch (status) {
      case 400:
        return 'invalid_request_error';
      case 401:
        return 'authentication_error';
      case 403:
        return 'permission_error';
      case 404:
        return 'not_found_error';
      case 413:
        return 'request_too_large';
      case 429:
        return 'rate_limit_error';
      case 529:
        return 'overloaded_error';
      default:
        return 'api_error';
    }
  }

  protected errorBody(r: ApiRejection): unknown {
    return { type: 'error', error: { type: r.type, message: r.message }, request_id: this.id('req_') };
  }

  protected commonHeaders(): Record<string, string> {
    const reset = new Date(Date.now() + 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    return {
      'request-id': this.id('req_'),
      'anthropic-ratelimit-requests-limit': '4000',
      'anthropic-ratelimit-requests-remaining': '3999',
      'anthropic-ratelimit-requests-reset': reset,
      'anthropic-ratelimit-tokens-limit': '400000',
      'anthropic-ratelimit-tokens-remaining': '399000',
      'anthropic-ratelimit-tokens-reset': reset,
    };
  }

  protected validate(r: ReceivedRequest): void {
    if (r.method !== 'POST' || r.path !== '/v1/messages') {
      throw new ApiRejection(404, `${r.method} ${r.path}: not found`, 'not_found_error');
    }
    if (r.headers['x-api-key'] !== this.apiKey) {
      throw new ApiRejection(401, 'invalid x-api-key', 'authentication_error');
    }
    if (!r.headers['anthropic-version']) {
      throw new ApiRejection(400, 'anthropic-version: header is required', 'invalid_request_error');
    }
    const b = r.body as {
      model?: unknown;
      max_tokens?: unknown;
      messages?: unknown;
      system?: unknown;
      tools?: unknown;
    };
    if (typeof b !== 'object' || b === null)
      throw new ApiRejection(400, 'body: Input should be an object', 'invalid_request_error');
    if (typeof b.model !== 'string') throw new ApiRejection(400, 'model: Field required', 'invalid_request_error');
    if (typeof b.max_tokens !== 'number')
      throw new ApiRejection(400, 'max_tokens: Field required', 'invalid_request_error');
    if (b.system !== undefined && typeof b.system !== 'string' && !Array.isArray(b.system)) {
      throw new ApiRejection(400, 'system: Input should be a valid string', 'invalid_request_error');
    }
    if (!Array.isArray(b.messages) || b.messages.length === 0) {
      throw new ApiRejection(400, 'messages: at least one message is required', 'invalid_request_error');
    }
    const messages = b.messages as Message[];
    messages.forEach((m, i) => {
      if (m.role !== 'user' && m.role !== 'assistant') {
        throw new ApiRejection(
          400,
          `messages.${i}.role: Input should be 'user' or 'assistant'`,
          'invalid_request_error',
        );
      }
      if (typeof m.content !== 'string' && (!Array.isArray(m.content) || m.content.length === 0)) {
        throw new ApiRejection(
          400,
          `messages.${i}: all messages must have non-empty content except for the optional final assistant message`,
          'invalid_request_error',
        );
      }
    });
    const blocks = (m: Message): Block[] => (Array.isArray(m.content) ? (m.content as Block[]) : []);
    messages.forEach((m, i) => {
      const uses = blocks(m)
        .filter((c) => c.type === 'tool_use')
        .map((c) => String(c.id));
      const next = messages[i + 1];
      const results = next
        ? blocks(next)
            .filter((c) => c.type === 'tool_result')
            .map((c) => String(c.tool_use_id))
        : [];
      if (m.role === 'assistant' && uses.some((id) => !results.includes(id))) {
        throw new ApiRejection(
          400,
          `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${uses.filter((id) => !results.includes(id)).join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
          'invalid_request_error',
        );
      }
      if (m.role === 'user') {
        const previous =
          i > 0
            ? blocks(messages[i - 1]!)
                .filter((c) => c.type === 'tool_use')
                .map((c) => String(c.id))
            : [];
        blocks(m).forEach((c, j) => {
          if (c.type !== 'tool_result') return;
          if (!previous.includes(String(c.tool_use_id))) {
            throw new ApiRejection(
              400,
              `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(c.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
              'invalid_request_error',
            );
          }
          if (
            blocks(m)
              .slice(0, j)
              .some((o) => o.type !== 'tool_result')
          ) {
            throw new ApiRejection(
              400,
              `messages.${i}.content.${j}: tool_result blocks must come first in the content of a user message, before any other block.`,
              'invalid_request_error',
            );
          }
        });
      }
    });
    if (b.tools !== undefined) {
      (b.tools as { name?: unknown; input_schema?: unknown }[]).forEach((t, i) => {
        if (typeof t.name !== 'string' || !TOOL_NAME.test(t.name)) {
          throw new ApiRejection(
            400,
            `tools.${i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`,
            'invalid_request_error',
          );
        }
        if (typeof t.input_schema !== 'object' || t.input_schema === null) {
          throw new ApiRejection(400, `tools.${i}.custom.input_schema: Field required`, 'invalid_request_error');
        }
      });
    }
  }

  protected reply(r: ReceivedRequest, step: Extract<ModelServerStep, { kind: 'reply' }>, res: ServerResponse): void {
    const b = r.body as { model: string; stream?: boolean };
    const calls = (step.tool_calls ?? []).map((c) => ({ id: this.id('toolu_'), name: c.name, text: argumentText(c) }));
    const stop = step.stop ?? (calls.length > 0 ? 'tool_use' : 'end');
    const stopReason = {
      end: 'end_turn',
      tool_use: 'tool_use',
      length: 'max_tokens',
      content_filter: 'refusal',
      refusal: 'refusal',
    }[stop];
    const text = step.text ?? '';
    const usage = { input: step.usage?.input ?? 10, output: step.usage?.output ?? 5 };
    const id = this.id('msg_');
    if (b.stream !== true) {
      const inputOf = (t: string): unknown => {
        try {
          return JSON.parse(t) as unknown;
        } catch {
          return {};
        }
      };
      return this.json(res, 200, {
        id,
        type: 'message',
        role: 'assistant',
        model: b.model,
        content: [
          ...(text !== '' ? [{ type: 'text', text }] : []),
          ...calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: inputOf(c.text) })),
        ],
        stop_reason: stopReason,
        stop_sequence: null,
        usage: {
          input_tokens: usage.input,
          output_tokens: usage.output,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
      });
    }
    const events: { event: string; data: unknown }[] = [];
    const add = (event: string, data: Record<string, unknown>) =>
      events.push({ event, data: { type: event, ...data } });
    add('message_start', {
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model: b.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: usage.input,
          output_tokens: 1,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
      },
    });
    let index = 0;
    if (text !== '') {
      add('content_block_start', { index, content_block: { type: 'text', text: '' } });
      add('ping', {});
      for (const p of pieces(text)) add('content_block_delta', { index, delta: { type: 'text_delta', text: p } });
      add('content_block_stop', { index });
      index += 1;
    }
    for (const c of calls) {
      add('content_block_start', { index, content_block: { type: 'tool_use', id: c.id, name: c.name, input: {} } });
      for (const p of pieces(c.text, 7))
        add('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: p } });
      add('content_block_stop', { index });
      index += 1;
    }
    add('message_delta', {
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: usage.output },
    });
    add('message_stop', {});
    void this.sse(res, events, undefined, step);
  }
}
