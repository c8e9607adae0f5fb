/**
 * OpenAI Responses (`POST {base}/responses`) as data. The conversation is sent as input items (`message`,
 * `function_call`, `function_call_output`), the standing instructions as `instructions`, with `store: false` so
 * nothing is kept at OpenAI between turns (the log is the conversation's memory). Pure.
 */
import type { ModelStopReasonV1, TokenUsageV1 } from '@ormuz/contracts';
import type { ModelReply, ModelRequest } from '../../domain/model-provider.js';
import { MalformedReplyError } from '../http/provider-http.js';
import { checkToolRequests, type RawToolRequest } from '../common/tool-requests.js';
import { transcriptTurns } from '../common/transcript.js';

export interface ResponsesBodyOptions {
  readonly model: string;
  readonly encode: boolean;
  readonly maxOutputTokens: number;
  readonly stream: boolean;
}

/** The request body for one turn. */
export function responsesRequestBody(request: ModelRequest, o: ResponsesBodyOptions): Record<string, unknown> {
  const input: Record<string, unknown>[] = [];
  for (const t of transcriptTurns(request.messages, o.encode)) {
    switch (t.kind) {
      case 'system':
      case 'user':
        input.push({ type: 'message', role: t.kind, content: t.text });
        break;
      case 'assistant':
        if (t.text !== '') input.push({ type: 'message', role: 'assistant', content: t.text });
        for (const c of t.calls) {
          input.push({ type: 'function_call', call_id: c.id, name: c.name, arguments: JSON.stringify(c.arguments) });
        }
        break;
      case 'results':
        for (const r of t.results) input.push({ type: 'function_call_output', call_id: r.id, output: r.content });
        break;
    }
  }
  const body: Record<string, unknown> = {
    model: o.model,
    instructions: request.system,
    input,
    max_output_tokens: o.maxOutputTokens,
    store: false,
  };
  if (request.tools.length > 0) {
    body.tools = request.tools.map((t) => ({
      type: 'function',
      name: t.name,
      description: t.description,
      parameters: t.parameters,
      strict: false,
    }));
    body.tool_choice = 'auto';
    body.parallel_tool_calls = true;
  }
  if (o.stream) body.stream = true;
  return body;
}

/** What a response said, before its tool requests are checked. */
export interface ResponsesOutcome {
  readonly text: string;
  readonly refusal: string;
  readonly calls: readonly RawToolRequest[];
  /** `completed` or `incomplete` (a failed response is an error). */
  readonly status: string;
  /** `incomplete_details.reason`: `max_output_tokens` or `content_filter`. */
  readonly incomplete: string | null;
  readonly usage: TokenUsageV1;
}

export function responsesReply(outcome: ResponsesOutcome, request: ModelRequest, maxPerTurn: number): ModelReply {
  const stop = stopReason(outcome);
  const tool_calls = checkToolRequests(outcome.calls, request, maxPerTurn, stop === 'length');
  const content = outcome.text === '' && outcome.refusal !== '' ? outcome.refusal : outcome.text;
  return { content, tool_calls, usage: outcome.usage, ...(stop ? { stop_reason: stop } : {}) };
}

function stopReason(o: ResponsesOutcome): ModelStopReasonV1 | undefined {
  if (o.refusal !== '') return 'refusal';
  if (o.status === 'incomplete') {
    if (o.incomplete === 'max_output_tokens') return 'length';
    if (o.incomplete === 'content_filter') return 'content_filter';
    return undefined;
  }
  return o.calls.length > 0 ? 'tool_use' : 'end_turn';
}

type Item = { type?: unknown; content?: unknown; name?: unknown; arguments?: unknown };

/** The outcome of a whole `response` object. */
export function responsesOutcome(body: unknown, items?: readonly Item[]): ResponsesOutcome {
  const b = body as {
    object?: unknown;
    status?: unknown;
    output?: unknown;
    error?: { code?: unknown; message?: unknown } | null;
    incomplete_details?: { reason?: unknown } | null;
    usage?: { input_tokens?: unknown; output_tokens?: unknown };
  } | null;
  if (!b || typeof b.status !== 'string' || !Array.isArray(b.output)) {
    throw new MalformedReplyError('the reply is not a response with an output list');
  }
  if (b.status === 'failed') {
    throw new MalformedReplyError(
      `the response failed: ${String(b.error?.code ?? '')} ${String(b.error?.message ?? '')}`.trim(),
    );
  }
  const output = items ?? (b.output as Item[]);
  const parts = output
    .filter((i) => i?.type === 'message' && Array.isArray(i.content))
    .flatMap((i) => i.content as { type?: unknown; text?: unknown; refusal?: unknown }[]);
  const n = (v: unknown) => (typeof v === 'number' && v > 0 ? Math.floor(v) : 0);
  return {
    text: parts.flatMap((p) => (p.type === 'output_text' && typeof p.text === 'string' ? [p.text] : [])).join(''),
    refusal: parts.flatMap((p) => (p.type === 'refusal' && typeof p.refusal === 'string' ? [p.refusal] : [])).join(''),
    calls: output
      .filter((i) => i?.type === 'function_call')
      .map((i) => ({
        name: typeof i.name === 'string' ? i.name : '',
        arguments: typeof i.arguments === 'string' ? i.arguments : '',
      })),
    status: b.status,
    incomplete: typeof b.incomplete_details?.reason === 'string' ? b.incomplete_details.reason : null,
    usage: { input_tokens: n(b.usage?.input_tokens), output_tokens: n(b.usage?.output_tokens) },
  };
}

/**
 * Folds streamed events: output items are assembled by `output_index` from `response.output_item.added`, argument
 * fragments (`response.function_call_arguments.delta`) and text fragments (`response.output_text.delta`); a
 * `response.output_item.done` replaces the assembled item with the final one. The closing `response.completed` or
 * `response.incomplete` carries status and usage; `response.failed` and `error` end the stream with their message.
 */
export class ResponsesStream {
  private readonly items: { type: string; name: string; arguments: string; text: string; done?: Item }[] = [];
  private final: unknown;

  add(event: unknown): string {
    const e = (event ?? {}) as {
      type?: unknown;
      output_index?: unknown;
      item?: Item;
      delta?: unknown;
      response?: unknown;
      code?: unknown;
      message?: unknown;
    };
    const at = typeof e.output_index === 'number' ? e.output_index : -1;
    switch (e.type) {
      case 'response.output_item.added':
        this.items[at] = {
          type: String(e.item?.type),
          name: typeof e.item?.name === 'string' ? e.item.name : '',
          arguments: typeof e.item?.arguments === 'string' ? e.item.arguments : '',
          text: '',
        };
        return '';
      case 'response.function_call_arguments.delta':
        if (this.items[at] && typeof e.delta === 'string') this.items[at].arguments += e.delta;
        return '';
      case 'response.output_text.delta':
        if (typeof e.delta !== 'string') return '';
        if (this.items[at]) this.items[at].text += e.delta;
        return e.delta;
      case 'response.output_item.done':
        if (this.items[at] && e.item) this.items[at].done = e.item;
        return '';
      case 'response.completed':
      case 'response.incomplete':
      case 'response.failed':
        this.final = e.response;
        return '';
      case 'error':
        throw new MalformedReplyError(
          `the stream reported ${String(e.code ?? 'an error')}: ${String(e.message ?? '')}`,
        );
      default:
        return '';
    }
  }

  get done(): boolean {
    return this.final !== undefined;
  }

  outcome(): ResponsesOutcome {
    if (this.final === undefined) throw new MalformedReplyError('the stream ended before the response finished');
    const items: Item[] = this.items
      .filter((i) => i !== undefined)
      .map(
        (i) =>
          i.done ??
          (i.type === 'message'
            ? { type: 'message', content: [{ type: 'output_text', text: i.text }] }
            : { type: i.type, name: i.name, arguments: i.arguments }),
      );
    return responsesOutcome(this.final, items);
  }
}
