/**
 * What the archive tests put on the log: calls (a requested event with a payload, then a succeeded event with a
 * result) and conversation events, appended straight to the streams with the times the tests need, and the archive
 * rows a tenant has.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import {
  aggregateSubject,
  canonicalPayload,
  ConversationEventType,
  envelope,
  type CallOriginV1,
  type ContextName,
} from '@ormuz/contracts';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { streamName, type EventStore } from '@ormuz/event-log';
import type { TestDatabase } from '@ormuz/testing';
import { deriveCallId } from '@ormuz/tool-call';
import { AUDIT_SCHEMA, AUDITED_CONTEXTS } from '../src/index.js';
import type { AuditDB } from '../src/persistence/audit.tables.js';

export const DAY_MS = 86_400_000;

/** The secret text a call's payload and result carry, to look for in the archive after an erasure. */
export const payloadSecret = (tenant: string, n: number) => `payload-secret-${tenant}-${n}`;
export const resultSecret = (tenant: string, n: number) => `result-secret-${tenant}-${n}`;

const meta = (tenant: string, subject: string, source: string, time: Date) => ({
  source,
  tenant,
  subject,
  correlationid: `corr-${subject}`,
  causationid: randomUUID(),
  time,
});

/** Appends call `n` of `tenant` (requested, then succeeded) recorded at `time`; returns its call id. */
export async function appendCall(store: EventStore, ns: string, tenant: string, n: number, time: Date) {
  const origin: CallOriginV1 = { kind: 'operation', operation_id: `op-${n}` };
  const callId = deriveCallId(tenant, origin);
  const { payload, sha256 } = canonicalPayload({ note: payloadSecret(tenant, n) });
  const subject = aggregateSubject(ns, 'calls', tenant, callId);
  const requested = envelope(
    {
      type: 'ormuz.toolcall.requested.v1',
      data: {
        call_id: callId,
        tool: 'device.open_app',
        contract_version: '1',
        payload,
        payload_sha256: sha256,
        origin,
        agent_id: 'agent-1',
        target: { device_id: 'phone-1' },
      },
    },
    meta(tenant, callId, '/ormuz/policy', time),
  );
  const { version } = await store.append(subject, [requested], 0);
  const succeeded = envelope(
    {
      type: 'ormuz.toolcall.succeeded.v1',
      data: { call_id: callId, request_id: `req-${n}`, result: { text: resultSecret(tenant, n) } },
    },
    meta(tenant, callId, '/ormuz/device-bridge', time),
  );
  await store.append(subject, [succeeded], version);
  return callId;
}

/** Appends one conversation event of `tenant` (a conversation of its own). */
export async function appendConversationEvent(store: EventStore, ns: string, tenant: string, n: number) {
  const conv = `conv-${n}`;
  const event = envelope(
    { type: ConversationEventType.Resumed, data: { reason: `resumed ${n}` } },
    meta(tenant, conv, '/ormuz/model-loop', new Date()),
  );
  await store.append(aggregateSubject(ns, 'conversations' satisfies ContextName, tenant, conv), [event], 0);
}

/** A tenant's archived rows in chain order. */
export const chainRows = (db: Kysely<AuditDB>, tenant: string) =>
  db
    .withSchema(AUDIT_SCHEMA)
    .selectFrom('events')
    .selectAll()
    .where('tenant', '=', tenant)
    .orderBy('chain_pos')
    .execute();

/** Ends a test's connections and removes what it made: the namespace's streams and the test database. */
export async function teardown(opts: {
  nc?: NatsConnection;
  ns: string;
  db?: Kysely<AuditDB>;
  database?: TestDatabase;
}): Promise<void> {
  await opts.db?.destroy();
  if (opts.nc) {
    const jsm = await jetstreamManager(opts.nc);
    for (const context of AUDITED_CONTEXTS) await jsm.streams.delete(streamName(opts.ns, context)).catch(() => false);
    await opts.nc.close();
  }
  await opts.database?.drop();
}
