import { AUDIT_EVENTS_MAX_REPLY_BYTES, type AuditEventsRequestV1 } from '@ormuz/contracts';
import type { AuditConfig } from '../config.js';
import { InvalidAuditQueryError } from '../domain/errors.js';
import type { ArchivedEventRow, AuditRepository, EventsFilter } from '../persistence/audit.repository.js';
import { ArchivedEventsHandler, ArchivedEventsQuery, toCloudEvent } from './archived-events.handler.js';

const row = (seq: number, data: unknown = { n: seq }, idx = 0): ArchivedEventRow => ({
  stream: 'ORMUZ_CALLS',
  seq,
  idx,
  id: `evt-${seq}-${idx}`,
  type: 'ormuz.toolcall.requested.v1',
  tenant: 'acme',
  subject: 'call_1',
  time: new Date('2025-01-02T03:04:05.678Z'),
  source: '/ormuz/policy',
  correlation_id: 'conv-1',
  causation_id: 'cmd-1',
  schema_version: 1,
  data,
  chain_pos: seq,
  data_sha256: '',
  erasable_field: null,
  erasable_sha256: null,
  prev_hash: '',
  row_hash: '',
  erased_at: null,
  agent_id: null,
  device_id: null,
});

/** A repository over `rows` that records the filter it was asked for. */
function handlerOver(rows: ArchivedEventRow[]) {
  const asked: EventsFilter[] = [];
  const repo = {
    async listEvents(f: EventsFilter) {
      asked.push(f);
      return rows.filter((r) => r.seq >= f.fromSeq && r.seq <= (f.toSeq ?? Infinity)).slice(0, f.limit);
    },
  } as unknown as AuditRepository;
  const handler = new ArchivedEventsHandler(repo, { namespace: 'ormuz' } as AuditConfig);
  return { asked, run: (request: AuditEventsRequestV1) => handler.execute(new ArchivedEventsQuery(request)) };
}

describe('archived events query', () => {
  it('reads the calls stream of the tenant from sequence 1 by default', async () => {
    const { asked, run } = handlerOver([row(1), row(2)]);
    const reply = await run({ tenant: 'acme' });
    expect(asked).toEqual([{ tenant: 'acme', stream: 'ORMUZ_CALLS', subject: undefined, fromSeq: 1, limit: 101 }]);
    expect(reply).toEqual({
      events: [1, 2].map((seq) => ({ stream: 'ORMUZ_CALLS', seq, event: toCloudEvent(row(seq)) })),
      partial: false,
      next_from_seq: null,
    });
  });

  it('says a page is partial and where the next one starts when the limit is reached', async () => {
    const { run } = handlerOver([row(4), row(7), row(9)]);
    const reply = await run({ tenant: 'acme', call_id: 'call_1', limit: 2 });
    expect(reply.events.map((e) => e.seq)).toEqual([4, 7]);
    expect(reply).toMatchObject({ partial: true, next_from_seq: 9 });
  });

  it('stops before the reply outgrows its byte bound, but always returns one event', async () => {
    const big = 'x'.repeat(AUDIT_EVENTS_MAX_REPLY_BYTES / 2);
    const { run } = handlerOver([row(1, { big }), row(2, { big }), row(3, { big: `${big}${big}` })]);
    const first = await run({ tenant: 'acme' });
    expect(first.events.map((e) => e.seq)).toEqual([1]);
    expect(first).toMatchObject({ partial: true, next_from_seq: 2 });
    const oversized = await run({ tenant: 'acme', from_seq: 3 });
    expect(oversized.events.map((e) => e.seq)).toEqual([3]);
    expect(oversized).toMatchObject({ partial: false, next_from_seq: null });
  });

  it('ends a page between messages: the events of one message share the cursor and are never split', async () => {
    // Message 4 holds a request and its decision.
    const { run } = handlerOver([row(2), row(4, { n: 4 }, 0), row(4, { n: 5 }, 1), row(6)]);
    const first = await run({ tenant: 'acme', limit: 2 });
    expect(first.events.map((e) => e.seq)).toEqual([2]);
    expect(first).toMatchObject({ partial: true, next_from_seq: 4 });
    const second = await run({ tenant: 'acme', from_seq: 4, limit: 2 });
    expect(second.events.map((e) => e.event.data)).toEqual([{ n: 4 }, { n: 5 }]);
    expect(second).toMatchObject({ partial: true, next_from_seq: 6 });
    const all = await run({ tenant: 'acme', limit: 4 });
    expect(all.events.map((e) => e.seq)).toEqual([2, 4, 4, 6]);
    expect(all).toMatchObject({ partial: false, next_from_seq: null });
  });

  it('returns a message larger than the limit whole, and says what follows it', async () => {
    const rows = [row(4, { n: 4 }, 0), row(4, { n: 5 }, 1), row(4, { n: 6 }, 2), row(7)];
    const { run } = handlerOver(rows);
    const first = await run({ tenant: 'acme', limit: 1 });
    expect(first.events.map((e) => e.event.data)).toEqual([{ n: 4 }, { n: 5 }, { n: 6 }]);
    expect(first).toMatchObject({ partial: true, next_from_seq: 7 });
    const last = await handlerOver(rows.slice(0, 3)).run({ tenant: 'acme', limit: 2 });
    expect(last.events).toHaveLength(3);
    expect(last).toMatchObject({ partial: false, next_from_seq: null });
  });

  it('stops before a message that would outgrow the byte bound, keeping its events together', async () => {
    const big = 'x'.repeat(AUDIT_EVENTS_MAX_REPLY_BYTES / 3);
    const { run } = handlerOver([row(1, { big }), row(2, { big }, 0), row(2, { big }, 1)]);
    const first = await run({ tenant: 'acme' });
    expect(first.events.map((e) => e.seq)).toEqual([1]);
    expect(first).toMatchObject({ partial: true, next_from_seq: 2 });
  });

  it('refuses a call filter on the conversations stream with the fix', async () => {
    const { run } = handlerOver([]);
    await expect(run({ tenant: 'acme', context: 'conversations', call_id: 'call_1' })).rejects.toThrow(
      InvalidAuditQueryError,
    );
  });

  it('gives back the CloudEvent with its constant attributes and exact time', () => {
    expect(toCloudEvent(row(5))).toEqual({
      specversion: '1.0',
      id: 'evt-5-0',
      source: '/ormuz/policy',
      type: 'ormuz.toolcall.requested.v1',
      subject: 'call_1',
      time: '2025-01-02T03:04:05.678Z',
      datacontenttype: 'application/json',
      tenant: 'acme',
      correlationid: 'conv-1',
      causationid: 'cmd-1',
      schemaversion: 1,
      data: { n: 5 },
    });
  });
});
