import { liveTextFrame as frame } from '@ormuz/testing';
import { LiveText } from './live-text.js';

describe('LiveText', () => {
  it('yields the text in seq order, each piece once, holding a later frame until the gap before it fills', () => {
    const live = new LiveText();
    live.receive(frame(1, 'lo '));
    expect(live.ready()).toBeUndefined();
    live.receive(frame(0, 'Hel'));
    live.receive(frame(3, '!'));
    expect(live.ready()).toEqual({ turn: 0, restart: false, text: 'Hello ' });
    expect(live.ready()).toBeUndefined();
    live.receive(frame(2, 'you'));
    expect(live.ready()).toEqual({ turn: 0, restart: false, text: 'you!' });
    expect(live.shown).toBe('Hello you!');
  });

  it('drops a frame heard twice, before or after it was shown', () => {
    const live = new LiveText();
    live.receive(frame(0, 'Hi'));
    live.receive(frame(0, 'Hi'));
    expect(live.ready()?.text).toBe('Hi');
    live.receive(frame(0, 'Hi'));
    live.receive(frame(1, ' there'));
    live.receive(frame(1, ' there'));
    expect(live.ready()?.text).toBe(' there');
    expect(live.ready()).toBeUndefined();
    expect(live.shown).toBe('Hi there');
  });

  it('shows nothing past a frame that never comes, and settling the turn drops what waited behind it', () => {
    const live = new LiveText();
    live.receive(frame(0, 'The '));
    live.receive(frame(2, 'fox'));
    expect(live.ready()?.text).toBe('The ');
    expect(live.ready()).toBeUndefined();
    expect(live.settle(0)).toBe('The ');
    // The frame that was missing comes after all: its turn is settled, so it is not shown.
    live.receive(frame(1, 'quick '));
    expect(live.ready()).toBeUndefined();
    expect(live.turn).toBe(1);
  });

  it('keeps the next turn for when it is the one waited for, and ignores frames of a turn already recorded', () => {
    const live = new LiveText();
    live.receive(frame(0, 'Next turn', { turn: 1 }));
    expect(live.ready()).toBeUndefined();
    expect(live.settle(0)).toBe('');
    expect(live.ready()).toEqual({ turn: 1, restart: false, text: 'Next turn' });
    live.receive(frame(1, 'late', { turn: 0 }));
    expect(live.ready()).toBeUndefined();
  });

  it('starts the text over for a later take (a retried stream, the loop asking again) and drops the older one', () => {
    const live = new LiveText();
    live.receive(frame(0, 'Hello wo'));
    expect(live.ready()?.text).toBe('Hello wo');
    live.receive(frame(0, 'Hello', { try: 2 }));
    live.receive(frame(1, 'rld', { try: 1 }));
    expect(live.ready()).toEqual({ turn: 0, restart: true, text: 'Hello' });
    live.receive(frame(2, '??', { try: 1 }));
    live.receive(frame(0, 'Hi', { attempt: 2 }));
    expect(live.ready()).toEqual({ turn: 0, restart: true, text: 'Hi' });
    live.receive(frame(1, ' again', { try: 2 }));
    expect(live.ready()).toBeUndefined();
    expect(live.shown).toBe('Hi');
  });

  it("restarts without text when a later take's first frame has not come yet", () => {
    const live = new LiveText();
    live.receive(frame(0, 'Hel'));
    live.ready();
    live.receive(frame(1, 'lo', { try: 2 }));
    expect(live.ready()).toEqual({ turn: 0, restart: true, text: '' });
    expect(live.shown).toBe('');
    live.receive(frame(0, 'Hel', { try: 2 }));
    expect(live.ready()).toEqual({ turn: 0, restart: false, text: 'Hello' });
  });
});
