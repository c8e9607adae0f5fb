/**
 * Replay without follow stops once caught up, also when the filter matches nothing in a stream that holds other
 * tenants' events, or when the start point is past the last event.
 */
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { aggregateSubject, envelope, tenantFilter } from '@ormuz/contracts';
import { INCREMENTED, randomNamespace, testEnv } from '@ormuz/testing';
import { connectNats, ensureStreams, EventStore, replay, streamName, type ReplayOptions } from '../src/index.js';

describe('replay', () => {
  let nc: NatsConnection;
  let js: JetStreamClient;
  let jsm: JetStreamManager;
  const ns = randomNamespace();
  const stream = streamName(ns, 'calls');
  const sequences: number[] = [];

  beforeAll(async () => {
    nc = await connectNats({ url: testEnv().natsUrl, name: 'replay-test' });
    js = jetstream(nc);
    jsm = await jetstreamManager(nc);
    await ensureStreams(jsm, ns, ['calls']);
    const store = new EventStore(js, jsm);
    for (const total of [1, 2, 3]) {
      const event = envelope(
        { type: INCREMENTED, data: { by: 1, total } },
        { source: '/test', tenant: 'acme', subject: 'c1', correlationid: 'c', causationid: 'c', time: new Date() },
      );
      sequences.push((await store.record(aggregateSubject(ns, 'calls', 'acme', 'c1'), event)).seq);
    }
  });
  afterAll(async () => {
    await jsm.streams.delete(stream);
    await nc.close();
  });

  async function all(opts: Omit<ReplayOptions, 'stream'>) {
    const out = [];
    for await (const item of replay(js, { stream, ...opts })) out.push(item.seq);
    return out;
  }

  it("reads a tenant's events and stops when caught up", async () => {
    expect(await all({ filterSubject: tenantFilter(ns, 'calls', 'acme') })).toEqual(sequences);
  });

  it('stops at once when no event of the stream matches the filter', async () => {
    expect(await all({ filterSubject: tenantFilter(ns, 'calls', 'globex') })).toEqual([]);
  });

  it('stops at once when the start point is past the last matching event', async () => {
    expect(
      await all({ filterSubject: tenantFilter(ns, 'calls', 'acme'), fromSequence: sequences.at(-1)! + 1 }),
    ).toEqual([]);
    expect(await all({ filterSubject: tenantFilter(ns, 'calls', 'acme'), fromSequence: sequences[1]! })).toEqual(
      sequences.slice(1),
    );
  });
});
