import fc from 'fast-check';
import { FlowWindow, reportEndsRequest } from './flow-window.js';

describe('FlowWindow', () => {
  it('sends up to its capacity and holds the rest back, in order', () => {
    const window = new FlowWindow<string>(2);
    expect(window.offer('a', 'submit a')).toBe('submit a');
    expect(window.offer('b', 'submit b')).toBe('submit b');
    expect(window.offer('c', 'submit c')).toBeUndefined();
    expect(window.offer('d', 'submit d')).toBeUndefined();
    expect(window.room).toBe(0);
    expect(window.backlog).toBe(2);

    expect(window.release('a')).toEqual(['submit c']);
    expect(window.release('b')).toEqual(['submit d']);
    expect(window.release('c')).toEqual([]);
    expect(window.room).toBe(1);
  });

  it('remembers the requests the device has finished with, until one is offered again', () => {
    const window = new FlowWindow<string>(1);
    window.offer('a', 'submit a');
    expect(window.finishedWith('a')).toBe(false);
    window.release('a');
    expect(window.finishedWith('a')).toBe(true);
    expect(window.finishedWith('b')).toBe(false);
    window.offer('a', 'submit a again');
    expect(window.finishedWith('a')).toBe(false);
  });

  it('lets a later frame about a request in flight through without a new slot', () => {
    const window = new FlowWindow<string>(1);
    expect(window.offer('a', 'submit a')).toBe('submit a');
    expect(window.offer('a', 'cancel a')).toBe('cancel a');
    expect(window.inFlight).toBe(1);
  });

  it('sends every held-back frame of a request together once it gets its slot', () => {
    const window = new FlowWindow<string>(1);
    window.offer('a', 'submit a');
    window.offer('b', 'status_query b');
    window.offer('b', 'seal b');
    expect(window.release('a')).toEqual(['status_query b', 'seal b']);
    expect(window.inFlight).toBe(1);
  });

  it('keeps a newer request behind older held-back ones even when a slot is free', () => {
    const window = new FlowWindow<string>(1);
    window.offer('a', 'submit a');
    window.offer('b', 'submit b');
    // No room reported while something waits, so a dispatcher never jumps the queue.
    expect(window.room).toBe(0);
    expect(window.offer('c', 'submit c')).toBeUndefined();
    expect(window.release('a')).toEqual(['submit b']);
  });

  it('ignores the release of a request it does not hold', () => {
    const window = new FlowWindow<string>(1);
    window.offer('a', 'submit a');
    window.offer('b', 'submit b');
    expect(window.release('zzz')).toEqual([]);
    expect(window.backlog).toBe(1);
  });

  it('refuses a capacity below one', () => {
    expect(() => new FlowWindow(0)).toThrow(/at least 1/);
    expect(() => new FlowWindow(1.5)).toThrow(/at least 1/);
  });

  it('never holds more than its capacity and sends every frame exactly once, whatever the order', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.array(
          fc.oneof(
            fc.record({ offer: fc.integer({ min: 0, max: 9 }) }),
            fc.record({ release: fc.integer({ min: 0, max: 9 }) }),
          ),
          {
            maxLength: 60,
          },
        ),
        (capacity, steps) => {
          const window = new FlowWindow<number>(capacity);
          const sent: number[] = [];
          const inFlight = new Set<string>();
          let offered = 0;
          for (const step of steps) {
            if ('offer' in step) {
              const frame = offered++;
              const now = window.offer(`r${step.offer}`, frame);
              if (now !== undefined) {
                sent.push(now);
                inFlight.add(`r${step.offer}`);
              }
            } else {
              const id = `r${step.release}`;
              for (const frame of window.release(id)) sent.push(frame);
              inFlight.delete(id);
            }
            expect(window.inFlight).toBeLessThanOrEqual(capacity);
          }
          // Nothing is sent twice, and what was not sent is still waiting.
          expect(new Set(sent).size).toBe(sent.length);
          expect(sent.length + window.backlog).toBe(offered);
        },
      ),
    );
  });
});

describe('reportEndsRequest', () => {
  it('keeps the slot while the device may still act, frees it once it said its last word', () => {
    for (const state of ['received', 'claimed', 'started'] as const) expect(reportEndsRequest(state)).toBe(false);
    for (const state of ['interrupted', 'succeeded', 'failed', 'refused', 'rejected', 'sealed', 'unknown'] as const)
      expect(reportEndsRequest(state)).toBe(true);
  });
});
