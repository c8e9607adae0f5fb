/**
 * OpenAI Chat Completions (`POST {base}/chat/completions`) as data: the request body a turn becomes, and the reply a
 * response (or the chunks of a streamed one) becomes. Pure; the provider does the I/O. The same wire format is spoken
 * by OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp's server and LM Studio.
 */
import type { ModelStopReasonV1, TokenUsageV1 } from '@ormuz/contracts';
import type { ModelReply, ModelRequest } from '../../domain/model-provider.js';
import { MalformedReplyError } from '../http/provider-http.js';
import { checkToolRequests, type RawToolRequest } from '../common/tool-requests.js';
import { transcriptTurns } from '../common/transcript.js';

/** How the body names its output bound: OpenAI's current field, or the older one local servers know. */
export type MaxTokensField = 'max_completion_tokens' | 'max_tokens';

export interface ChatBodyOptions {
  /** The model name the API knows (without the `openai:` prefix). */
  readonly model: string;
  readonly encode: boolean;
  readonly maxOutputTokens: number;
  readonly maxTokensField: MaxTokensField;
  readonly stream: boolean;
}

/** The request body for one turn. */
export function chatRequestBody(request: ModelRequest, o: ChatBodyOptions): Record<string, unknown> {
  const messages: Record<string, unknown>[] = [{ role: 'system', content: request.system }];
  for (const t of transcriptTurns(request.messages, o.encode)) {
    switch (t.kind) {
      case 'system':
      case 'user':
        messages.push({ role: t.kind, content: t.text });
        break;
      case 'assistant':
        messages.push(
          t.calls.length === 0
            ? { role: 'assistant', content: t.text }
            : {
                role: 'assistant',
                content: t.text === '' ? null : t.text,
                tool_calls: t.calls.map((c) => ({
                  id: c.id,
                  type: 'function',
                  function: { name: c.name, arguments: JSON.stringify(c.arguments) },
                })),
              },
        );
        break;
      case 'results':
        for (const r of t.results) messages.push({ role: 'tool', tool_call_id: r.id, content: r.content });
        break;
    }
  }
  const body: Record<string, unknown> = { model: o.model, messages, [o.maxTokensField]: o.maxOutputTokens };
  if (request.tools.length > 0) {
    body.tools = request.tools.map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: t.parameters },
    }));
    body.tool_choice = 'auto';
    body.parallel_tool_calls = true;
  }
  if (o.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}

/** What a completion said, before the tool requests are checked: the same for a whole and a streamed reply. */
export interface ChatOutcome {
  readonly content: string;
  readonly refusal: string;
  readonly calls: readonly RawToolRequest[];
  readonly finishReason: string | null;
  readonly usage: TokenUsageV1;
}

/** The reply a completion's outcome becomes for the turn it answers. */
export function chatReply(outcome: ChatOutcome, request: ModelRequest, maxPerTurn: number): ModelReply {
  const stop = stopReason(outcome);
  const tool_calls = checkToolRequests(outcome.calls, request, maxPerTurn, stop === 'length');
  const content = outcome.refusal !== '' && outcome.content === '' ? outcome.refusal : outcome.content;
  return { content, tool_calls, usage: outcome.usage, ...(stop ? { stop_reason: stop } : {}) };
}

function stopReason(o: ChatOutcome): ModelStopReasonV1 | undefined {
  if (o.refusal !== '') return 'refusal';
  switch (o.finishReason) {
    case 'stop':
      return 'end_turn';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'length':
      return 'length';
    case 'content_filter':
      return 'content_filter';
    default:
      return undefined;
  }
}

/** The outcome of a whole (non-streamed) `chat.completion` body. */
export function chatOutcome(body: unknown): ChatOutcome {
  const b = body as {
    choices?: { message?: { content?: unknown; refusal?: unknown; tool_calls?: unknown }; finish_reason?: unknown }[];
    usage?: unknown;
  } | null;
  const choice = Array.isArray(b?.choices) ? b.choices[0] : undefined;
  if (!choice || typeof choice.message !== 'object' || choice.message === null) {
    throw new MalformedReplyError('the completion has no choices[0].message');
  }
  const m = choice.message;
  const calls = Array.isArray(m.tool_calls)
    ? (m.tool_calls as { function?: { name?: unknown; arguments?: unknown } }[])
    : [];
  return {
    content: typeof m.content === 'string' ? m.content : '',
    refusal: typeof m.refusal === 'string' ? m.refusal : '',
    calls: calls.map((c) => ({
      name: typeof c.function?.name === 'string' ? c.function.name : '',
      arguments: typeof c.function?.arguments === 'string' ? c.function.arguments : (c.function?.arguments ?? ''),
    })),
    finishReason: typeof choice.finish_reason === 'string' ? choice.finish_reason : null,
    usage: usageOf(b?.usage),
  };
}

/** Tokens as the API counts them (`prompt_tokens`, `completion_tokens`); zero when it reports none. */
export function usageOf(usage: unknown): TokenUsageV1 {
  const u = usage as { prompt_tokens?: unknown; completion_tokens?: unknown } | null | undefined;
  return { input_tokens: count(u?.prompt_tokens), output_tokens: count(u?.completion_tokens) };
}

function count(n: unknown): number {
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
}

/**
 * Folds `chat.completion.chunk`s into the outcome: text and refusal deltas are concatenated, each tool call is
 * assembled by its `index` (the id and name arrive once, the argument text in fragments), and the usage comes from
 * the last chunk (`stream_options.include_usage`, whose `choices` is empty).
 */
export class ChatStream {
  private content = '';
  private refusal = '';
  private readonly calls: { name: string; arguments: string }[] = [];
  private finishReason: string | null = null;
  private usage: TokenUsageV1 = { input_tokens: 0, output_tokens: 0 };

  /** Applies one chunk; returns the text it added (for `onText`). */
  add(chunk: unknown): string {
    const c = chunk as {
      choices?: {
        delta?: { content?: unknown; refusal?: unknown; tool_calls?: unknown };
        finish_reason?: unknown;
      }[];
      usage?: unknown;
      error?: { message?: unknown };
    };
    if (c?.error)
      throw new MalformedReplyError(`the stream reported an error: ${String(c.error.message ?? 'unknown')}`);
    if (c?.usage) this.usage = usageOf(c.usage);
    const choice = Array.isArray(c?.choices) ? c.choices[0] : undefined;
    if (!choice) return '';
    if (typeof choice.finish_reason === 'string') this.finishReason = choice.finish_reason;
    const d = choice.delta ?? {};
    if (typeof d.refusal === 'string') this.refusal += d.refusal;
    if (Array.isArray(d.tool_calls)) {
      for (const f of d.tool_calls as { index?: unknown; function?: { name?: unknown; arguments?: unknown } }[]) {
        const at = typeof f.index === 'number' ? f.index : this.calls.length;
        const call = (this.calls[at] ??= { name: '', arguments: '' });
        if (typeof f.function?.name === 'string') call.name += f.function.name;
        if (typeof f.function?.arguments === 'string') call.arguments += f.function.arguments;
      }
    }
    if (typeof d.content === 'string') {
      this.content += d.content;
      return d.content;
    }
    return '';
  }

  /** The outcome once the stream ended; a stream that never said why it stopped was cut off. */
  outcome(): ChatOutcome {
    if (this.finishReason === null) throw new MalformedReplyError('the stream ended before the completion finished');
    return {
      content: this.content,
      refusal: this.refusal,
      calls: this.calls.filter((c) => c !== undefined),
      finishReason: this.finishReason,
      usage: this.usage,
    };
  }
}
