import { hasSchema, registerSchema, type EventDraft } from '@ormuz/contracts';
import { deciderSpec } from './decider-spec.js';

const ADDED = 'ormuz.test.spec_added.v1';
if (!hasSchema(ADDED)) {
  registerSchema(ADDED, {
    type: 'object',
    additionalProperties: false,
    required: ['n', 'at'],
    properties: { n: { type: 'integer', minimum: 1 }, at: { type: 'string' } },
  });
}

type Added = EventDraft<typeof ADDED, { n: number; at: string }>;
type Add = { n: number; apply?: 'refuse' };
class TooMuchError extends Error {}

const NOW = new Date('2030-01-01T00:00:00.000Z');
/** A sum that refuses to pass 10, and whose evolve refuses an `n` of 7 (to show `then` applies what it checks). */
const sum = {
  initialState: 0,
  evolve: (s: number, e: Added) => {
    if (e.data.n === 7) throw new Error('seven does not apply');
    return s + e.data.n;
  },
  decide: (c: Add, s: number, now: Date): Added[] => {
    if (s + c.n > 10) throw new TooMuchError(`${s} + ${c.n} is more than 10`);
    return c.n === 0 ? [] : [{ type: ADDED, data: { n: c.n, at: now.toISOString() } }];
  },
};
const added = (n: number, at = NOW): Added => ({ type: ADDED, data: { n, at: at.toISOString() } });
const { given, after, givenState } = deciderSpec(sum, { now: NOW });

describe('deciderSpec', () => {
  it('folds the given events, or the events of the given commands decided at now', () => {
    expect(given(added(2), added(3)).state).toBe(5);
    expect(after({ n: 2 }, { n: 3 }).state).toBe(5);
    expect(givenState(4).state).toBe(4);
    expect(() => given(added(7))).toThrow(/seven/);
  });

  it('passes `then` for exactly the decided events, at now or at the time given', () => {
    given(added(2))
      .when({ n: 3 })
      .then([added(3)]);
    const later = new Date('2030-01-02T00:00:00.000Z');
    given()
      .when({ n: 1 }, later)
      .then([added(1, later)]);
    given().when({ n: 0 }).then([]);
    expect(() =>
      given()
        .when({ n: 3 })
        .then([added(4)]),
    ).toThrow();
    expect(() => given().when({ n: 3 }).then([])).toThrow();
  });

  it('fails `then` for an event its schema refuses or that does not apply', () => {
    expect(() =>
      given()
        .when({ n: -1 })
        .then([added(-1)]),
    ).toThrow(/spec_added/);
    expect(() =>
      given()
        .when({ n: 7 })
        .then([added(7)]),
    ).toThrow(/seven/);
  });

  it('passes `thenThrows` only for the error class and message', () => {
    given(added(9)).when({ n: 2 }).thenThrows(TooMuchError);
    given(added(9))
      .when({ n: 2 })
      .thenThrows(TooMuchError, /9 \+ 2/);
    const refused = given(added(9)).when({ n: 2 }).thenThrows(Error, 'more than 10');
    expect(refused).toBeInstanceOf(TooMuchError);
    expect(() => given(added(9)).when({ n: 2 }).thenThrows(TypeError)).toThrow();
    expect(() => given(added(9)).when({ n: 2 }).thenThrows(TooMuchError, /less/)).toThrow();
    expect(() => given().when({ n: 2 }).thenThrows(TooMuchError)).toThrow(
      /Expected TooMuchError, but the command was decided/,
    );
  });

  it('exposes the decided events and the state after them', () => {
    const when = given(added(1)).when({ n: 2 });
    expect(when.events).toEqual([added(2)]);
    expect(when.state).toBe(3);
    expect(() => given(added(9)).when({ n: 2 }).events).toThrow(TooMuchError);
  });
});
