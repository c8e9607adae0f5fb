/**
 * The conversation as the chat APIs all need it, before each adapter writes it in its own wire shape. Every API asks
 * that an assistant message with tool calls be followed by exactly one result per call, and refuses a result that
 * answers no call just before it. The transcript holds both kinds of tool message that break this: the final outcome
 * of a call that was pending confirmation (its first, interim result already answered it), and, in principle, a call
 * without a result. The first becomes user text naming the call; the second gets a placeholder result.
 */
import { canonicalFromProviderName, providerFunctionName } from '@ormuz/catalog';
import type { ConversationMessageV1, JsonValue } from '@ormuz/contracts';

/** One call of an assistant turn, its name as the model was shown it. */
export interface RenderedCall {
  readonly id: string;
  readonly name: string;
  readonly arguments: { readonly [key: string]: JsonValue };
}

/** One result answering a call of the assistant turn just before. */
export interface RenderedResult {
  readonly id: string;
  readonly content: string;
  /** True when the result reports that the call did not happen as asked (refused, rejected, failed, …). */
  readonly error: boolean;
}

export type Turn =
  | { readonly kind: 'system'; readonly text: string }
  | { readonly kind: 'user'; readonly text: string }
  | { readonly kind: 'assistant'; readonly text: string; readonly calls: readonly RenderedCall[] }
  | { readonly kind: 'results'; readonly results: readonly RenderedResult[] };

const ERRORS = new Set(['refused', 'rejected', 'failed', 'denied', 'expired', 'sealed']);

/** The transcript as turns; `encode`: show names the way a provider that forbids dots was offered them. */
export function transcriptTurns(messages: readonly ConversationMessageV1[], encode: boolean): Turn[] {
  const out: Turn[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === 'user' || m.role === 'system') {
      out.push({ kind: m.role, text: m.content });
      continue;
    }
    if (m.role === 'tool') {
      out.push({ kind: 'user', text: lateResult(m) });
      continue;
    }
    const calls = (m.tool_calls ?? []).map((c) => ({
      id: c.call_id,
      name: shownName(c.name, encode),
      arguments: c.arguments,
    }));
    out.push({ kind: 'assistant', text: m.content, calls });
    if (calls.length === 0) continue;
    const answers = new Map<string, RenderedResult>();
    const late: Turn[] = [];
    while (messages[i + 1]?.role === 'tool') {
      const t = messages[++i]!;
      const id = t.tool_call_id ?? '';
      if (calls.some((c) => c.id === id) && !answers.has(id)) {
        answers.set(id, { id, content: t.content, error: ERRORS.has(t.provenance?.status ?? '') });
      } else late.push({ kind: 'user', text: lateResult(t) });
    }
    out.push({
      kind: 'results',
      results: calls.map(
        (c) => answers.get(c.id) ?? { id: c.id, content: 'No result was recorded for this call.', error: true },
      ),
    });
    out.push(...late);
  }
  return out;
}

/** A tool message that answers a call of an earlier turn, as user text that names the call. */
function lateResult(m: ConversationMessageV1): string {
  const tool = m.provenance?.tool ?? 'a tool';
  return `A later result for your earlier call ${m.tool_call_id ?? ''} (${tool}):\n${m.content}`;
}

/** What the model was shown for a recorded (canonical) name: its encoding where needed, or a name the API accepts. */
export function shownName(name: string, encode: boolean): string {
  if (!encode) return name;
  if (canonicalFromProviderName(name) !== undefined) return name;
  try {
    return providerFunctionName(name);
  } catch {
    // A name the model made up (recorded as sent, refused at the time): kept readable within the API's rules.
    return name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64) || 'unnamed';
  }
}
