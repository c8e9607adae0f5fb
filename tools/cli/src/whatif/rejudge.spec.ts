import { loadShippedCatalog, type Grant } from '@ormuz/catalog';
import { canonicalPayload, ToolCallEventType as T, type ArchivedEventV1 } from '@ormuz/contracts';
import { PastRequests } from './past-requests.js';
import { rejudge, type Rules } from './rejudge.js';

const TENANT = 'acme';
const NOW = new Date('2026-05-01T12:00:00Z');
const TAP = { foreground_package: 'com.example.notes', ref: 'r7', target_text: 'Zorble' };
const MESSAGE = { recipient: 'Alice', message_body: 'Running late' };

/** The events policy records for one submit: the request and its decision, one message (one sequence). */
function submitted(seq: number, callId: string, tool: string, args: object, decision: { type: string; data: object }) {
  const payload = canonicalPayload(args);
  const event = (type: string, data: object): ArchivedEventV1 => ({
    stream: 'ns_calls',
    seq,
    event: {
      specversion: '1.0',
      id: `${callId}-${type}`,
      source: '/ormuz/policy',
      type,
      subject: callId,
      time: new Date(Date.UTC(2026, 4, 1, 10, seq)).toISOString(),
      datacontenttype: 'application/json',
      tenant: TENANT,
      correlationid: callId,
      causationid: callId,
      schemaversion: 1,
      data,
    } as ArchivedEventV1['event'],
  });
  return [
    event(T.Requested, {
      call_id: callId,
      tool,
      contract_version: '1',
      payload: payload.payload,
      payload_sha256: payload.sha256,
      origin: { kind: 'operation', operation_id: callId },
      agent_id: 'cli',
      target: { device_id: 'phone-1' },
    }),
    event(decision.type, { call_id: callId, ...decision.data }),
  ];
}

const authorized = { type: T.Authorized, data: { verdict: { level: 'low', reasons: ['ok'] }, approval_id: null } };
const staged = { type: T.Staged, data: { verdict: { level: 'high', reasons: ['sends'] } } };
const EVENTS = [
  ...submitted(1, 'call_tap', 'device.tap', TAP, authorized),
  ...submitted(2, 'call_msg', 'device.send_message', MESSAGE, staged),
  ...submitted(3, 'call_tap2', 'device.tap', { ...TAP, ref: 'r8' }, authorized),
];

const grant = (allow: string[], deny: string[] = []): Grant => ({ tenant: TENANT, agent_id: 'cli', allow, deny });
const rules = (over: Partial<Rules> = {}): Rules => ({
  catalog: loadShippedCatalog(),
  grantOf: () => grant(['device']),
  ...over,
});

function pastRequests(events: readonly ArchivedEventV1[], range = {}) {
  const past = new PastRequests(TENANT, range);
  // Two pages, cut between a request and its decision.
  past.add(events.slice(0, 3));
  past.add(events.slice(3));
  return past.requests();
}

describe('whatif: the gate run again over past requests', () => {
  it('changes nothing when the rules are the ones the calls were decided with', () => {
    expect(rejudge(pastRequests(EVENTS), rules(), NOW)).toEqual({ judged: 3, changed: [], counts: [] });
  });

  it('names the calls a candidate lexicon and grants would change, with counts per tool and reason', () => {
    const report = rejudge(
      pastRequests(EVENTS),
      rules({
        riskLexicon: { extraWords: [{ meaning: 'pay', language: 'en', words: ['zorble'] }] },
        grantOf: () => grant(['device'], ['device.send_message']),
      }),
      NOW,
    );
    expect(report.changed.map((c) => [c.call_id, c.from, c.to, c.reason])).toEqual([
      ['call_tap', 'authorized', 'staged', 'risk_high'],
      ['call_msg', 'staged', 'refused', 'not_offered'],
      ['call_tap2', 'authorized', 'staged', 'risk_high'],
    ]);
    expect(report.counts).toEqual([
      { tool: 'device.tap', from: 'authorized', to: 'staged', reason: 'risk_high', calls: 2 },
      { tool: 'device.send_message', from: 'staged', to: 'refused', reason: 'not_offered', calls: 1 },
    ]);
  });

  it('judges only the requests in the range, by sequence or time', () => {
    expect(pastRequests(EVENTS, { from: { seq: 2 }, to: { seq: 2 } }).map((r) => r.call_id)).toEqual(['call_msg']);
    const from = { time: new Date('2026-05-01T10:02:00Z') };
    expect(pastRequests(EVENTS, { from }).map((r) => r.call_id)).toEqual(['call_msg', 'call_tap2']);
  });

  it('never reads another tenant’s events, and has nothing to judge without events', () => {
    const foreign = EVENTS.map((e) => ({ ...e, event: { ...e.event, tenant: 'globex' } }));
    expect(rejudge(pastRequests(foreign), rules(), NOW)).toEqual({ judged: 0, changed: [], counts: [] });
  });
});
