// Test fixtures shared by the decider's specs: one call's events and commands with plausible values. Not exported from
// the package barrel.
import { canonicalPayload, ToolCallEventType as T, type JsonValue, type ToolCallEventDraft } from '@ormuz/contracts';
import type { SubmitDecision, ToolCallCommand } from './tool-call.commands.js';

export const CALL_ID = 'call_0123456789abcdef0123456789abcdef';
export const APPROVAL_ID = 'apr_0123456789abcdef';
export const REQUEST_ID = 'req_1';
export const DEVICE_ID = 'pixel-7';
export const BOOT_ID = 'boot-1';
export const CONTRACT = 'v3-9f2c1e';
export const NOW = new Date('2030-01-01T00:00:00.000Z');
export const EXPIRES_AT = '2030-01-01T00:10:00.000Z';
export const DEADLINE = '2030-01-01T00:01:00.000Z';

export const ARGS = canonicalPayload({ to: 'alice', text: 'The report is ready.' });
export const OTHER_ARGS = canonicalPayload({ to: 'mallory', text: 'The report is ready.' });

type DataOf<K extends ToolCallEventDraft['type']> = Extract<ToolCallEventDraft, { type: K }>['data'];
type CommandData<K extends ToolCallCommand['type']> = Extract<ToolCallCommand, { type: K }>['data'];

/** Event drafts of the fixture call; each takes overrides of its data. */
export const ev = {
  requested: (o: Partial<DataOf<typeof T.Requested>> = {}): ToolCallEventDraft => ({
    type: T.Requested,
    data: {
      call_id: CALL_ID,
      tool: 'messaging.send_message',
      contract_version: CONTRACT,
      payload: ARGS.payload,
      payload_sha256: ARGS.sha256,
      origin: { kind: 'conversation', conversation_id: 'conv-1', turn: 2, index: 0 },
      agent_id: 'agent-1',
      target: { device_id: DEVICE_ID },
      ...o,
    },
  }),
  refused: (o: Partial<DataOf<typeof T.Refused>> = {}): ToolCallEventDraft => ({
    type: T.Refused,
    data: { call_id: CALL_ID, reason_code: 'tool_not_granted', message: 'This agent may not send messages.', ...o },
  }),
  staged: (o: Partial<DataOf<typeof T.Staged>> = {}): ToolCallEventDraft => ({
    type: T.Staged,
    data: {
      call_id: CALL_ID,
      approval_id: APPROVAL_ID,
      summary: 'Send "The report is ready." to alice.',
      expires_at: EXPIRES_AT,
      payload_sha256: ARGS.sha256,
      contract_version: CONTRACT,
      verdict: { level: 'high', reasons: ['sends a message'] },
      ...o,
    },
  }),
  approved: (o: Partial<DataOf<typeof T.Approved>> = {}): ToolCallEventDraft => ({
    type: T.Approved,
    data: {
      call_id: CALL_ID,
      approval_id: APPROVAL_ID,
      decided_by: 'owner-1',
      payload_sha256: ARGS.sha256,
      contract_version: CONTRACT,
      ...o,
    },
  }),
  denied: (o: Partial<DataOf<typeof T.Denied>> = {}): ToolCallEventDraft => ({
    type: T.Denied,
    data: { call_id: CALL_ID, approval_id: APPROVAL_ID, decided_by: 'owner-1', reason: 'Not now.', ...o },
  }),
  expired: (): ToolCallEventDraft => ({ type: T.Expired, data: { call_id: CALL_ID, approval_id: APPROVAL_ID } }),
  authorized: (o: Partial<DataOf<typeof T.Authorized>> = {}): ToolCallEventDraft => ({
    type: T.Authorized,
    data: { call_id: CALL_ID, verdict: { level: 'low', reasons: [] }, approval_id: null, ...o },
  }),
  authorizedByApproval: (): ToolCallEventDraft => ({
    type: T.Authorized,
    data: { call_id: CALL_ID, verdict: { level: 'high', reasons: ['sends a message'] }, approval_id: APPROVAL_ID },
  }),
  dispatched: (o: Partial<DataOf<typeof T.Dispatched>> = {}): ToolCallEventDraft => ({
    type: T.Dispatched,
    data: {
      call_id: CALL_ID,
      request_id: REQUEST_ID,
      executor: { kind: 'device', device_id: DEVICE_ID },
      payload_sha256: ARGS.sha256,
      deadline: DEADLINE,
      ...o,
    },
  }),
  started: (o: Partial<DataOf<typeof T.Started>> = {}): ToolCallEventDraft => ({
    type: T.Started,
    data: { call_id: CALL_ID, request_id: REQUEST_ID, executor_id: DEVICE_ID, boot_id: BOOT_ID, ...o },
  }),
  succeeded: (o: Partial<DataOf<typeof T.Succeeded>> = {}): ToolCallEventDraft => ({
    type: T.Succeeded,
    data: { call_id: CALL_ID, request_id: REQUEST_ID, result: { message_id: 'm-1', sent: true }, ...o },
  }),
  failed: (o: Partial<DataOf<typeof T.Failed>> = {}): ToolCallEventDraft => ({
    type: T.Failed,
    data: {
      call_id: CALL_ID,
      request_id: REQUEST_ID,
      error: { code: 'app_not_installed', message: 'The messaging app is not installed.' },
      ...o,
    },
  }),
  sealed: (o: Partial<DataOf<typeof T.Sealed>> = {}): ToolCallEventDraft => ({
    type: T.Sealed,
    data: { call_id: CALL_ID, sealed_by: 'owner-1', reason: 'Changed my mind.', ...o },
  }),
  outcomeUnknown: (o: Partial<DataOf<typeof T.OutcomeUnknown>> = {}): ToolCallEventDraft => ({
    type: T.OutcomeUnknown,
    data: { call_id: CALL_ID, request_id: REQUEST_ID, cause: 'connection_lost', detail: 'socket closed', ...o },
  }),
};

/** The gate's decisions a submit may carry: the fixture's refusal, staging and authorisation. */
export const decision = {
  refuse: (o: Partial<Extract<SubmitDecision, { kind: 'refuse' }>> = {}): SubmitDecision => ({
    kind: 'refuse',
    reason_code: 'tool_not_granted',
    message: 'This agent may not send messages.',
    ...o,
  }),
  stage: (o: Partial<Extract<SubmitDecision, { kind: 'stage' }>> = {}): SubmitDecision => ({
    kind: 'stage',
    approval_id: APPROVAL_ID,
    summary: 'Send "The report is ready." to alice.',
    expires_at: EXPIRES_AT,
    verdict: { level: 'high', reasons: ['sends a message'] },
    ...o,
  }),
  authorize: (o: Partial<Extract<SubmitDecision, { kind: 'authorize' }>> = {}): SubmitDecision => ({
    kind: 'authorize',
    verdict: { level: 'low', reasons: [] },
    ...o,
  }),
};

/** Commands on the fixture call; each takes overrides of its data. */
export const cmd = {
  submit: (o: Partial<CommandData<'SubmitCall'>> = {}): ToolCallCommand => ({
    type: 'SubmitCall',
    data: { ...(ev.requested().data as CommandData<'SubmitCall'>), ...o },
  }),
  /** A submit carrying the gate's decision, which it records with the request (the data of `cmd.refuse()` ...). */
  submitDecided: (decision: SubmitDecision, o: Partial<CommandData<'SubmitCall'>> = {}): ToolCallCommand => ({
    type: 'SubmitCall',
    data: { ...(ev.requested().data as CommandData<'SubmitCall'>), decision, ...o },
  }),
  refuse: (o: Partial<CommandData<'RefuseCall'>> = {}): ToolCallCommand => ({
    type: 'RefuseCall',
    data: { ...(ev.refused().data as CommandData<'RefuseCall'>), ...o },
  }),
  stage: (o: Partial<CommandData<'StageCall'>> = {}): ToolCallCommand => ({
    type: 'StageCall',
    data: {
      call_id: CALL_ID,
      approval_id: APPROVAL_ID,
      summary: 'Send "The report is ready." to alice.',
      expires_at: EXPIRES_AT,
      verdict: { level: 'high', reasons: ['sends a message'] },
      ...o,
    },
  }),
  authorize: (o: Partial<CommandData<'AuthorizeCall'>> = {}): ToolCallCommand => ({
    type: 'AuthorizeCall',
    data: { call_id: CALL_ID, verdict: { level: 'low', reasons: [] }, ...o },
  }),
  approve: (o: Partial<CommandData<'ApproveCall'>> = {}): ToolCallCommand => ({
    type: 'ApproveCall',
    data: { ...(ev.approved().data as CommandData<'ApproveCall'>), ...o },
  }),
  deny: (o: Partial<CommandData<'DenyCall'>> = {}): ToolCallCommand => ({
    type: 'DenyCall',
    data: { ...(ev.denied().data as CommandData<'DenyCall'>), ...o },
  }),
  expire: (o: Partial<CommandData<'ExpireApproval'>> = {}): ToolCallCommand => ({
    type: 'ExpireApproval',
    data: { call_id: CALL_ID, approval_id: APPROVAL_ID, ...o },
  }),
  dispatch: (o: Partial<CommandData<'DispatchCall'>> = {}): ToolCallCommand => ({
    type: 'DispatchCall',
    data: {
      call_id: CALL_ID,
      request_id: REQUEST_ID,
      executor: { kind: 'device', device_id: DEVICE_ID },
      deadline: DEADLINE,
      ...o,
    },
  }),
  seal: (o: Partial<CommandData<'SealCall'>> = {}): ToolCallCommand => ({
    type: 'SealCall',
    data: { ...(ev.sealed().data as CommandData<'SealCall'>), ...o },
  }),
  claimStart: (o: Partial<CommandData<'ClaimStart'>> = {}): ToolCallCommand => ({
    type: 'ClaimStart',
    data: { ...(ev.started().data as CommandData<'ClaimStart'>), ...o },
  }),
  succeed: (
    result: JsonValue = { message_id: 'm-1', sent: true },
    o: Partial<CommandData<'RecordOutcome'>> = {},
  ): ToolCallCommand => ({
    type: 'RecordOutcome',
    data: { call_id: CALL_ID, request_id: REQUEST_ID, outcome: { kind: 'succeeded', result }, ...o },
  }),
  fail: (o: Partial<CommandData<'RecordOutcome'>> = {}): ToolCallCommand => ({
    type: 'RecordOutcome',
    data: {
      call_id: CALL_ID,
      request_id: REQUEST_ID,
      outcome: {
        kind: 'failed',
        error: { code: 'app_not_installed', message: 'The messaging app is not installed.' },
      },
      ...o,
    },
  }),
  markUnknown: (o: Partial<CommandData<'MarkOutcomeUnknown'>> = {}): ToolCallCommand => ({
    type: 'MarkOutcomeUnknown',
    data: { ...(ev.outcomeUnknown().data as CommandData<'MarkOutcomeUnknown'>), ...o },
  }),
};
