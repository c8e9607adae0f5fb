import fc from 'fast-check';
import type { CallOriginV1 } from '@ormuz/contracts';
import { CALL_ID_PATTERN, deriveCallId } from './call-id.js';
import { InvalidCallOriginError } from './tool-call.errors.js';

const conversation = (conversation_id: string, turn: number, index: number): CallOriginV1 => ({
  kind: 'conversation',
  conversation_id,
  turn,
  index,
});

describe('deriveCallId', () => {
  it('gives the same id for the same origin, so a retry keeps its identity', () => {
    expect(deriveCallId('acme', conversation('conv-1', 3, 1))).toBe(deriveCallId('acme', conversation('conv-1', 3, 1)));
    expect(deriveCallId('acme', { kind: 'operation', operation_id: 'op-42' })).toBe(
      deriveCallId('acme', { kind: 'operation', operation_id: 'op-42' }),
    );
  });

  it('is stable across releases: SHA-256 of the canonical origin, first 128 bits', () => {
    // sha256('["ormuz.call_id.v1","acme","conversation","conv-1",0,0]'), computed independently.
    expect(deriveCallId('acme', conversation('conv-1', 0, 0))).toBe('call_906397a80646c4851e7369c6f12e0520');
  });

  it('formats ids as call_ and 32 lowercase hex characters, valid in a subject', () => {
    expect(deriveCallId('acme', conversation('conv-1', 0, 0))).toMatch(CALL_ID_PATTERN);
  });

  it('gives different ids to different tenants, conversations, turns, indexes and operations', () => {
    const ids = [
      deriveCallId('acme', conversation('conv-1', 0, 0)),
      deriveCallId('globex', conversation('conv-1', 0, 0)),
      deriveCallId('acme', conversation('conv-2', 0, 0)),
      deriveCallId('acme', conversation('conv-1', 1, 0)),
      deriveCallId('acme', conversation('conv-1', 0, 1)),
      deriveCallId('acme', conversation('conv-1', 10, 1)),
      deriveCallId('acme', conversation('conv-1', 1, 10)),
      deriveCallId('acme', { kind: 'operation', operation_id: 'conv-1' }),
      deriveCallId('acme', { kind: 'operation', operation_id: 'op-1' }),
    ];
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('never gives two distinct origins the same id', () => {
    const id = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,20}$/);
    const origin: fc.Arbitrary<CallOriginV1> = fc.oneof(
      fc.record({
        kind: fc.constant('conversation' as const),
        conversation_id: id,
        turn: fc.nat(1000),
        index: fc.nat(50),
      }),
      fc.record({ kind: fc.constant('operation' as const), operation_id: id }),
    );
    fc.assert(
      fc.property(id, origin, id, origin, (t1, o1, t2, o2) => {
        const same = t1 === t2 && JSON.stringify(o1) === JSON.stringify(o2);
        return (deriveCallId(t1, o1) === deriveCallId(t2, o2)) === same;
      }),
      { numRuns: 2_000 },
    );
  });

  it('refuses origins that cannot identify a call', () => {
    expect(() => deriveCallId('acme.evil', conversation('conv-1', 0, 0))).toThrow(InvalidCallOriginError);
    expect(() => deriveCallId('acme', conversation('conv.1', 0, 0))).toThrow(/conversation_id/);
    expect(() => deriveCallId('acme', conversation('conv-1', -1, 0))).toThrow(/turn -1 is not a whole number/);
    expect(() => deriveCallId('acme', conversation('conv-1', 0, 1.5))).toThrow(/index/);
    expect(() => deriveCallId('acme', { kind: 'operation', operation_id: '*' })).toThrow(/operation_id/);
    expect(() => deriveCallId('acme', { kind: 'model' } as unknown as CallOriginV1)).toThrow(
      /origin kind "model" is unknown/,
    );
  });
});
