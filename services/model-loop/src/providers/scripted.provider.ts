/**
 * A deterministic model for demos and tests: `scripted:<script>`. A script reads the conversation the way a model
 * would (the runtime's first line of each tool result) and answers the same way every time for the same input.
 * Token usage is estimated at four characters per token.
 */
import type { ConversationMessageV1, RequestedToolCallV1 } from '@ormuz/contracts';
import { ModelUnavailableError } from '../domain/errors.js';
import type { ModelProvider, ModelReply, ModelRequest } from '../domain/model-provider.js';

/** A script: the reply for a conversation, without usage (the provider estimates it). */
export type Script = (messages: readonly ConversationMessageV1[]) => Omit<ModelReply, 'usage'>;

const PREFIX = 'scripted:';

export class ScriptedProvider implements ModelProvider {
  constructor(private readonly scripts: Readonly<Record<string, Script>> = { demo: demoScript }) {}

  supports(model: string): boolean {
    return model.startsWith(PREFIX) && Object.hasOwn(this.scripts, model.slice(PREFIX.length));
  }

  get examples(): readonly string[] {
    return Object.keys(this.scripts).map((name) => `${PREFIX}${name}`);
  }

  async complete(request: ModelRequest): Promise<ModelReply> {
    const script = this.supports(request.model) ? this.scripts[request.model.slice(PREFIX.length)] : undefined;
    if (!script) throw new ModelUnavailableError(request.model, 'no script has that name');
    const reply = script(request.messages);
    const input = request.system.length + request.messages.reduce((n, m) => n + m.content.length, 0);
    const output = reply.content.length + JSON.stringify(reply.tool_calls).length;
    return { ...reply, usage: { input_tokens: Math.ceil(input / 4), output_tokens: Math.ceil(output / 4) } };
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
