// Duplicate semantics of submit as a property: one call id identifies one request of one agent on one target. Over
// random pairs of requests under one call id, and whatever the call has become since the first, the second submit
// observes the original (no events) exactly when agent, device, tool, contract version, arguments and origin are all
// the same, and is otherwise a payload conflict that names the id and every field that differs, with both values.
import fc from 'fast-check';
import { canonicalPayload, type CallOriginV1, type ToolCallEventDraft } from '@ormuz/contracts';
import { deciderSpec } from '@ormuz/testing';
import type { SubmitCall } from './tool-call.commands.js';
import { toolCallDecider } from './tool-call.decider.js';
import { PayloadConflictError, type SubmitIdentityField } from './tool-call.errors.js';
import { CALL_ID, ev, NOW } from './tool-call.fixtures.js';

const { given } = deciderSpec(toolCallDecider, { now: NOW });

// Small pools, so that equal and unequal values both come up often.
const request = fc.record({
  agent_id: fc.constantFrom('agent-1', 'agent-2'),
  target: fc.constantFrom(null, { device_id: 'pixel-7' }, { device_id: 'pixel-8' }),
  tool: fc.constantFrom('device.send_message', 'device.tap'),
  contract_version: fc.constantFrom('1', '2'),
  args: fc.constantFrom({ to: 'alice' }, { to: 'bob' }, { to: 'alice', text: 'hi' }),
  origin: fc.constantFrom<CallOriginV1>(
    { kind: 'operation', operation_id: 'op-1' },
    { kind: 'conversation', conversation_id: 'conv-1', turn: 0, index: 0 },
  ),
});
type Request = typeof request extends fc.Arbitrary<infer R> ? R : never;

function submitOf(r: Request): SubmitCall {
  const { payload, sha256 } = canonicalPayload(r.args);
  return {
    type: 'SubmitCall',
    data: {
      call_id: CALL_ID,
      tool: r.tool,
      contract_version: r.contract_version,
      payload,
      payload_sha256: sha256,
      origin: r.origin,
      agent_id: r.agent_id,
      target: r.target,
    },
  };
}

// What the call may have become before the second submit arrives (the fixture events only name the call id).
const afterwards: readonly (readonly ToolCallEventDraft[])[] = [
  [],
  [ev.refused()],
  [ev.staged()],
  [ev.staged(), ev.denied()],
  [ev.authorized()],
  [ev.authorized(), ev.dispatched(), ev.started(), ev.succeeded()],
  [ev.authorized(), ev.dispatched(), ev.started(), ev.outcomeUnknown()],
  [ev.sealed()],
];

function expectedDifferences(first: Request, second: Request): SubmitIdentityField[] {
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  const out: SubmitIdentityField[] = [];
  if (first.agent_id !== second.agent_id) out.push('agent');
  if (!same(first.target, second.target)) out.push('device');
  if (first.tool !== second.tool) out.push('tool');
  if (first.contract_version !== second.contract_version) out.push('contract_version');
  if (!same(first.args, second.args)) out.push('arguments');
  if (!same(first.origin, second.origin)) out.push('origin');
  return out;
}

describe('submit under a call id that is already recorded', () => {
  it('observes the original exactly when it is the same request, and otherwise names every difference', () => {
    const seen = { duplicates: 0, conflicts: 0 };
    fc.assert(
      // One time in four the second submit is the first one again, so duplicates are many in every run (random pairs
      // alone are equal once in 144, and 500 of them can miss it).
      fc.property(request, fc.option(request, { freq: 3 }), fc.constantFrom(...afterwards), (first, other, later) => {
        const second = other ?? first;
        const recorded = given().when(submitOf(first)).events;
        const resubmitted = given(...recorded, ...later).when(submitOf(second));
        const differences = expectedDifferences(first, second);
        if (differences.length === 0) {
          seen.duplicates++;
          resubmitted.then([]);
          return;
        }
        seen.conflicts++;
        const conflict = resubmitted.thenThrows(PayloadConflictError);
        expect(conflict.callId).toBe(CALL_ID);
        expect(conflict.message).toContain(CALL_ID);
        expect(conflict.differences.map((d) => d.field)).toEqual(differences);
        for (const d of conflict.differences) {
          expect(d.recorded).not.toBe(d.submitted);
          expect(conflict.message).toContain(`was ${d.recorded}, now ${d.submitted}`);
        }
      }),
      { numRuns: 500 },
    );
    // The property must have seen both sides, not only easy conflicts.
    expect(seen.duplicates).toBeGreaterThan(0);
    expect(seen.conflicts).toBeGreaterThan(0);
  });
});
