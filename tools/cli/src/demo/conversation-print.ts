/**
 * How the demo prints a conversation: tool results in the order the model asked for the calls (not the order their
 * outcomes arrived), and long fenced tool data shortened visibly, with both markers kept whole, so a shortened
 * result never reads like a corrupted one.
 */

/** A conversation message as model-loop's `get` returns it. */
export interface PrintedMessage {
  readonly role: string;
  readonly content: string;
  readonly tool_calls?: readonly { readonly name: string; readonly call_id: string; readonly arguments: unknown }[];
  readonly tool_call_id?: string;
}

/** Data longer than this many characters is shortened in the print (what the model received is unchanged). */
export const DEFAULT_MAX_DATA_CHARS = 240;

const BEGIN = '<<<BEGIN UNTRUSTED DATA ';
const END = '<<<END UNTRUSTED DATA ';

/** The lines the demo prints for `messages`. */
export function conversationLines(
  messages: readonly PrintedMessage[],
  maxDataChars = DEFAULT_MAX_DATA_CHARS,
): string[] {
  const order = new Map<string, number>();
  for (const m of messages)
    for (const t of m.tool_calls ?? []) if (!order.has(t.call_id)) order.set(t.call_id, order.size);
  const rank = (m: PrintedMessage) => order.get(m.tool_call_id ?? '') ?? Number.MAX_SAFE_INTEGER;

  const lines: string[] = [];
  for (let i = 0; i < messages.length;) {
    const m = messages[i]!;
    if (m.role === 'tool') {
      // A run of tool messages: outcomes arrive in any order; print them in call order (stable within one call).
      let j = i;
      while (j < messages.length && messages[j]!.role === 'tool') j++;
      const run = messages.slice(i, j).map((msg, k) => ({ msg, k }));
      run.sort((a, b) => rank(a.msg) - rank(b.msg) || a.k - b.k);
      for (const { msg } of run)
        lines.push(`tool (${msg.tool_call_id ?? '?'}): ${shortenFencedData(msg.content, maxDataChars)}`);
      i = j;
      continue;
    }
    if (m.content) lines.push(`${m.role}: ${m.content}`);
    for (const t of m.tool_calls ?? [])
      lines.push(`${m.role}: asks ${t.name} ${JSON.stringify(t.arguments)} → call ${t.call_id}`);
    i++;
  }
  return lines;
}

/**
 * Shortens the data between a tool result's BEGIN and END markers to about `maxChars`: the cut falls after the last
 * `,` that fits (so compact JSON is not cut inside a short string) and is marked with `…`; a line after the END marker
 * says how much is not shown. Everything else, and both markers, is kept as it is.
 */
export function shortenFencedData(content: string, maxChars = DEFAULT_MAX_DATA_CHARS): string {
  const lines = content.split('\n');
  const begin = lines.findIndex((l) => l.startsWith(BEGIN));
  const end = lines.findIndex((l, i) => i > begin && l.startsWith(END));
  if (begin < 0 || end < 0) return content;
  const data = lines.slice(begin + 1, end).join('\n');
  if (data.length <= maxChars) return content;
  const comma = data.lastIndexOf(',', maxChars - 1);
  let cut = comma > maxChars / 2 ? comma + 1 : maxChars;
  if (/[\uD800-\uDBFF]/.test(data.charAt(cut - 1))) cut -= 1; // never split a surrogate pair
  const hidden = data.length - cut;
  return [
    ...lines.slice(0, begin + 1),
    `${data.slice(0, cut)} …`,
    ...lines.slice(end, end + 1),
    `(the demo shortened this data: ${hidden.toLocaleString('en')} more characters are not shown here)`,
    ...lines.slice(end + 1),
  ].join('\n');
}

/** Where a conversation stands and what it used, as model-loop's `get` returns it. */
export interface PrintedStanding {
  readonly status: string;
  readonly completion_reason: string | null;
  readonly bound: { readonly bound: string; readonly limit: number; readonly used: number } | null;
  readonly usage: {
    readonly steps: number;
    readonly tool_calls: number;
    readonly tokens: number;
    readonly cost_usd: number | null;
  };
}

const UNITS: Readonly<Record<string, (n: number) => string>> = {
  steps: (n) => `${n} model turns`,
  tool_calls: (n) => `${n} tool calls`,
  tokens: (n) => `${n.toLocaleString('en')} tokens`,
  wall_time: (n) => `${(n / 1000).toFixed(1)} s`,
  cost: (n) => `$${n.toFixed(4)}`,
};

/** The tenant's daily bounds (over all its conversations in one UTC day) by the conversation bound they count like. */
const DAILY: Readonly<Record<string, string>> = {
  tenant_day_steps: 'steps',
  tenant_day_tool_calls: 'tool_calls',
  tenant_day_tokens: 'tokens',
  tenant_day_cost: 'cost',
};

/** The lines saying where a conversation stands, what it used, and, when a bound stopped it, which one and its figures. */
export function standingLines(v: PrintedStanding): string[] {
  const u = v.usage;
  const lines = [
    `status: ${v.status}${v.completion_reason ? ` (${v.completion_reason})` : ''}`,
    `used: ${u.steps} model turns, ${u.tool_calls} tool calls, ${u.tokens.toLocaleString('en')} tokens, ` +
      (u.cost_usd === null ? 'cost unknown (the model has no price)' : dollars(u.cost_usd)),
  ];
  if (v.bound) {
    const daily = DAILY[v.bound.bound];
    const unit = UNITS[daily ?? v.bound.bound] ?? String;
    const used = `used ${unit(v.bound.used)} of ${unit(v.bound.limit)}`;
    lines.push(
      daily
        ? `stopped by the tenant's daily ${daily} bound: its conversations ${used} that UTC day`
        : `stopped by the ${v.bound.bound} bound: ${used}`,
    );
  }
  return lines;
}

function dollars(n: number): string {
  return n >= 0.01 || n === 0 ? `$${n.toFixed(2)}` : `$${n.toPrecision(2)}`;
}
