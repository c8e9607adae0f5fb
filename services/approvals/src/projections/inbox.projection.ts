import type { Transaction } from 'kysely';
import { contextFilter, isToolCallEvent, type ToolCallEventDraft } from '@ormuz/contracts';
import { streamName, type AfterCommit, type Enveloped, type Projection } from '@ormuz/event-log';
import { inSpan, ORMUZ_APPROVAL_ID, ORMUZ_RISK_LEVEL, toolCallAttributes } from '@ormuz/tracing';
import { APPROVALS_SCHEMA } from '../persistence/migrations.js';
import type { ApprovalsDB } from '../persistence/inbox.repository.js';

/**
 * Builds the owner's inbox from the calls stream: staged calls and how they were decided. `changed` is told of every
 * approval a committed transaction staged or closed (the console's live streams listen).
 */
export function inboxProjection(
  namespace: string,
  changed: (tenant: string, approvalId: string) => void = () => undefined,
): Projection<ApprovalsDB, ToolCallEventDraft> {
  return {
    name: 'approvals_inbox',
    schema: APPROVALS_SCHEMA,
    tables: [{ name: 'inbox' }, { name: 'requests' }],
    stream: streamName(namespace, 'calls'),
    filterSubject: contextFilter(namespace, 'calls'),
    accepts: isToolCallEvent,
    async apply(trx: Transaction<ApprovalsDB>, event: Enveloped<ToolCallEventDraft>, _seq, after: AfterCommit) {
      const t = trx.withSchema(APPROVALS_SCHEMA);
      const tell = (rows: readonly { approval_id: string }[]) => {
        for (const { approval_id } of rows) after.defer(() => changed(event.tenant, approval_id));
      };
      const decided = async (status: string, decidedBy: string | null) =>
        tell(
          await t
            .updateTable('inbox')
            .set({ status, decided_by: decidedBy, decided_at: new Date(event.time) })
            .where('tenant', '=', event.tenant)
            .where('approval_id', '=', 'approval_id' in event.data ? (event.data.approval_id as string) : '')
            .returning('approval_id')
            .execute(),
        );
      switch (event.type) {
        case 'ormuz.toolcall.requested.v1':
          await t
            .insertInto('requests')
            .values({
              tenant: event.tenant,
              call_id: event.data.call_id,
              tool: event.data.tool,
              agent_id: event.data.agent_id,
              device_id: event.data.target?.device_id ?? null,
              payload: event.data.payload,
            })
            .onConflict((oc) => oc.columns(['tenant', 'call_id']).doNothing())
            .execute();
          return;
        case 'ormuz.toolcall.staged.v1': {
          const req = await t
            .selectFrom('requests')
            .select(['tool', 'agent_id', 'device_id', 'payload'])
            .where('tenant', '=', event.tenant)
            .where('call_id', '=', event.data.call_id)
            .executeTakeFirst();
          // The call waits in its owner's inbox from here: a span in the call's trace (its message carried it).
          const attributes = {
            ...toolCallAttributes({ tenant: event.tenant, tool: req?.tool ?? 'unknown', callId: event.data.call_id }),
            [ORMUZ_APPROVAL_ID]: event.data.approval_id,
            [ORMUZ_RISK_LEVEL]: event.data.verdict.level,
          };
          await inSpan('@ormuz/approvals', `approval_staged ${req?.tool ?? 'unknown'}`, { attributes }, () =>
            t
              .insertInto('inbox')
              .values({
                tenant: event.tenant,
                approval_id: event.data.approval_id,
                call_id: event.data.call_id,
                tool: req?.tool ?? 'unknown',
                agent_id: req?.agent_id ?? null,
                device_id: req?.device_id ?? null,
                payload: req?.payload ?? null,
                risk_reasons: JSON.stringify(event.data.verdict.reasons),
                summary: event.data.summary,
                payload_sha256: event.data.payload_sha256,
                contract_version: event.data.contract_version,
                status: 'pending',
                expires_at: new Date(event.data.expires_at),
                staged_at: new Date(event.time),
                decided_by: null,
                decided_at: null,
              })
              .onConflict((oc) => oc.columns(['tenant', 'approval_id']).doNothing())
              .returning('approval_id')
              .execute()
              .then(tell),
          );
          return;
        }
        case 'ormuz.toolcall.approved.v1':
          await decided('approved', event.data.decided_by);
          return;
        case 'ormuz.toolcall.denied.v1':
          await decided('denied', event.data.decided_by);
          return;
        case 'ormuz.toolcall.expired.v1':
          await decided('expired', null);
          return;
        case 'ormuz.toolcall.sealed.v1':
          // A staged call sealed before anyone decided: nothing is left to approve.
          tell(
            await t
              .updateTable('inbox')
              .set({ status: 'sealed', decided_by: event.data.sealed_by, decided_at: new Date(event.time) })
              .where('tenant', '=', event.tenant)
              .where('call_id', '=', event.data.call_id)
              .where('status', '=', 'pending')
              .returning('approval_id')
              .execute(),
          );
          return;
        default:
          return;
      }
    },
    async reset(trx) {
      await trx.withSchema(APPROVALS_SCHEMA).deleteFrom('inbox').execute();
      await trx.withSchema(APPROVALS_SCHEMA).deleteFrom('requests').execute();
    },
  };
}
