import { checkpointsPastStreams, type Checkpoint } from './store-check.js';

const at = (consumer: string, stream: string, seq: number): Checkpoint => ({ schema: 'policy', consumer, stream, seq });

describe("the demo's NATS store against its database", () => {
  it('agrees when no consumer has read past the end of its stream', () => {
    const ends = new Map([
      ['DEMO_CALLS', 18],
      ['DEMO_CONVERSATIONS', 7],
    ]);
    expect(checkpointsPastStreams([at('a', 'DEMO_CALLS', 18), at('b', 'DEMO_CONVERSATIONS', 3)], ends)).toEqual([]);
  });

  it('names each consumer ahead of its stream, a missing stream holding nothing', () => {
    const ends = new Map([['DEMO_CALLS', 4]]);
    expect(checkpointsPastStreams([at('a', 'DEMO_CALLS', 18), at('b', 'DEMO_DEVICES', 2)], ends)).toEqual([
      { checkpoint: at('a', 'DEMO_CALLS', 18), last: 4 },
      { checkpoint: at('b', 'DEMO_DEVICES', 2), last: 0 },
    ]);
  });
});
