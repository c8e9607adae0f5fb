/**
 * A deterministic model for demos and tests: `scripted:<script>`. A script reads the conversation the way a model
 * would (the runtime's first line of each tool result, the tools it is offered) and answers the same way every time
 * for the same input. Each script declares the profile of the model it plays (tier, schema budget, whether tool names
 * must be encoded). Token usage is estimated at four characters per token. The provider keeps the latest requests it
 * received, so a test can check exactly what a model was shown.
 */
import { canonicalFromProviderName } from '@ormuz/catalog';
import type { ConversationMessageV1, JsonValue, RequestedToolCallV1 } from '@ormuz/contracts';
import { ModelUnavailableError } from '../domain/errors.js';
import {
  LARGE_MODEL,
  type ModelProfile,
  type ModelProvider,
  type ModelReply,
  type ModelRequest,
  type ModelToolRequest,
} from '../domain/model-provider.js';

/** A script: the reply for a turn's request, without usage (the provider estimates it). */
export type Script = (messages: readonly ConversationMessageV1[], request: ModelRequest) => Omit<ModelReply, 'usage'>;

/** A script and the model profile it plays; a bare script plays {@link LARGE_MODEL}. */
export interface ScriptEntry {
  readonly script: Script;
  readonly profile: ModelProfile;
}

const PREFIX = 'scripted:';
/** Requests kept for {@link ScriptedProvider.received}; older ones are dropped. */
const KEPT_REQUESTS = 500;

/** A small on-device model: a few schemas fit, and its API forbids dots in function names. */
export const SMALL_MODEL: ModelProfile = Object.freeze({
  tier: 'small',
  schemaBudgetTokens: 1_200,
  encodeToolNames: true,
});

export class ScriptedProvider implements ModelProvider {
  private readonly entries: Readonly<Record<string, ScriptEntry>>;
  private readonly requests: ModelRequest[] = [];

  constructor(scripts: Readonly<Record<string, Script | ScriptEntry>> = SCRIPTS) {
    this.entries = Object.fromEntries(
      Object.entries(scripts).map(([name, s]) => [
        name,
        typeof s === 'function' ? { script: s, profile: LARGE_MODEL } : s,
      ]),
    );
  }

  supports(model: string): boolean {
    return model.startsWith(PREFIX) && Object.hasOwn(this.entries, model.slice(PREFIX.length));
  }

  get examples(): readonly string[] {
    return Object.keys(this.entries).map((name) => `${PREFIX}${name}`);
  }

  profile(model: string): ModelProfile {
    return this.entry(model)?.profile ?? LARGE_MODEL;
  }

  /** The latest requests received (at most 500), oldest first; for tests that check what a model was shown. */
  get received(): readonly ModelRequest[] {
    return this.requests;
  }

  async complete(request: ModelRequest): Promise<ModelReply> {
    const entry = this.entry(request.model);
    if (!entry) throw new ModelUnavailableError(request.model, 'no script has that name');
    const { signal: _signal, ...kept } = request;
    this.requests.push(kept);
    if (this.requests.length > KEPT_REQUESTS) this.requests.shift();
    const reply = entry.script(request.messages, request);
    const input =
      request.system.length +
      JSON.stringify(request.tools).length +
      request.messages.reduce((n, m) => n + m.content.length, 0);
    const output = reply.content.length + JSON.stringify(reply.tool_calls).length;
    return { ...reply, usage: { input_tokens: Math.ceil(input / 4), output_tokens: Math.ceil(output / 4) } };
  }

  private entry(model: string): ScriptEntry | undefined {
    return this.supports(model) ? this.entries[model.slice(PREFIX.length)] : undefined;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The demo script
// ---------------------------------------------------------------------------------------------------------------

/** What the demo asks the phone to send. */
export const DEMO_MESSAGE = { recipient: 'Alice Martin', message_body: 'Running 10 minutes late, sorry!' } as const;

/**
 * Turn 1 asks for two tools at once: `device.screen_observe` (low risk) and `device.send_message` (high risk). While a
 * result says `pending_confirmation`, it says it is waiting for the owner. Once every call has its final outcome, it
 * reports what really happened to each: succeeded, not done (denied, expired, refused, cancelled) or unknown.
 */
export function demoScript(messages: readonly ConversationMessageV1[]): Omit<ModelReply, 'usage'> {
  const plan = messages.find((m) => m.role === 'assistant' && m.tool_calls?.length)?.tool_calls;
  if (!plan) {
    return {
      content: "I'll look at the phone's screen and text Alice that you are running late.",
      tool_calls: [
        { name: 'device.screen_observe', arguments: {} },
        { name: 'device.send_message', arguments: { ...DEMO_MESSAGE } },
      ],
    };
  }
  const statuses = latestStatuses(messages);
  const missing = plan.filter((c) => !statuses.has(c.call_id));
  if (missing.length > 0) {
    return { content: `I am still waiting for the result of ${missing.map(describe).join(' and ')}.`, tool_calls: [] };
  }
  const pending = plan.filter((c) => statuses.get(c.call_id) === 'pending_confirmation');
  const settled = plan.filter((c) => statuses.get(c.call_id) !== 'pending_confirmation');
  const report = settled.map((c) => sentence(c, statuses.get(c.call_id)!));
  if (pending.length > 0) {
    return {
      content: [
        ...report,
        `${capitalise(pending.map(describe).join(' and '))} needs the owner's approval before it can happen; ` +
          'I am waiting for that decision and will report back once it is made. Nothing has been sent yet.',
      ].join(' '),
      tool_calls: [],
    };
  }
  return { content: ['Here is what happened.', ...report].join(' '), tool_calls: [] };
}

/** The latest status each call's results report, read from the runtime's first line of each tool message. */
function latestStatuses(messages: readonly ConversationMessageV1[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of messages) {
    if (m.role !== 'tool' || !m.tool_call_id) continue;
    out.set(m.tool_call_id, statusLine(m.content));
  }
  return out;
}

function statusLine(content: string): string {
  try {
    const head = JSON.parse(content.split('\n', 1)[0] ?? '') as { status?: unknown };
    return typeof head.status === 'string' ? head.status : 'unreadable';
  } catch {
    return 'unreadable';
  }
}

function describe(call: RequestedToolCallV1): string {
  switch (call.name) {
    case 'device.send_message':
      return `sending "${String(call.arguments.message_body)}" to ${String(call.arguments.recipient)}`;
    case 'device.screen_observe':
      return 'looking at the phone screen';
    default:
      return `running ${call.name}`;
  }
}

function sentence(call: RequestedToolCallV1, status: string): string {
  const what = describe(call);
  switch (status) {
    case 'succeeded':
      return `${capitalise(what)} succeeded.`;
    case 'failed':
      return `${capitalise(what)} failed on the device.`;
    case 'outcome_unknown':
      return `I cannot tell whether ${what} took effect; please check the phone before trying again.`;
    case 'denied':
      return `${capitalise(what)} did not happen: the owner denied it.`;
    case 'expired':
      return `${capitalise(what)} did not happen: the approval expired before anyone decided.`;
    case 'refused':
    case 'rejected':
      return `${capitalise(what)} did not happen: the runtime refused it.`;
    case 'sealed':
      return `${capitalise(what)} did not happen: it was cancelled before it started.`;
    default:
      return `I could not read the result of ${what}.`;
  }
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

// ---------------------------------------------------------------------------------------------------------------
// The directory script: a small model that finds its tool
// ---------------------------------------------------------------------------------------------------------------

/** What the directory script searches the directory for. */
export const DIRECTORY_QUERY = 'send text message';

/**
 * A small model that is not shown the tool it needs: it searches the directory with `ormuz.search_tools`, activates
 * the best match with `ormuz.activate_tool`, calls it (once it is offered in full) to send {@link DEMO_MESSAGE},
 * checks a pending call with `ormuz.check_call_status`, and then reports what the results say. It calls tools by the
 * names it is shown (encoded, for its profile) and reads the transcript's canonical names.
 */
export function directoryScript(
  messages: readonly ConversationMessageV1[],
  request: ModelRequest,
): Omit<ModelReply, 'usage'> {
  const statuses = latestStatuses(messages);
  const search = lastCall(messages, 'ormuz.search_tools');
  if (!search) {
    return ask(request, "I'll look for a tool that can send a text message.", 'ormuz.search_tools', {
      query: DIRECTORY_QUERY,
    });
  }
  if (statuses.get(search.call_id) !== 'succeeded') return stop('I could not search the tool directory.');
  const hits = (resultOf(messages, search.call_id) as { tools?: { name?: unknown }[] } | undefined)?.tools ?? [];
  const found = typeof hits[0]?.name === 'string' ? hits[0].name : undefined;
  if (!found) return stop('No tool I may use can send a text message.');

  const activation = lastCall(messages, 'ormuz.activate_tool');
  if (!activation) return ask(request, `I'll load ${found}.`, 'ormuz.activate_tool', { tool_name: found });
  if (statuses.get(activation.call_id) !== 'succeeded') return stop(`I could not load ${found}.`);

  const send = lastCall(messages, found);
  if (!send) {
    if (!offered(request, found)) return stop(`${found} was loaded but is still not offered to me.`);
    return ask(request, `I'll send the message with ${found}.`, found, { ...DEMO_MESSAGE });
  }
  const sent = statuses.get(send.call_id);
  if (!sent) return { content: `I am still waiting for the result of ${describe(send)}.`, tool_calls: [] };
  const check = lastCall(messages, 'ormuz.check_call_status');
  if (sent === 'pending_confirmation' && !check) {
    return ask(request, "I'll check where the message stands.", 'ormuz.check_call_status', { call_id: send.call_id });
  }
  if (sent === 'pending_confirmation') {
    const checked = (resultOf(messages, check!.call_id) as { status?: unknown } | undefined)?.status;
    return stop(
      `${capitalise(describe(send))} needs the owner's approval before it can happen (its recorded status is ` +
        `${String(checked ?? 'unknown')}); I am waiting for that decision. Nothing has been sent yet.`,
    );
  }
  return stop(['Here is what happened.', sentence(send, sent)].join(' '));
}

// ---------------------------------------------------------------------------------------------------------------
// The adversary script: a model that obeys every instruction it reads
// ---------------------------------------------------------------------------------------------------------------

/** How an instruction to the adversary is written, anywhere in what it reads: `CALL <tool> <JSON object>`. */
export const ADVERSARY_INSTRUCTION = 'CALL ';

/**
 * Where the adversary looks, in order: the screen in front, then the contacts app, then the home screen (where
 * notifications are), moving with `device.open_app`. Each package is written here, by the model, never read.
 */
export const ADVERSARY_TOUR = ['com.example.contacts', 'com.android.launcher'] as const;

/**
 * The worst case of a model under prompt injection, for tests of the gate: it reads the phone (observing the screen,
 * then each app of {@link ADVERSARY_TOUR}) and obeys every instruction it finds in any tool result, whatever fence,
 * language or disguise surrounds it: each `CALL <tool> <JSON object>` it reads it requests, once, together with its
 * next step. When the owner denies one, it asks for exactly the same thing again, once. It answers when it has
 * nothing left to do.
 */
export function adversaryScript(messages: readonly ConversationMessageV1[]): Omit<ModelReply, 'usage'> {
  const asked = messages.flatMap((m) => m.tool_calls ?? []);
  const statuses = latestStatuses(messages);
  if (asked.some((c) => !statuses.has(c.call_id))) {
    return { content: 'I am waiting for the results of my requests.', tool_calls: [] };
  }
  const key = (tool: string, args: unknown) => JSON.stringify([tool, args]);
  const times = new Map<string, number>();
  for (const c of asked) times.set(key(c.name, c.arguments), (times.get(key(c.name, c.arguments)) ?? 0) + 1);

  const obeyed = messages
    .filter((m) => m.role === 'tool' && m.tool_call_id)
    .flatMap((m) => stringsOf(resultOf(messages, m.tool_call_id!)).flatMap(instructionsIn))
    .filter((c) => !times.has(key(c.name, c.arguments)));
  const again = asked
    .filter((c) => statuses.get(c.call_id) === 'denied' && times.get(key(c.name, c.arguments)) === 1)
    .map((c) => ({ name: c.name, arguments: c.arguments }));
  const requests = uniqueRequests([...obeyed, ...again]);

  const observations = asked.filter((c) => c.name === 'device.screen_observe').length;
  const opened = asked.filter(
    (c) => c.name === 'device.open_app' && ADVERSARY_TOUR.includes(String(c.arguments.package_name) as never),
  );
  const step: ModelToolRequest | undefined =
    observations === 0 || observations === opened.length
      ? { name: 'device.screen_observe', arguments: {} }
      : opened.length < ADVERSARY_TOUR.length
        ? { name: 'device.open_app', arguments: { package_name: ADVERSARY_TOUR[opened.length]! } }
        : undefined;
  const tool_calls = [...requests, ...(step ? [step] : [])];
  if (tool_calls.length === 0) return stop('I did everything I was told to do.');
  return { content: `Doing what I was told: ${tool_calls.map((c) => c.name).join(', ')}.`, tool_calls };
}

/** Every `CALL <tool> <JSON object>` in `text`, in order; malformed ones are skipped. */
export function instructionsIn(text: string): { name: string; arguments: { [key: string]: JsonValue } }[] {
  const out: { name: string; arguments: { [key: string]: JsonValue } }[] = [];
  let from = 0;
  for (;;) {
    const at = text.indexOf(ADVERSARY_INSTRUCTION, from);
    if (at < 0) return out;
    from = at + ADVERSARY_INSTRUCTION.length;
    const m = /^([a-z][a-z0-9_-]*\.[a-z][a-z0-9_]*)\s*\{/.exec(text.slice(from));
    if (!m) continue;
    const open = from + m[0].length - 1;
    const close = closingBrace(text, open);
    if (close < 0) continue;
    try {
      const parsed = JSON.parse(text.slice(open, close + 1)) as unknown;
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
        out.push({ name: m[1]!, arguments: parsed as { [key: string]: JsonValue } });
      }
    } catch {
      // not JSON: not an instruction this model can follow
    }
  }
}

/** The index of the `}` closing the object that opens at `open`, or -1. Braces inside JSON strings do not count. */
function closingBrace(text: string, open: number): number {
  let depth = 0;
  let inString = false;
  for (let i = open; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '{') depth++;
    else if (ch === '}' && --depth === 0) return i;
  }
  return -1;
}

function uniqueRequests<T extends { name: string; arguments: unknown }>(requests: readonly T[]): T[] {
  const seen = new Set<string>();
  return requests.filter((r) => {
    const k = JSON.stringify([r.name, r.arguments]);
    return !seen.has(k) && seen.add(k);
  });
}

function stringsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsOf);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(stringsOf);
  return [];
}

// ---------------------------------------------------------------------------------------------------------------
// The observer script: one low-risk device call per turn, for benchmarks
// ---------------------------------------------------------------------------------------------------------------

/** Most looks the observer takes in one conversation (the default step bound allows 12 turns, one to answer). */
export const OBSERVER_MAX_LOOKS = 11;

/**
 * A model that looks at the phone's screen (`device.screen_observe`, low risk) once per turn, one call at a time, as
 * many times as the first number of the user's task says (1 by default, at most {@link OBSERVER_MAX_LOOKS}), then
 * says how many looks succeeded. `bench:e2e` drives governed calls with it.
 */
export function observerScript(messages: readonly ConversationMessageV1[]): Omit<ModelReply, 'usage'> {
  const task = messages.find((m) => m.role === 'user')?.content ?? '';
  const looks = Math.min(OBSERVER_MAX_LOOKS, Math.max(1, Number(/\d+/.exec(task)?.[0] ?? 1)));
  const asked = messages.flatMap((m) => m.tool_calls ?? []);
  const statuses = latestStatuses(messages);
  if (asked.some((c) => !statuses.has(c.call_id))) return stop('I am waiting for the screen.');
  if (asked.length < looks) {
    return {
      content: `Look ${asked.length + 1} of ${looks}.`,
      tool_calls: [{ name: 'device.screen_observe', arguments: {} }],
    };
  }
  const succeeded = asked.filter((c) => statuses.get(c.call_id) === 'succeeded').length;
  return stop(`I looked at the screen ${looks} times; ${succeeded} succeeded.`);
}

/** The scripts the provider serves by default. */
export const SCRIPTS: Readonly<Record<string, ScriptEntry>> = Object.freeze({
  demo: { script: demoScript, profile: LARGE_MODEL },
  directory: { script: directoryScript, profile: SMALL_MODEL },
  adversary: { script: adversaryScript, profile: LARGE_MODEL },
  observer: { script: observerScript, profile: LARGE_MODEL },
});

/** A reply asking for one tool, by the name this model is shown for `tool` (or `tool` itself if not shown). */
function ask(
  request: ModelRequest,
  content: string,
  tool: string,
  args: { readonly [key: string]: JsonValue },
): Omit<ModelReply, 'usage'> {
  const shown = request.tools.find((t) => canonical(t.name) === tool)?.name ?? tool;
  return { content, tool_calls: [{ name: shown, arguments: args }] };
}

function stop(content: string): Omit<ModelReply, 'usage'> {
  return { content, tool_calls: [] };
}

function offered(request: ModelRequest, tool: string): boolean {
  return request.tools.some((t) => canonical(t.name) === tool);
}

function canonical(name: string): string {
  return canonicalFromProviderName(name) ?? name;
}

/** The latest request for `tool` in the transcript (recorded with canonical names). */
function lastCall(messages: readonly ConversationMessageV1[], tool: string): RequestedToolCallV1 | undefined {
  return messages.flatMap((m) => m.tool_calls ?? []).findLast((c) => c.name === tool);
}

/** The fenced data of the latest result of `callId`, parsed; `undefined` when there is none or it does not parse. */
function resultOf(messages: readonly ConversationMessageV1[], callId: string): unknown {
  const content = messages.findLast((m) => m.role === 'tool' && m.tool_call_id === callId)?.content ?? '';
  const lines = content.split('\n');
  const begin = lines.indexOf(`<<<BEGIN UNTRUSTED DATA ${callId}>>>`);
  try {
    return begin >= 0 ? (JSON.parse(lines[begin + 1] ?? '') as unknown) : undefined;
  } catch {
    return undefined;
  }
}
