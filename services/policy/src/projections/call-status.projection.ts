import type { Transaction } from 'kysely';
import { contextFilter, isToolCallEvent, type ToolCallEventDraft } from '@ormuz/contracts';
import { streamName, type Enveloped, type Projection } from '@ormuz/event-log';
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
export function callStatusProjection(namespace: string): Projection<CallStatusDB, ToolCallEventDraft> {
  return {
    name: 'policy_call_status',
    schema: POLICY_SCHEMA,
    stream: streamName(namespace, 'calls'),
    filterSubject: contextFilter(namespace, 'calls'),
    accepts: isToolCallEvent,
    async apply(trx: Transaction<CallStatusDB>, event: Enveloped<ToolCallEventDraft>, seq: number) {
      const t = trx.withSchema(POLICY_SCHEMA);
      const time = new Date(event.time);
      if (event.type === 'ormuz.toolcall.requested.v1') {
        await t
          .insertInto('call_status')
          .values({
            tenant: event.tenant,
            call_id: event.data.call_id,
            tool: event.data.tool,
            agent_id: event.data.agent_id,
            correlation_id: event.correlationid,
            payload_sha256: event.data.payload_sha256,
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
      const approvalId = event.type === 'ormuz.toolcall.staged.v1' ? event.data.approval_id : undefined;
      await t
        .updateTable('call_status')
        .set({ status: statusOf(event.type), last_seq: seq, updated_at: time, ...(approvalId ? { approval_id: approvalId } : {}) })
        .where('tenant', '=', event.tenant)
        .where('call_id', '=', event.subject)
        // `<=`: a decision's events share their message's sequence (the request and the gate's decision arrive
        // together); the checkpoint, moved in the same transaction, keeps a message from being applied twice.
        .where('last_seq', '<=', seq)
        .execute();
    },
    async reset(trx) {
      await trx.withSchema(POLICY_SCHEMA).deleteFrom('call_status').execute();
    },
  };
}
