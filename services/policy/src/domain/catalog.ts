/**
 * The tools policy knows, with their effect and risk level. This is the walking skeleton's catalog: a fixed set of
 * device tools. Extensions, manifests, contract hashes and grants replace it in the dispatch-gate work.
 */

export type Effect = 'read' | 'write' | 'cursor_read';
export type RiskLevel = 'low' | 'high';

export interface ToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly effect: Effect;
  readonly risk: RiskLevel;
  readonly contractVersion: string;
  /** JSON Schema of the arguments a model may send. */
  readonly parameters: Record<string, unknown>;
}

const str = (description: string, maxLength = 2000) => ({ type: 'string', minLength: 1, maxLength, description });

export const CATALOG: readonly ToolDefinition[] = [
  {
    name: 'device.screen_observe',
    description:
      'Returns the elements on the phone screen (ref, text, bounds) and the foreground app. Use it before tapping. ' +
      'The list is bounded; when partial it says so and returns a continuation handle.',
    effect: 'read',
    risk: 'low',
    contractVersion: '1',
    parameters: { type: 'object', additionalProperties: false, properties: {}, required: [] },
  },
  {
    name: 'device.open_app',
    description: 'Brings the app with the given Android package to the front. Fails when the app is not installed.',
    effect: 'write',
    risk: 'low',
    contractVersion: '1',
    parameters: {
      type: 'object',
      additionalProperties: false,
      properties: { package_name: str('Android package, e.g. com.example.messages', 200) },
      required: ['package_name'],
    },
  },
  {
    name: 'device.list_contacts',
    description: 'Returns the names and phone numbers of contacts whose name contains the query (at most 50).',
    effect: 'read',
    risk: 'low',
    contractVersion: '1',
    parameters: {
      type: 'object',
      additionalProperties: false,
      properties: { name_query: str('Part of a contact name', 200) },
      required: ['name_query'],
    },
  },
  {
    name: 'device.send_message',
    description:
      'Sends a text message from the phone to one recipient. High risk: it is staged for the owner to approve. ' +
      'Returns the message id once sent; fails when the recipient is unknown.',
    effect: 'write',
    risk: 'high',
    contractVersion: '1',
    parameters: {
      type: 'object',
      additionalProperties: false,
      properties: { recipient: str('Contact name or phone number', 200), message_body: str('Text to send', 2000) },
      required: ['recipient', 'message_body'],
    },
  },
];

const byName = new Map(CATALOG.map((t) => [t.name, t]));

export function findTool(name: string): ToolDefinition | undefined {
  return byName.get(name);
}

/** Edit distance, for suggesting real names when a model asks for one that does not exist. */
export function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length]!;
}

/** Up to `n` catalog names closest to `name`. */
export function closestNames(name: string, n = 3): string[] {
  return CATALOG.map((t) => ({ name: t.name, d: editDistance(name.toLowerCase(), t.name) }))
    .sort((x, y) => x.d - y.d || x.name.localeCompare(y.name))
    .slice(0, n)
    .map((x) => x.name);
}
