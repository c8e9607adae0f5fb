import type { Transaction } from 'kysely';
import { contextFilter, type OrmuzEvent, type ToolCallEventDraft } from '@ormuz/contracts';
import { streamName, type Projection } from '@ormuz/event-log';
import { DEVICE_BRIDGE_SCHEMA } from '../persistence/migrations.js';
import type { DeviceBridgeDB, ExecutionStatus } from '../persistence/executions.repository.js';

/** Builds the executions table from the calls stream; only calls that target a device get a row. */
export function executionsProjection(namespace: string): Projection<DeviceBridgeDB> {
  return {
    name: 'device_bridge_executions',
    schema: DEVICE_BRIDGE_SCHEMA,
    stream: streamName(namespace, 'calls'),
    filterSubject: contextFilter(namespace, 'calls'),
    async apply(trx: Transaction<DeviceBridgeDB>, event: OrmuzEvent, seq: number) {
      const e = event as unknown as ToolCallEventDraft;
      const t = trx.withSchema(DEVICE_BRIDGE_SCHEMA);
      const set = (fields: { status: ExecutionStatus } & Record<string, unknown>) =>
        t
          .updateTable('executions')
          .set({ ...fields, last_seq: seq })
          .where('tenant', '=', event.tenant)
          .where('call_id', '=', event.subject)
          .where('last_seq', '<', seq)
          .execute();
      switch (e.type) {
        case 'ormuz.toolcall.requested.v1':
          if (!e.data.target) return;
          await t
            .insertInto('executions')
            .values({
              tenant: event.tenant,
              call_id: e.data.call_id,
              device_id: e.data.target.device_id,
              tool: e.data.tool,
              payload: e.data.payload,
              payload_sha256: e.data.payload_sha256,
              status: 'requested',
              verdict: null,
              request_id: null,
              deadline: null,
              boot_id: null,
              authorized_at: null,
              last_seq: seq,
            })
            .onConflict((oc) => oc.columns(['tenant', 'call_id']).doNothing())
            .execute();
          return;
        case 'ormuz.toolcall.authorized.v1':
          await set({ status: 'ready', verdict: JSON.stringify(e.data.verdict), authorized_at: new Date(event.time) });
          return;
        case 'ormuz.toolcall.dispatched.v1':
          await set({ status: 'dispatched', request_id: e.data.request_id, deadline: new Date(e.data.deadline) });
          return;
        case 'ormuz.toolcall.started.v1':
          await set({ status: 'started', boot_id: e.data.boot_id });
          return;
        case 'ormuz.toolcall.outcome_unknown.v1':
          await set({ status: 'unknown' });
          return;
        case 'ormuz.toolcall.succeeded.v1':
        case 'ormuz.toolcall.failed.v1':
        case 'ormuz.toolcall.sealed.v1':
        case 'ormuz.toolcall.refused.v1':
        case 'ormuz.toolcall.denied.v1':
        case 'ormuz.toolcall.expired.v1':
          await set({ status: 'finished' });
          return;
        default:
          return;
      }
    },
    async reset(trx) {
      await trx.withSchema(DEVICE_BRIDGE_SCHEMA).deleteFrom('executions').execute();
    },
  };
}
