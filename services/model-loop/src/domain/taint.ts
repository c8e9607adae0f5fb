/**
 * What policy is told about a conversation with each tool request (docs/decisions/0023): the untrusted content the
 * model had read when it asked (tool results whose data came from outside the platform, since the user's last
 * message), and the requests the owner denied earlier. Pure: read from the transcript, so a re-submit after a
 * restart tells policy the same thing.
 */
import {
  MAX_OWNER_DENIALS,
  MAX_TAINT_SOURCES,
  MAX_TAINT_STRING_CHARS,
  MAX_TAINT_STRINGS,
  type ConversationMessageV1,
  type ConversationTaintV1,
  type OwnerDenialV1,
  type UntrustedSourceV1,
} from '@ormuz/contracts';
import { readToolResult } from '@ormuz/tool-call';
import { CoreTool } from './core-tools.js';

/** Platform tools whose results relay an executor's data (the rest of a result, a call's outcome). */
const RELAYS: ReadonlySet<string> = new Set([CoreTool.ReadMore, CoreTool.CheckCallStatus]);

/** The transcript the model had read when it wrote the reply of `turn` (everything before that reply). */
export function contextOfTurn(messages: readonly ConversationMessageV1[], turn: number): ConversationMessageV1[] {
  let replies = 0;
  const at = messages.findIndex((m) => m.role === 'assistant' && replies++ === turn);
  return at < 0 ? [...messages] : messages.slice(0, at);
}

/**
 * The untrusted sources read since the last user message of `context`, the most recent {@link MAX_TAINT_SOURCES},
 * oldest first; `undefined` when there are none. A result is untrusted when an executor outside the platform produced
 * it (`device:<id>`), or a platform tool relayed such data; only results that carry fenced data count.
 */
export function conversationTaint(context: readonly ConversationMessageV1[]): ConversationTaintV1 | undefined {
  const since = context.findLastIndex((m) => m.role === 'user') + 1;
  const sources: UntrustedSourceV1[] = [];
  for (const m of context.slice(since)) {
    const p = m.provenance;
    if (m.role !== 'tool' || !p || (p.source === 'ormuz' && !RELAYS.has(p.tool))) continue;
    const { data } = readToolResult(m.content, p.call_id);
    if (data === undefined) continue;
    const parsed = parseData(data);
    sources.push({
      call_id: p.call_id,
      tool: p.tool,
      description: describe(p.tool, p.source, parsed),
      strings: stringsOf(parsed ?? data),
    });
  }
  return sources.length === 0 ? undefined : { sources: sources.slice(-MAX_TAINT_SOURCES) };
}

/**
 * The requests the owner denied in `context`, as the model asked for them, with the owner's reason (the most recent
 * {@link MAX_OWNER_DENIALS}).
 */
export function ownerDenials(context: readonly ConversationMessageV1[]): OwnerDenialV1[] {
  const requested = new Map(context.flatMap((m) => m.tool_calls ?? []).map((c) => [c.call_id, c]));
  const out: OwnerDenialV1[] = [];
  for (const m of context) {
    const p = m.provenance;
    if (m.role !== 'tool' || p?.status !== 'denied') continue;
    const call = requested.get(p.call_id);
    if (!call) continue;
    const reason = readToolResult(m.content, p.call_id).head?.owner_reason;
    out.push({
      call_id: call.call_id,
      tool: call.name,
      arguments: call.arguments,
      reason: typeof reason === 'string' ? reason.slice(0, 1000) : null,
    });
  }
  return out.slice(-MAX_OWNER_DENIALS);
}

function parseData(data: string): unknown {
  try {
    return JSON.parse(data) as unknown;
  } catch {
    return undefined; // a cut result: matched as the text it is
  }
}

/** Every string value of the data (not its keys), in order, bounded. */
function stringsOf(value: unknown): string[] {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (out.length >= MAX_TAINT_STRINGS) return;
    if (typeof v === 'string') {
      if (v.trim() !== '') out.push(v.slice(0, MAX_TAINT_STRING_CHARS));
    } else if (Array.isArray(v)) v.forEach(walk);
    else if (v !== null && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(value);
  return out;
}

/** How the owner is told of a source: what was read, and from where. */
function describe(tool: string, source: string, data: unknown): string {
  const where = source.startsWith('device:') ? ` of ${source.slice('device:'.length)}` : '';
  const d = (data ?? {}) as { foreground_package?: unknown; screen?: unknown };
  const text = (() => {
    if (tool === 'device.screen_observe' && typeof d.foreground_package === 'string') {
      return `the screen ${d.foreground_package}${typeof d.screen === 'string' ? ` (${d.screen})` : ''}${where}`;
    }
    if (tool === 'device.list_contacts') return `the contacts${where}`;
    if (RELAYS.has(tool)) return `data relayed by ${tool}`;
    return `the result of ${tool}${where}`;
  })();
  return text.slice(0, 300);
}
