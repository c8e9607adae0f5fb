import { envelope, isToolCallEvent, type ToolCallEventDraft } from '@ormuz/contracts';
import { expectEvent } from '@ormuz/event-log';
import { seededSubmit } from '@ormuz/testing';
import { toolCallDecider, type ToolCallCommand, type ToolCallState } from '@ormuz/tool-call';
import { FoldedCalls, type CommittedEvent } from './folded-calls.js';

const TENANT = 'acme';
const NOW = new Date('2030-01-01T00:00:00.000Z');

/** One call's events as the decider decides them, each at the next stream sequence `seq()` hands out. */
function callEvents(callId: string, target: { device_id: string } | null, seq: () => number) {
  let state: ToolCallState = toolCallDecider.initialState;
  const run = (command: ToolCallCommand): CommittedEvent[] =>
    toolCallDecider.decide(command, state, NOW).map((draft: ToolCallEventDraft) => {
      state = toolCallDecider.evolve(state, draft);
      const at = seq();
      const stored = envelope<string, unknown>(draft, {
        source: '/test',
        tenant: TENANT,
        subject: callId,
        correlationid: callId,
        causationid: 'test',
        time: NOW,
      });
      return { event: expectEvent(isToolCallEvent, stored, { subject: callId, seq: at, reader: 'test' }), seq: at };
    });
  const { command } = seededSubmit({
    tenant: TENANT,
    callId,
    tool: 'device.screen_observe',
    origin: { kind: 'operation', operation_id: `op-${callId}` },
    deviceId: target?.device_id ?? null,
  });
  return {
    state: () => state,
    requested: () => run(command),
    authorized: () =>
      run({ type: 'AuthorizeCall', data: { call_id: callId, verdict: { level: 'low', reasons: ['test'] } } }),
    sealed: () => run({ type: 'SealCall', data: { call_id: callId, sealed_by: 'test', reason: 'test' } }),
  };
}

describe('FoldedCalls', () => {
  let next = 0;
  const seq = () => ++next;
  beforeEach(() => {
    next = 0;
  });

  it('holds the exact state and version of a device call folded across batches, once', () => {
    const folded = new FoldedCalls();
    const a = callEvents('call-a', { device_id: 'phone-1' }, seq);
    folded.fold(a.requested());
    const authorized = a.authorized();
    folded.fold(authorized);
    const version = authorized.at(-1)!.seq;
    expect(folded.take(TENANT, 'call-a', version)).toEqual({ state: a.state(), version });
    expect(folded.take(TENANT, 'call-a', version)).toBeUndefined();
  });

  it('holds nothing for a call without a device, a call not ready, or a version the row does not have', () => {
    const folded = new FoldedCalls();
    const platform = callEvents('call-p', null, seq);
    const requestedOnly = callEvents('call-r', { device_id: 'phone-1' }, seq);
    const other = callEvents('call-o', { device_id: 'phone-1' }, seq);
    folded.fold([
      ...platform.requested(),
      ...platform.authorized(),
      ...requestedOnly.requested(),
      ...other.requested(),
    ]);
    const authorized = other.authorized();
    folded.fold(authorized);
    expect(folded.take(TENANT, 'call-p', 2)).toBeUndefined();
    expect(folded.take(TENANT, 'call-r', 3)).toBeUndefined();
    expect(folded.take(TENANT, 'call-o', authorized.at(-1)!.seq - 1)).toBeUndefined();
  });

  it('forgets a call that moved past authorized, and everything after a gap in the stream', () => {
    const folded = new FoldedCalls();
    const sealed = callEvents('call-s', { device_id: 'phone-1' }, seq);
    const gapped = callEvents('call-g', { device_id: 'phone-1' }, seq);
    folded.fold([...sealed.requested(), ...sealed.authorized(), ...sealed.sealed()]);
    expect(folded.take(TENANT, 'call-s', next)).toBeUndefined();

    folded.fold(gapped.requested());
    seq(); // an event the fold never saw (another leader's, say)
    const authorized = gapped.authorized();
    folded.fold(authorized);
    expect(folded.take(TENANT, 'call-g', authorized.at(-1)!.seq)).toBeUndefined();
  });
});
