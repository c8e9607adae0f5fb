import { assertValid, assertValidEvent, hasSchema } from '../schema-registry.js';
import { SchemaViolationError } from '../errors.js';
import { envelope } from '../envelope.js';
import {
  isToolCallEvent,
  TOOL_CALL_EVENT_TYPES,
  ToolCallEventType as T,
  type ToolCallEventDraft,
} from './tool-call.events.js';

const sha = 'a'.repeat(64);
const CALL = 'call_0123456789abcdef0123456789abcdef';

/** One valid example of every event type. */
const examples: ToolCallEventDraft[] = [
  {
    type: T.Requested,
    data: {
      call_id: CALL,
      tool: 'messaging.send_message',
      contract_version: 'v3',
      payload: '{"to":"alice"}',
      payload_sha256: sha,
      origin: { kind: 'conversation', conversation_id: 'conv-1', turn: 0, index: 2 },
      agent_id: 'agent-1',
      target: null,
    },
  },
  { type: T.Refused, data: { call_id: CALL, reason_code: 'tool_not_granted', message: 'Use a granted tool.' } },
  {
    type: T.Staged,
    data: {
      call_id: CALL,
      approval_id: 'apr-1',
      summary: 'Send a message to alice.',
      expires_at: '2030-01-01T00:10:00Z',
      payload_sha256: sha,
      contract_version: 'v3',
      verdict: { level: 'high', reasons: ['sends a message'] },
    },
  },
  {
    type: T.Approved,
    data: { call_id: CALL, approval_id: 'apr-1', decided_by: 'owner-1', payload_sha256: sha, contract_version: 'v3' },
  },
  { type: T.Denied, data: { call_id: CALL, approval_id: 'apr-1', decided_by: 'owner-1', reason: null } },
  { type: T.Expired, data: { call_id: CALL, approval_id: 'apr-1' } },
  { type: T.Authorized, data: { call_id: CALL, verdict: { level: 'low', reasons: [] }, approval_id: null } },
  {
    type: T.Dispatched,
    data: {
      call_id: CALL,
      request_id: 'req-1',
      executor: { kind: 'device', device_id: 'pixel-7' },
      payload_sha256: sha,
      deadline: '2030-01-01T00:01:00.000+02:00',
    },
  },
  { type: T.Started, data: { call_id: CALL, request_id: 'req-1', executor_id: 'pixel-7', boot_id: 'boot-1' } },
  { type: T.Succeeded, data: { call_id: CALL, request_id: 'req-1', result: [1, 'two', { three: null }] } },
  { type: T.Failed, data: { call_id: CALL, request_id: 'req-1', error: { code: 'E_NOAPP', message: 'No app.' } } },
  { type: T.Sealed, data: { call_id: CALL, sealed_by: 'owner-1', reason: 'Changed my mind.' } },
  { type: T.OutcomeUnknown, data: { call_id: CALL, request_id: 'req-1', cause: 'reboot', detail: '' } },
];

const exampleOf = (type: string) => examples.find((e) => e.type === type)!.data as unknown as Record<string, unknown>;
const rejects = (type: string, data: unknown) => expect(() => assertValid(type, data)).toThrow(SchemaViolationError);

describe('tool-call events', () => {
  it('list thirteen versioned types, each with a registered schema', () => {
    expect(TOOL_CALL_EVENT_TYPES).toHaveLength(13);
    for (const type of TOOL_CALL_EVENT_TYPES) {
      expect(type).toMatch(/^ormuz\.toolcall\.[a-z_]+\.v1$/);
      expect(hasSchema(type)).toBe(true);
    }
    expect(examples.map((e) => e.type).sort()).toEqual([...TOOL_CALL_EVENT_TYPES].sort());
  });

  it.each(examples.map((e) => [e.type, e] as const))(
    'accept a valid %s, inside a CloudEvents envelope too',
    (_t, draft) => {
      expect(() => assertValid(draft.type, draft.data)).not.toThrow();
      const event = envelope<string, unknown>(draft, {
        source: '/ormuz/policy',
        tenant: 'acme',
        subject: CALL,
        correlationid: 'conv-1',
        causationid: 'cmd-1',
        time: new Date('2030-01-01T00:00:00Z'),
      });
      expect(() => assertValidEvent(event)).not.toThrow();
    },
  );

  it.each(TOOL_CALL_EVENT_TYPES)('refuse unknown and missing fields (%s)', (type) => {
    const data = exampleOf(type);
    rejects(type, { ...data, extra: 1 });
    for (const key of Object.keys(data)) {
      const { [key]: _omitted, ...rest } = data;
      rejects(type, rest);
    }
  });

  it('refuse ids that could break a subject', () => {
    rejects(T.Started, { ...exampleOf(T.Started), call_id: 'call.1' });
    rejects(T.Started, { ...exampleOf(T.Started), boot_id: 'a b' });
    rejects(T.Requested, { ...exampleOf(T.Requested), target: { device_id: 'dev>' } });
  });

  it('require the tool name shape <extension>.<snake_case>', () => {
    rejects(T.Requested, { ...exampleOf(T.Requested), tool: 'sendMessage' });
    rejects(T.Requested, { ...exampleOf(T.Requested), tool: 'messaging.sendMessage' });
    expect(() => assertValid(T.Requested, { ...exampleOf(T.Requested), tool: 'ormuz.check_status' })).not.toThrow();
  });

  it('check origins, hashes, times, verdicts and causes', () => {
    const requested = exampleOf(T.Requested);
    rejects(T.Requested, { ...requested, origin: { kind: 'conversation', conversation_id: 'c', turn: -1, index: 0 } });
    rejects(T.Requested, { ...requested, origin: { kind: 'conversation', conversation_id: 'c', turn: 0.5, index: 0 } });
    rejects(T.Requested, { ...requested, origin: { kind: 'model', operation_id: 'x' } });
    expect(() =>
      assertValid(T.Requested, { ...requested, origin: { kind: 'operation', operation_id: 'op-1' } }),
    ).not.toThrow();
    rejects(T.Requested, { ...requested, payload_sha256: 'A'.repeat(64) });
    rejects(T.Requested, { ...requested, payload: 'x'.repeat(256 * 1024 + 1) });
    rejects(T.Staged, { ...exampleOf(T.Staged), expires_at: 'tomorrow' });
    rejects(T.Staged, { ...exampleOf(T.Staged), verdict: { level: 'low', reasons: [] } });
    rejects(T.Authorized, { ...exampleOf(T.Authorized), verdict: { level: 'medium', reasons: [] } });
    rejects(T.OutcomeUnknown, { ...exampleOf(T.OutcomeUnknown), cause: 'done' });
    rejects(T.Refused, { ...exampleOf(T.Refused), reason_code: 'Not Granted' });
  });

  it('accept a device or a platform service as executor, and nothing else', () => {
    const dispatched = exampleOf(T.Dispatched);
    const platform = { kind: 'platform', service: 'model-loop' };
    expect(() => assertValid(T.Dispatched, { ...dispatched, executor: platform })).not.toThrow();
    rejects(T.Dispatched, { ...dispatched, executor: { kind: 'platform', device_id: 'pixel-7' } });
    rejects(T.Dispatched, { ...dispatched, executor: { ...platform, service: 'model.loop' } });
    rejects(T.Dispatched, { ...dispatched, executor: { kind: 'worker', service: 'x' } });
  });

  it('allow null only where stated', () => {
    rejects(T.Requested, { ...exampleOf(T.Requested), agent_id: null });
    rejects(T.Sealed, { ...exampleOf(T.Sealed), reason: null });
    expect(() => assertValid(T.Authorized, { ...exampleOf(T.Authorized), approval_id: 'apr-1' })).not.toThrow();
    expect(() => assertValid(T.Denied, { ...exampleOf(T.Denied), reason: 'No.' })).not.toThrow();
  });

  it('recognise their own drafts by type', () => {
    expect(examples.every(isToolCallEvent)).toBe(true);
    expect(isToolCallEvent({ type: 'ormuz.conversation.started.v1', data: {} })).toBe(false);
  });
});
