/**
 * OpenAI Responses, locally: `POST /v1/responses` (adapter base URL `${origin}/v1`). Validates auth, `model`, the
 * input items (a `function_call_output` must answer a `function_call` earlier in the input) and function names;
 * answers a `response` object or its semantic SSE events (`response.created` … `response.completed` or
 * `response.incomplete`, each with `event:` line and `sequence_number`), errors in OpenAI's shape, `x-ratelimit-*`.
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

type Item = { type?: unknown; role?: unknown; call_id?: unknown };

export class OpenAiResponsesServer extends ModelServer {
  get baseUrl(): string {
    return `${this.origin}/v1`;
  }

  protected errorType(status: number): string {
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
    if (r.method !== 'POST' || r.path !== '/v1/responses') {
      throw new ApiRejection(404, `Invalid URL (${r.method} ${r.path})`, 'invalid_request_error');
    }
    const key = bearer(r);
    if (key !== this.apiKey) {
      throw new ApiRejection(
        401,
        `Incorrect API key provided: ${maskedKey(key)}. You can find your API key at https://platform.openai.com/account/api-keys.`,
        'invalid_request_error',
        null,
        'invalid_api_key',
      );
    }
    const b = r.body as { model?: unknown; input?: unknown; tools?: unknown };
    if (typeof b !== 'object' || b === null)
      throw new ApiRejection(400, 'The request body must be a JSON object.', 'invalid_request_error');
    if (typeof b.model !== 'string')
      throw new ApiRejection(
        400,
        "Missing required parameter: 'model'.",
        'invalid_request_error',
        'model',
        'missing_required_parameter',
      );
    if (typeof b.input !== 'string' && !Array.isArray(b.input)) {
      throw new ApiRejection(
        400,
        "Invalid type for 'input': expected a string or an array of input items.",
        'invalid_request_error',
        'input',
        'invalid_type',
      );
    }
    const seen = new Set<string>();
    (Array.isArray(b.input) ? (b.input as Item[]) : []).forEach((item, i) => {
      const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
      if (type === 'function_call') seen.add(String(item.call_id));
      else if (type === 'function_call_output') {
        if (!seen.has(String(item.call_id))) {
          throw new ApiRejection(
            400,
            `No tool call found for function call output with call_id ${String(item.call_id)}.`,
            'invalid_request_error',
            'input',
          );
        }
      } else if (type === 'message') {
        if (!['user', 'assistant', 'system', 'developer'].includes(String(item.role))) {
          throw new ApiRejection(
            400,
            `Invalid value: '${String(item.role)}'. Supported values are: 'assistant', 'system', 'developer', and 'user'.`,
            'invalid_request_error',
            `input[${i}].role`,
            'invalid_value',
          );
        }
      } else {
        throw new ApiRejection(
          400,
          `Invalid value: '${String(item.type)}'.`,
          'invalid_request_error',
          `input[${i}].type`,
          'invalid_value',
        );
      }
    });
    if (b.tools !== undefined) {
      (b.tools as { type?: unknown; name?: unknown }[]).forEach((t, i) => {
        if (t.type === 'function' && (typeof t.name !== 'string' || !FUNCTION_NAME.test(t.name))) {
          throw new ApiRejection(
            400,
            `Invalid 'tools[${i}].name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`,
            'invalid_request_error',
            `tools[${i}].name`,
            'invalid_value',
          );
        }
      });
    }
  }

  protected reply(r: ReceivedRequest, step: Extract<ModelServerStep, { kind: 'reply' }>, res: ServerResponse): void {
    const b = r.body as { model: string; stream?: boolean };
    const stop = step.stop ?? 'end';
    const text = step.text ?? '';
    const content =
      stop === 'refusal'
        ? [{ type: 'refusal', refusal: step.refusal ?? "I'm sorry, I can't help with that." }]
        : text !== ''
          ? [{ type: 'output_text', text, annotations: [] }]
          : [];
    const output: Record<string, unknown>[] = [];
    if (content.length > 0) {
      output.push({ type: 'message', id: this.id('msg_'), status: 'completed', role: 'assistant', content });
    }
    for (const c of step.tool_calls ?? []) {
      output.push({
        type: 'function_call',
        id: this.id('fc_'),
        call_id: this.id('call_'),
        name: c.name,
        arguments: argumentText(c),
        status: 'completed',
      });
    }
    const incomplete = stop === 'length' ? 'max_output_tokens' : stop === 'content_filter' ? 'content_filter' : null;
    const input = step.usage?.input ?? 10;
    const out = step.usage?.output ?? 5;
    const response = (status: string, items: unknown[]) => ({
      id: 'resp_local',
      object: 'response',
      created_at: Math.floor(Date.now() / 1000),
      status,
      error: null,
      incomplete_details: status === 'incomplete' ? { reason: incomplete } : null,
      instructions: null,
      model: b.model,
      output: items,
      parallel_tool_calls: true,
      store: false,
      usage:
        status === 'in_progress'
          ? null
          : {
              input_tokens: input,
              input_tokens_details: { cached_tokens: 0 },
              output_tokens: out,
              output_tokens_details: { reasoning_tokens: 0 },
              total_tokens: input + out,
            },
    });
    const final = incomplete ? 'incomplete' : 'completed';
    if (b.stream !== true) return this.json(res, 200, response(final, output));
    const events: { event: string; data: unknown }[] = [];
    const add = (event: string, data: Record<string, unknown>) =>
      events.push({ event, data: { type: event, sequence_number: events.length, ...data } });
    add('response.created', { response: response('in_progress', []) });
    add('response.in_progress', { response: response('in_progress', []) });
    output.forEach((item, output_index) => {
      const item_id = item.id;
      if (item.type === 'message') {
        add('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
        (item.content as Record<string, unknown>[]).forEach((part, content_index) => {
          add('response.content_part.added', {
            item_id,
            output_index,
            content_index,
            part: { ...part, ...(part.type === 'output_text' ? { text: '' } : { refusal: '' }) },
          });
          if (part.type === 'output_text') {
            for (const p of pieces(String(part.text)))
              add('response.output_text.delta', { item_id, output_index, content_index, delta: p, logprobs: [] });
            add('response.output_text.done', { item_id, output_index, content_index, text: part.text, logprobs: [] });
          } else {
            for (const p of pieces(String(part.refusal)))
              add('response.refusal.delta', { item_id, output_index, content_index, delta: p });
            add('response.refusal.done', { item_id, output_index, content_index, refusal: part.refusal });
          }
          add('response.content_part.done', { item_id, output_index, content_index, part });
        });
      } else {
        add('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', arguments: '' } });
        for (const p of pieces(String(item.arguments), 7))
          add('response.function_call_arguments.delta', { item_id, output_index, delta: p });
        add('response.function_call_arguments.done', { item_id, output_index, arguments: item.arguments });
      }
      add('response.output_item.done', { output_index, item });
    });
    add(`response.${final}`, { response: response(final, output) });
    void this.sse(res, events, undefined, step);
  }
}
