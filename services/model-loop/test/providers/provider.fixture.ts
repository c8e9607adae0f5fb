// What the adapter specs share: a turn's request, a transcript with an answered and a late tool result, settings.
import type { ConversationMessageV1 } from '@ormuz/contracts';
import type { HttpSettings, ModelRequest, ProviderSettings, RetryLog } from '../../src/index.js';

export const KEY = 'sk-test-6f1d2c9a8b7e4f3a2d1c0b9a8f7e6d5c';

export const CALL_TAP = 'call_00000000000000000000000000000001';
export const CALL_SEND = 'call_00000000000000000000000000000002';

/** Tools as offered to a provider that encodes names. */
export const TOOLS = [
  {
    name: 'device__tap',
    description: 'Tap an element.',
    parameters: {
      type: 'object',
      properties: { ref: { type: 'string' } },
      required: ['ref'],
      additionalProperties: false,
    },
  },
  {
    name: 'device__send_message',
    description: 'Send a text message.',
    parameters: { type: 'object', properties: { recipient: { type: 'string' } }, additionalProperties: false },
  },
] as const;

const status = (s: string, extra = '') => `{"status":"${s}"${extra}}`;

/**
 * A transcript as the loop records it: the task, a reply asking for two tools (canonical names), an immediate result
 * and a pending confirmation, the model's answer, and then the late final result of the staged call.
 */
export const HISTORY: ConversationMessageV1[] = [
  { role: 'user', content: 'Tap OK and tell Alice I am late.' },
  {
    role: 'assistant',
    content: 'On it.',
    tool_calls: [
      { index: 0, name: 'device.tap', arguments: { ref: 'e1' }, call_id: CALL_TAP },
      { index: 1, name: 'device.send_message', arguments: { recipient: 'Alice' }, call_id: CALL_SEND },
    ],
  },
  {
    role: 'tool',
    content: status('succeeded'),
    tool_call_id: CALL_TAP,
    provenance: {
      source: 'device:p1',
      call_id: CALL_TAP,
      tool: 'device.tap',
      status: 'succeeded',
      truncated: false,
      approval: null,
    },
  },
  {
    role: 'tool',
    content: status('pending_confirmation', ',"approval_id":"apr_1"'),
    tool_call_id: CALL_SEND,
    provenance: {
      source: 'ormuz',
      call_id: CALL_SEND,
      tool: 'device.send_message',
      status: 'pending_confirmation',
      truncated: false,
      approval: { approval_id: 'apr_1', summary: 'Text Alice' },
    },
  },
  { role: 'assistant', content: 'Tapped OK; the message waits for approval.' },
  {
    role: 'tool',
    content: status('denied'),
    tool_call_id: CALL_SEND,
    provenance: {
      source: 'ormuz',
      call_id: CALL_SEND,
      tool: 'device.send_message',
      status: 'denied',
      truncated: false,
      approval: null,
    },
  },
];

export function turn(
  model: string,
  messages: ConversationMessageV1[] = HISTORY.slice(0, 1),
  extra: Partial<ModelRequest> = {},
): ModelRequest {
  return {
    model,
    conversation_id: 'conv_1',
    turn: 0,
    system: 'You act for the user through tools.',
    messages,
    tools: TOOLS as unknown as ModelRequest['tools'],
    directory: ['device__screen_observe'],
    ...extra,
  };
}

export function http(overrides: Partial<HttpSettings> = {}): HttpSettings {
  return { timeoutMs: 5000, attempts: 3, baseDelayMs: 1, maxDelayMs: 50, ...overrides };
}

export function settings(baseUrl: string, overrides: Partial<ProviderSettings> = {}): ProviderSettings {
  return {
    baseUrl,
    apiKeyEnv: 'TEST_MODEL_KEY',
    http: http(),
    maxToolCallsPerTurn: 16,
    maxOutputTokens: 1024,
    stream: false,
    profile: { tier: 'large', schemaBudgetTokens: 100_000, encodeToolNames: true },
    ...overrides,
  };
}

export const ENV = { TEST_MODEL_KEY: KEY };

/** A retry log that keeps its entries. */
export function retryLog(): { log: RetryLog; entries: Parameters<RetryLog>[0][] } {
  const entries: Parameters<RetryLog>[0][] = [];
  return { log: (e) => entries.push(e), entries };
}
