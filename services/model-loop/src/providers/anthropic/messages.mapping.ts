/**
 * Anthropic Messages (`POST {base}/messages`) as data: the body a turn becomes and the reply a message (or its
 * stream of events) becomes. Pure. The API takes the system prompt apart from the messages, wants each assistant
 * `tool_use` answered by a `tool_result` block first in the next user message, and merges consecutive turns of one
 * role; this renderer merges them itself so the body is exactly what the API keeps.
 */
import type { ModelStopReasonV1, TokenUsageV1 } from '@ormuz/contracts';
import type { ModelReply, ModelRequest } from '../../domain/model-provider.js';
import { MalformedReplyError } from '../http/provider-http.js';
import { checkToolRequests, type RawToolRequest } from '../common/tool-requests.js';
import { transcriptTurns } from '../common/transcript.js';

/** The version header every request carries. */
export const ANTHROPIC_VERSION = '2023-06-01';

type Block = Record<string, unknown> & { type: string };

export interface MessagesBodyOptions {
  readonly model: string;
  readonly encode: boolean;
  readonly maxOutputTokens: number;
  readonly stream: boolean;
}

/** The request body for one turn. */
export function messagesRequestBody(request: ModelRequest, o: MessagesBodyOptions): Record<string, unknown> {
  const system: string[] = [request.system];
  const messages: { role: 'user' | 'assistant'; content: Block[] }[] = [];
  const push = (role: 'user' | 'assistant', blocks: Block[]) => {
    const last = messages.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  };
  for (const t of transcriptTurns(request.messages, o.encode)) {
    switch (t.kind) {
      case 'system':
        system.push(t.text);
        break;
      case 'user':
        push('user', [{ type: 'text', text: t.text }]);
        break;
      case 'assistant':
        push('assistant', [
          ...(t.text.trim() === '' ? [] : [{ type: 'text', text: t.text }]),
          ...t.calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.arguments })),
        ]);
        break;
      case 'results':
        push(
          'user',
          t.results.map((r) => ({
            type: 'tool_result',
            tool_use_id: r.id,
            content: r.content,
            ...(r.error ? { is_error: true } : {}),
          })),
        );
        break;
    }
  }
  // Tool results must open the user message that follows the tool uses; text merged in goes after them.
  for (const m of messages) {
    if (m.role === 'user') m.content.sort((a, b) => rank(a) - rank(b));
  }
  const body: Record<string, unknown> = {
    model: o.model,
    max_tokens: o.maxOutputTokens,
    system: system.join('\n\n'),
    messages,
  };
  if (request.tools.length > 0) {
    body.tools = request.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters }));
  }
  if (o.stream) body.stream = true;
  return body;
}

function rank(b: Block): number {
  return b.type === 'tool_result' ? 0 : 1;
}

/** What a message said, before its tool requests are checked. */
export interface MessagesOutcome {
  readonly text: string;
  readonly calls: readonly RawToolRequest[];
  readonly stopReason: string | null;
  readonly usage: TokenUsageV1;
}

/** The reply for the turn. */
export function messagesReply(outcome: MessagesOutcome, request: ModelRequest, maxPerTurn: number): ModelReply {
  const stop = stopReason(outcome.stopReason);
  const tool_calls = checkToolRequests(outcome.calls, request, maxPerTurn, stop === 'length');
  return { content: outcome.text, tool_calls, usage: outcome.usage, ...(stop ? { stop_reason: stop } : {}) };
}

function stopReason(reason: string | null): ModelStopReasonV1 | undefined {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
    case 'pause_turn':
      return 'end_turn';
    case 'tool_use':
      return 'tool_use';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'refusal':
      return 'refusal';
    default:
      return undefined;
  }
}

/** The outcome of a whole `message` body. */
export function messagesOutcome(body: unknown): MessagesOutcome {
  const b = body as { type?: unknown; content?: unknown; stop_reason?: unknown; usage?: unknown } | null;
  if (!b || b.type !== 'message' || !Array.isArray(b.content)) {
    throw new MalformedReplyError('the reply is not a message with content blocks');
  }
  const blocks = b.content as { type?: unknown; text?: unknown; name?: unknown; input?: unknown }[];
  return {
    text: blocks.flatMap((c) => (c.type === 'text' && typeof c.text === 'string' ? [c.text] : [])).join(''),
    calls: blocks.flatMap((c) =>
      c.type === 'tool_use' ? [{ name: typeof c.name === 'string' ? c.name : '', arguments: c.input }] : [],
    ),
    stopReason: typeof b.stop_reason === 'string' ? b.stop_reason : null,
    usage: usageOf(b.usage),
  };
}

/** Input tokens count the cached ones too (written and read), since the conversation's budget is on all of them. */
export function usageOf(usage: unknown, base: TokenUsageV1 = { input_tokens: 0, output_tokens: 0 }): TokenUsageV1 {
  const u = (usage ?? {}) as Record<string, unknown>;
  const n = (k: string) => (typeof u[k] === 'number' && (u[k] as number) > 0 ? Math.floor(u[k] as number) : 0);
  const input = n('input_tokens') + n('cache_creation_input_tokens') + n('cache_read_input_tokens');
  return {
    input_tokens: input > 0 ? input : base.input_tokens,
    output_tokens: 'output_tokens' in u ? n('output_tokens') : base.output_tokens,
  };
}

/**
 * Folds the events of a streamed message: `message_start` (usage so far), `content_block_start` (a text or tool_use
 * block at its index), `content_block_delta` (`text_delta`, `input_json_delta` fragments of the tool input),
 * `message_delta` (stop reason and final output tokens), `message_stop`; `error` ends the stream with its message.
 */
export class MessagesStream {
  private readonly blocks: { type: string; text: string; name: string; json: string; input: unknown }[] = [];
  private stopReason: string | null = null;
  private usage: TokenUsageV1 = { input_tokens: 0, output_tokens: 0 };
  private stopped = false;

  /** Applies one event's data; returns the text it added. */
  add(event: unknown): string {
    const e = (event ?? {}) as {
      type?: unknown;
      index?: unknown;
      message?: { usage?: unknown };
      content_block?: { type?: unknown; name?: unknown; input?: unknown; text?: unknown };
      delta?: { type?: unknown; text?: unknown; partial_json?: unknown; stop_reason?: unknown };
      usage?: unknown;
      error?: { type?: unknown; message?: unknown };
    };
    const at = typeof e.index === 'number' ? e.index : -1;
    switch (e.type) {
      case 'message_start':
        this.usage = usageOf(e.message?.usage);
        return '';
      case 'content_block_start': {
        const b = e.content_block ?? {};
        this.blocks[at] = {
          type: String(b.type),
          text: typeof b.text === 'string' ? b.text : '',
          name: typeof b.name === 'string' ? b.name : '',
          json: '',
          input: b.input,
        };
        return typeof b.text === 'string' ? b.text : '';
      }
      case 'content_block_delta': {
        const block = this.blocks[at];
        if (!block) throw new MalformedReplyError(`a delta for content block ${at}, which never started`);
        if (e.delta?.type === 'text_delta' && typeof e.delta.text === 'string') {
          block.text += e.delta.text;
          return e.delta.text;
        }
        if (e.delta?.type === 'input_json_delta' && typeof e.delta.partial_json === 'string') {
          block.json += e.delta.partial_json;
        }
        return '';
      }
      case 'message_delta':
        if (typeof e.delta?.stop_reason === 'string') this.stopReason = e.delta.stop_reason;
        this.usage = usageOf(e.usage, this.usage);
        return '';
      case 'message_stop':
        this.stopped = true;
        return '';
      case 'error':
        throw new MalformedReplyError(
          `the stream reported ${String(e.error?.type ?? 'an error')}: ${String(e.error?.message ?? '')}`,
        );
      default:
        return '';
    }
  }

  get done(): boolean {
    return this.stopped;
  }

  outcome(): MessagesOutcome {
    if (!this.stopped && this.stopReason === null) {
      throw new MalformedReplyError('the stream ended before the message stopped');
    }
    const blocks = this.blocks.filter((b) => b !== undefined);
    return {
      text: blocks.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join(''),
      // The input arrives as JSON text in fragments; a tool with no arguments sends none and keeps its start input.
      calls: blocks.flatMap((b) =>
        b.type === 'tool_use' ? [{ name: b.name, arguments: b.json === '' ? b.input : b.json }] : [],
      ),
      stopReason: this.stopReason,
      usage: this.usage,
    };
  }
}
