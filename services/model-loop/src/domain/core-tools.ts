/**
 * The platform's own tools (`ormuz.*`), which model-loop runs itself once policy has authorised a call: the pure
 * half. Each function shapes one tool's result to its output contract in `@ormuz/catalog`'s core extension, or
 * says why the tool failed, in a sentence that names the next step. Reading the log and asking policy happen in
 * `commands/run-core-tool.handler.ts`.
 */
import { CORE_EXTENSION_NAME } from '@ormuz/catalog';
import type { JsonValue, OfferedToolV1, ToolSearchHitV1 } from '@ormuz/contracts';
import { continuationHandle, fenceSafeJson, type CallOutcome, type ToolCallStatus } from '@ormuz/tool-call';

/** The core tools model-loop executes. */
export const CoreTool = {
  SearchTools: `${CORE_EXTENSION_NAME}.search_tools`,
  ActivateTool: `${CORE_EXTENSION_NAME}.activate_tool`,
  ReadMore: `${CORE_EXTENSION_NAME}.read_more`,
  CheckCallStatus: `${CORE_EXTENSION_NAME}.check_call_status`,
} as const;
export type CoreTool = (typeof CoreTool)[keyof typeof CoreTool];

const CORE_TOOLS: ReadonlySet<string> = new Set(Object.values(CoreTool));

/**
 * True for the platform tools model-loop has an executor for. Which calls model-loop runs is not decided here: it
 * runs the calls policy recorded without a device target (see `run-core-tool.handler.ts`), and this says whether it
 * can.
 */
export function isCoreTool(name: string): name is CoreTool {
  return CORE_TOOLS.has(name);
}

/** Why a core tool did not produce its result: a short code and a sentence that says what to do next. */
export interface CoreToolFailure {
  readonly code: string;
  readonly message: string;
}

/** A core tool's result or failure. */
export type CoreToolOutcome =
  { readonly ok: true; readonly result: JsonValue } | { readonly ok: false; readonly error: CoreToolFailure };

const succeed = (result: JsonValue): CoreToolOutcome => ({ ok: true, result });
const fail = (code: string, message: string): CoreToolOutcome => ({ ok: false, error: { code, message } });

// ---------------------------------------------------------------------------------------------------------------
// ormuz.search_tools
// ---------------------------------------------------------------------------------------------------------------

/** One hit as policy's `policy.tools.search` answers it. */
export type SearchHit = ToolSearchHitV1;

/** Default and bound of `max_results`. */
export const SEARCH_DEFAULT_RESULTS = 5;

/** True when `query` has a letter or digit to search by. */
export function searchableQuery(query: unknown): query is string {
  return typeof query === 'string' && /[\p{L}\p{N}]/u.test(query);
}

/** The search result `{ tools: [{ name, version, summary, score }] }`, or the failure for a query without words. */
export function searchResult(query: unknown, hits: readonly SearchHit[]): CoreToolOutcome {
  if (!searchableQuery(query)) {
    return fail(
      'empty_query',
      'The query has no words to search by. Describe the action you need in a few words, e.g. "send text message".',
    );
  }
  return succeed({
    tools: hits.map((h) => ({
      name: h.name,
      version: h.version,
      summary: summary(h.description),
      score: Math.min(1, Math.max(0, h.score)),
    })),
  });
}

/** The first sentence of a description, at most 200 characters. */
function summary(description: string): string {
  const first = /^(.+?[.!?])(\s|$)/s.exec(description)?.[1] ?? description;
  return first.length > 200 ? `${first.slice(0, 199)}…` : first;
}

// ---------------------------------------------------------------------------------------------------------------
// ormuz.activate_tool
// ---------------------------------------------------------------------------------------------------------------

/**
 * The activation result `{ tool_name, version, description, parameters }` for `toolName` among the agent's offered
 * tools, or the failure when the agent is not offered it (unknown and not permitted are not told apart here: both
 * mean "search and use a name it returns"). `toolName` is canonical.
 */
export function activationResult(toolName: unknown, offered: readonly OfferedToolV1[]): CoreToolOutcome {
  const tool = typeof toolName === 'string' ? offered.find((t) => t.name === toolName) : undefined;
  if (!tool) {
    return fail(
      'tool_not_available',
      `${JSON.stringify(String(toolName)).slice(0, 80)} is not a tool you may use in this conversation. Search with ` +
        `${CoreTool.SearchTools} and activate a name exactly as it returns it.`,
    );
  }
  return succeed({
    tool_name: tool.name,
    version: tool.version,
    description: tool.description,
    parameters: tool.parameters as { [key: string]: JsonValue },
  });
}

// ---------------------------------------------------------------------------------------------------------------
// ormuz.read_more
// ---------------------------------------------------------------------------------------------------------------

/**
 * The part of `text` (the fence-safe JSON of call `callId`'s data) from `offset` on: `{ content, partial,
 * continuation? }`. The part holds at most `maxChars` characters and is cut so that the whole result, fenced as a
 * tool result, fits in `maxBytes` UTF-8 bytes; it never splits a character and always advances. `continuation`
 * is present exactly when `partial` is true.
 */
export function readMoreResult(
  text: string,
  callId: string,
  offset: number,
  maxChars: number,
  maxBytes: number,
): CoreToolOutcome {
  if (!Number.isInteger(offset) || offset < 0 || offset > text.length) {
    return fail(
      'continuation_invalid',
      `The continuation points past the end of call ${callId}'s result. Call the original tool again if you still need it.`,
    );
  }
  const start = isLowSurrogate(text, offset) ? offset - 1 : offset;
  const part = (end: number): JsonValue => {
    const partial = end < text.length;
    return {
      content: text.slice(start, end),
      partial,
      ...(partial ? { continuation: continuationHandle(callId, end) } : {}),
    };
  };
  const fits = (end: number) => Buffer.byteLength(fenceSafeJson(part(end)), 'utf8') <= maxBytes;
  // Binary search for the largest end within maxChars whose result fits; `low` and `high` stay on character boundaries.
  let low = start;
  let high = boundary(text, Math.min(text.length, start + Math.max(1, maxChars)));
  while (low < high) {
    const mid = boundary(text, low + Math.ceil((high - low) / 2));
    if (fits(mid)) low = mid;
    else high = isLowSurrogate(text, mid - 1) ? mid - 2 : mid - 1;
  }
  // Always advance, even if one character alone would not fit: a handle that never moves would loop forever.
  const end = low === start && start < text.length ? boundary(text, start + 1) : low;
  return succeed(part(end));
}

function isLowSurrogate(text: string, index: number): boolean {
  const code = text.charCodeAt(index);
  return index > 0 && code >= 0xdc00 && code <= 0xdfff;
}

/** `index`, or one past it when it would split a surrogate pair. */
function boundary(text: string, index: number): number {
  return isLowSurrogate(text, index) ? Math.min(text.length, index + 1) : index;
}

// ---------------------------------------------------------------------------------------------------------------
// ormuz.check_call_status
// ---------------------------------------------------------------------------------------------------------------

/** A call's recorded status as the model is told it. */
export type ModelCallStatus =
  | 'awaiting_decision'
  | 'pending_confirmation'
  | 'queued'
  | 'running'
  | 'succeeded'
  | 'failed'
  | 'outcome_unknown'
  | 'refused'
  | 'denied'
  | 'expired'
  | 'sealed';

const MODEL_STATUS: Readonly<Record<ToolCallStatus, ModelCallStatus | null>> = {
  absent: null,
  requested: 'awaiting_decision',
  refused: 'refused',
  staged: 'pending_confirmation',
  approved: 'queued',
  denied: 'denied',
  expired: 'expired',
  authorized: 'queued',
  dispatched: 'queued',
  started: 'running',
  succeeded: 'succeeded',
  failed: 'failed',
  sealed: 'sealed',
  outcome_unknown: 'outcome_unknown',
};

const ADVICE: Readonly<Record<ModelCallStatus, string>> = {
  awaiting_decision: 'The runtime has not decided on it yet; check again shortly and do not request it again.',
  pending_confirmation:
    "It waits for the owner's approval and has not run; do not request it again. Tell the user it is waiting.",
  queued: 'It may run but has not started; check again shortly and do not request it again.',
  running: 'It has started and not finished; check again shortly and do not request it again.',
  succeeded: 'It ran; its result is in the data below.',
  failed: 'It ran and failed; the error is in the data below. Fix the cause before asking for it again.',
  outcome_unknown:
    "Nobody knows whether it took effect. Check the action's real state (for example observe the screen) before any " +
    'retry; repeating it blindly could do it twice.',
  refused: 'The runtime refused it; it did not run.',
  denied: 'The owner denied it; it did not run. Do not request it again unless the user asks.',
  expired: 'Nobody approved it in time; it did not run. Ask the user whether to request it again.',
  sealed: 'It was cancelled before it started; it did not run.',
};

/** What the model needs from a status read: the call's status, outcome and when it last changed. */
export interface CallStatusFacts {
  readonly call_id: string;
  readonly status: ToolCallStatus;
  readonly outcome: CallOutcome | null;
  /** RFC 3339 time of the call's latest event. */
  readonly updated_at: string;
}

/** The status result `{ call_id, status, result?, error?, updated_at }`, with the status in the model's words. */
export function callStatusResult(facts: CallStatusFacts): CoreToolOutcome {
  const status = MODEL_STATUS[facts.status];
  if (!status) return callNotFound(facts.call_id);
  return succeed({
    call_id: facts.call_id,
    status,
    ...(facts.outcome?.kind === 'succeeded' ? { result: facts.outcome.result } : {}),
    ...(facts.outcome?.kind === 'failed' ? { error: { ...facts.outcome.error } } : {}),
    updated_at: facts.updated_at,
  });
}

/** The failure for a call id that names no call of this conversation. */
export function callNotFound(callId: unknown): CoreToolOutcome {
  return fail(
    'call_not_found',
    `No call ${JSON.stringify(String(callId)).slice(0, 140)} was made in this conversation. Pass a call_id exactly as ` +
      'an earlier result or pending_confirmation gave it.',
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Notes for the model
// ---------------------------------------------------------------------------------------------------------------

/**
 * The runtime's sentence for a core tool's successful result (see `ToolResultInput.note`), or `undefined`. Derived
 * from the result's own closed fields; a value outside them gets no sentence.
 */
export function coreToolNote(tool: string, result: JsonValue): string | undefined {
  const r = result !== null && typeof result === 'object' && !Array.isArray(result) ? result : {};
  switch (tool) {
    case CoreTool.SearchTools:
      return Array.isArray(r.tools) && r.tools.length > 0
        ? `Pick the tool that fits and load it with ${CoreTool.ActivateTool}, passing its name exactly.`
        : 'No tool you may use matches; try other words, or tell the user this cannot be done here.';
    case CoreTool.ActivateTool:
      return `${String(r.tool_name)} is loaded: it is offered to you in full from your next step on.`;
    case CoreTool.ReadMore:
      return r.partial === true
        ? `More remains: call ${CoreTool.ReadMore} again with the new continuation if you need it.`
        : 'This is the end of the result.';
    case CoreTool.CheckCallStatus: {
      const status = typeof r.status === 'string' && Object.hasOwn(ADVICE, r.status) ? r.status : undefined;
      return status ? `Call ${String(r.call_id)} is ${status}: ${ADVICE[status as ModelCallStatus]}` : undefined;
    }
    default:
      return undefined;
  }
}
