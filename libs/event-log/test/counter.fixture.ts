// A tiny aggregate used to exercise the log without depending on any real domain.
import { hasSchema, OrmuzError, registerSchema, type EventDraft } from '@ormuz/contracts';
import type { Decider } from '../src/index.js';

export const INCREMENTED = 'ormuz.test.incremented.v1';
if (!hasSchema(INCREMENTED)) {
  registerSchema(INCREMENTED, {
    type: 'object',
    additionalProperties: false,
    required: ['by', 'total'],
    properties: { by: { type: 'integer', minimum: 1 }, total: { type: 'integer' } },
  });
}

/** Another event type, which the counter does not read (a foreign event on a counter's subject). */
export const NOTED = 'ormuz.test.noted.v1';
if (!hasSchema(NOTED)) {
  registerSchema(NOTED, {
    type: 'object',
    additionalProperties: false,
    required: ['note'],
    properties: { note: { type: 'string' } },
  });
}

export type Incremented = EventDraft<typeof INCREMENTED, { by: number; total: number }>;
export const isIncremented = (event: EventDraft): event is Incremented => event.type === INCREMENTED;
export interface CounterState {
  total: number;
  count: number;
}
/** `times` (default 1): increments decided at once, so appended as one message of that many events. */
export type CounterCommand = { type: 'Increment'; by: number; limit?: number; times?: number };

export class LimitReachedError extends OrmuzError {
  readonly code = 'limit_reached';
}

export const counter: Decider<CounterState, CounterCommand, Incremented> = {
  initialState: { total: 0, count: 0 },
  stateVersion: 1,
  evolve: (s, e) => ({ total: e.data.total, count: s.count + 1 }),
  decide: (c, s) => {
    const times = c.times ?? 1;
    if (c.limit !== undefined && s.total + c.by * times > c.limit) {
      throw new LimitReachedError(`limit ${c.limit} reached`);
    }
    return Array.from({ length: times }, (_, i) => ({
      type: INCREMENTED,
      data: { by: c.by, total: s.total + c.by * (i + 1) },
    }));
  },
};
