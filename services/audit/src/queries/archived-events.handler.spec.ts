import { AUDIT_EVENTS_MAX_REPLY_BYTES, type AuditEventsRequestV1 } from '@ormuz/contracts';
import type { AuditConfig } from '../config.js';
import { InvalidAuditQueryError } from '../domain/errors.js';
import type { ArchivedEventRow, AuditRepository, EventsFilter } from '../persistence/audit.repository.js';
import { ArchivedEventsHandler, ArchivedEventsQuery, toCloudEvent } from './archived-events.handler.js';

const row = (seq: number, data: unknown = { n: seq }): ArchivedEventRow => ({
  stream: 'ORMUZ_CALLS',
  seq,
  id: `evt-${seq}`,
  type: 'ormuz.toolcall.requested.v1',
  tenant: 'acme',
  subject: 'call_1',
  time: new Date('2025-01-02T03:04:05.678Z'),
  source: '/ormuz/policy',
  correlation_id: 'conv-1',
  causation_id: 'cmd-1',
  schema_version: 1,
  data,
});

/** A repository over `rows` that records the filter it was asked for. */
function handlerOver(rows: ArchivedEventRow[]) {
  const asked: EventsFilter[] = [];
  const repo = {
    async listEvents(f: EventsFilter) {
      asked.push(f);
      return rows.filter((r) => r.seq >= f.fromSeq).slice(0, f.limit);
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

  it('refuses a call filter on the conversations stream with the fix', async () => {
    const { run } = handlerOver([]);
    await expect(run({ tenant: 'acme', context: 'conversations', call_id: 'call_1' })).rejects.toThrow(
      InvalidAuditQueryError,
    );
  });

  it('gives back the CloudEvent with its constant attributes and exact time', () => {
    expect(toCloudEvent(row(5))).toEqual({
      specversion: '1.0',
      id: 'evt-5',
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
