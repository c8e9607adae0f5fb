import type { Transaction } from 'kysely';
import { contextFilter, type OrmuzEvent, type ToolCallEventDraft } from '@ormuz/contracts';
import { streamName, type Projection } from '@ormuz/event-log';
import { POLICY_SCHEMA } from '../persistence/migrations.js';

interface CallStatusDB {
  call_status: {
    tenant: string;
    call_id: string;
    tool: string;
    agent_id: string;
    correlation_id: string;
    payload_sha256: string;
    status: string;
    approval_id: string | null;
    last_seq: number;
    requested_at: Date;
    updated_at: Date;
  };
}

/** The status column is the suffix of the event type: `ormuz.toolcall.staged.v1` gives `staged`. */
function statusOf(type: string): string {
  return type.split('.')[2] ?? type;
}

/** Builds `policy.call_status`: one row per call, its latest status. */
export function callStatusProjection(namespace: string): Projection<CallStatusDB> {
  return {
    name: 'policy_call_status',
    schema: POLICY_SCHEMA,
    stream: streamName(namespace, 'calls'),
    filterSubject: contextFilter(namespace, 'calls'),
    async apply(trx: Transaction<CallStatusDB>, event: OrmuzEvent, seq: number) {
      const e = event as unknown as ToolCallEventDraft & OrmuzEvent;
      const t = trx.withSchema(POLICY_SCHEMA);
      const time = new Date(event.time);
      if (e.type === 'ormuz.toolcall.requested.v1') {
        await t
          .insertInto('call_status')
          .values({
            tenant: event.tenant,
            call_id: e.data.call_id,
            tool: e.data.tool,
            agent_id: e.data.agent_id,
            correlation_id: event.correlationid,
            payload_sha256: e.data.payload_sha256,
            status: 'requested',
            approval_id: null,
            last_seq: seq,
            requested_at: time,
            updated_at: time,
          })
          .onConflict((oc) => oc.columns(['tenant', 'call_id']).doNothing())
          .execute();
        return;
      }
      const approvalId = e.type === 'ormuz.toolcall.staged.v1' ? e.data.approval_id : undefined;
      await t
        .updateTable('call_status')
        .set({ status: statusOf(e.type), last_seq: seq, updated_at: time, ...(approvalId ? { approval_id: approvalId } : {}) })
        .where('tenant', '=', event.tenant)
        .where('call_id', '=', event.subject)
        .where('last_seq', '<', seq)
        .execute();
    },
    async reset(trx) {
      await trx.withSchema(POLICY_SCHEMA).deleteFrom('call_status').execute();
    },
  };
}
