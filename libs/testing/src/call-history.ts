/**
 * Puts many finished calls on the calls stream at once, as raw messages (no decider, no expected sequence): a history
 * for replays and their benchmark to read back. Each call is five messages, requested → authorized → dispatched →
 * started → succeeded, with times one `stepMs` apart from `start`, so time bounds select a known part of it.
 */
import { randomUUID } from 'node:crypto';
import type { JetStreamClient } from '@nats-io/jetstream';
import { aggregateSubject, canonicalPayload, envelope, ToolCallEventType, type OrmuzEvent } from '@ormuz/contracts';

export interface CallHistory {
  readonly tenant: string;
  readonly calls: number;
  /** Call i is made by `agents[i % agents.length]` on `devices[i % devices.length]`. */
  readonly agents: readonly string[];
  readonly devices: readonly string[];
  /** Time of the first event. */
  readonly start: Date;
  readonly stepMs?: number;
  /** The call ids are `call_<prefix><i>`. Default a random prefix. */
  readonly prefix?: string;
  /** Publishes in flight at once. Default 1024. */
  readonly window?: number;
}

/** Events per seeded call. */
export const EVENTS_PER_SEEDED_CALL = 5;

/** The events of call `i`, in order. */
export function historyCallEvents(h: CallHistory, prefix: string, i: number): OrmuzEvent[] {
  const callId = `call_${prefix}${i}`;
  const device = h.devices[i % h.devices.length]!;
  const step = h.stepMs ?? 1;
  const { payload, sha256 } = canonicalPayload({ i });
  const requestId = `req_${prefix}${i}`;
  const drafts = [
    {
      type: ToolCallEventType.Requested,
      data: {
        call_id: callId,
        tool: 'device.screen_observe',
        contract_version: '1',
        payload,
        payload_sha256: sha256,
        origin: { kind: 'operation', operation_id: `op_${prefix}${i}` },
        agent_id: h.agents[i % h.agents.length]!,
        target: { device_id: device },
      },
    },
    {
      type: ToolCallEventType.Authorized,
      data: { call_id: callId, verdict: { level: 'low', reasons: ['a read'] }, approval_id: null },
    },
    {
      type: ToolCallEventType.Dispatched,
      data: {
        call_id: callId,
        request_id: requestId,
        executor: { kind: 'device', device_id: device },
        payload_sha256: sha256,
        deadline: new Date(h.start.getTime() + 3_600_000).toISOString(),
      },
    },
    {
      type: ToolCallEventType.Started,
      data: { call_id: callId, request_id: requestId, executor_id: device, boot_id: 'boot-1' },
    },
    { type: ToolCallEventType.Succeeded, data: { call_id: callId, request_id: requestId, result: { ok: i } } },
  ] as const;
  return drafts.map((draft, k) =>
    envelope(draft as never, {
      tenant: h.tenant,
      subject: callId,
      source: '/ormuz/policy',
      correlationid: callId,
      causationid: callId,
      time: new Date(h.start.getTime() + (i * EVENTS_PER_SEEDED_CALL + k) * step),
    }),
  );
}

/** Publishes the history; returns the call ids. Call i's events follow each other on the stream. */
export async function seedCallHistory(js: JetStreamClient, namespace: string, h: CallHistory): Promise<string[]> {
  const prefix = h.prefix ?? randomUUID().replaceAll('-', '').slice(0, 8);
  const window = h.window ?? 1024;
  const encoder = new TextEncoder();
  const inFlight = new Set<Promise<unknown>>();
  const ids: string[] = [];
  for (let i = 0; i < h.calls; i++) {
    const events = historyCallEvents(h, prefix, i);
    const subject = aggregateSubject(namespace, 'calls', h.tenant, events[0]!.subject);
    ids.push(events[0]!.subject);
    // One call's events in order: each publish waits for the one before, calls run side by side.
    const call = (async () => {
      for (const event of events) await js.publish(subject, encoder.encode(JSON.stringify(event)), { msgID: event.id });
    })();
    inFlight.add(call);
    void call.finally(() => inFlight.delete(call));
    if (inFlight.size >= window) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  return ids;
}
