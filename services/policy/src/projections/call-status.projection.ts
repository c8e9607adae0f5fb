import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import { contextFilter, isToolCallEvent, type ToolCallEventDraft } from '@ormuz/contracts';
import { streamName, type AppliedEvent, type Enveloped, type Projection } from '@ormuz/event-log';
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

/** A call's row as the events of a batch leave it. */
interface Merged {
  tenant: string;
  call_id: string;
  /** The row its request inserts (the request is in the batch), with the batch's later changes applied. */
  insert?: CallStatusDB['call_status'];
  /** What the batch's events after the request change (absent: only the request is in the batch). */
  change?: { status: string; approval_id: string | null; last_seq: number; updated_at: string };
}

/**
 * Folds a batch's events per call, in stream order, into what `apply` one event at a time would leave: the request
 * inserts the row (`insert`), every later event updates it (`change`: the last status, sequence and time, the
 * latest approval id). A call's request is its first event, so a change before it in the batch is forgotten as the
 * row the request inserts replaces it.
 */
function mergeEvents(items: readonly AppliedEvent<ToolCallEventDraft>[]): Merged[] {
  const merged = new Map<string, Merged>();
  for (const { event, seq } of items) {
    if (event.type === 'ormuz.toolcall.requested.v1') {
      const key = `${event.tenant}/${event.data.call_id}`;
      if (merged.get(key)?.insert) continue; // a row inserted already: the insert does nothing
      merged.set(key, {
        tenant: event.tenant,
        call_id: event.data.call_id,
        insert: {
          tenant: event.tenant,
          call_id: event.data.call_id,
          tool: event.data.tool,
          agent_id: event.data.agent_id,
          correlation_id: event.correlationid,
          payload_sha256: event.data.payload_sha256,
          status: 'requested',
          approval_id: null,
          last_seq: seq,
          requested_at: new Date(event.time),
          updated_at: new Date(event.time),
        },
      });
      continue;
    }
    const key = `${event.tenant}/${event.subject}`;
    const row = merged.get(key) ?? { tenant: event.tenant, call_id: event.subject };
    const approvalId = event.type === 'ormuz.toolcall.staged.v1' ? event.data.approval_id : undefined;
    row.change = {
      status: statusOf(event.type),
      approval_id: approvalId ?? row.change?.approval_id ?? null,
      last_seq: seq,
      updated_at: event.time,
    };
    merged.set(key, row);
  }
  return [...merged.values()];
}

/**
 * One statement for a batch: the checkpoint's move (`moved`), on which every write is conditioned; the rows of the
 * calls requested in the batch inserted as the batch leaves them (`do nothing` on an existing row, as `apply`); every
 * call the batch changes after its request updated from the row as it stood before the statement (`last_seq <=` as
 * in `apply`). The two never meet on one row: a row the insert creates did not exist for the update, and a row that
 * existed is left alone by the insert, so the update gives it what `apply` would, one event after the other.
 */
function writeStatement(rows: readonly Merged[], moved: RawBuilder<unknown>): RawBuilder<{ moved: number }> {
  const table = sql.table(`${POLICY_SCHEMA}.call_status`);
  const inserts = rows.flatMap((r) => {
    if (!r.insert) return [];
    const c = r.change;
    return [c ? { ...r.insert, ...c, updated_at: new Date(c.updated_at) } : r.insert];
  });
  const updates = rows.flatMap((r) => (r.change ? [{ tenant: r.tenant, call_id: r.call_id, ...r.change }] : []));
  const ctes = [sql`moved as (${moved})`];
  if (inserts.length > 0) {
    const col = <K extends keyof CallStatusDB['call_status']>(k: K) => inserts.map((r) => r[k]);
    ctes.push(sql`inserted as (
      insert into ${table} (tenant, call_id, tool, agent_id, correlation_id, payload_sha256, status, approval_id,
        last_seq, requested_at, updated_at)
      select * from unnest(${col('tenant')}::text[], ${col('call_id')}::text[], ${col('tool')}::text[],
        ${col('agent_id')}::text[], ${col('correlation_id')}::text[], ${col('payload_sha256')}::text[],
        ${col('status')}::text[], ${col('approval_id')}::text[], ${col('last_seq')}::bigint[],
        ${col('requested_at')}::timestamptz[], ${col('updated_at')}::timestamptz[])
      where exists (select from moved)
      on conflict (tenant, call_id) do nothing)`);
  }
  if (updates.length > 0) {
    const col = <K extends keyof (typeof updates)[number]>(k: K) => updates.map((r) => r[k]);
    ctes.push(sql`updated as (
      update ${table} as x set status = c.status, approval_id = coalesce(c.approval_id, x.approval_id),
        last_seq = c.last_seq, updated_at = c.updated_at
      from unnest(${col('tenant')}::text[], ${col('call_id')}::text[], ${col('status')}::text[],
        ${col('approval_id')}::text[], ${col('last_seq')}::bigint[], ${col('updated_at')}::timestamptz[])
        as c(tenant, call_id, status, approval_id, last_seq, updated_at)
      where x.tenant = c.tenant and x.call_id = c.call_id and x.last_seq <= c.last_seq and exists (select from moved))`);
  }
  return sql<{ moved: number }>`with ${sql.join(ctes, sql`, `)} select count(*)::int as moved from moved`;
}

/** Builds `policy.call_status`: one row per call, its latest status. */
export function callStatusProjection(namespace: string): Projection<CallStatusDB, ToolCallEventDraft> {
  return {
    name: 'policy_call_status',
    schema: POLICY_SCHEMA,
    tables: [{ name: 'call_status' }],
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
        .set({
          status: statusOf(event.type),
          last_seq: seq,
          updated_at: time,
          ...(approvalId ? { approval_id: approvalId } : {}),
        })
        .where('tenant', '=', event.tenant)
        .where('call_id', '=', event.subject)
        // `<=`: a decision's events share their message's sequence (the request and the gate's decision arrive
        // together); the checkpoint, moved in the same transaction, keeps a message from being applied twice.
        .where('last_seq', '<=', seq)
        .execute();
    },
    /**
     * A batch in one statement with the checkpoint's move: one round trip instead of a transaction's five or more
     * (begin, move, an insert or update per event, commit), which every submit's message cost the service's process.
     */
    async writeBatch(db: Kysely<CallStatusDB>, items, moved) {
      const { rows } = await writeStatement(mergeEvents(items), moved).execute(db);
      return rows[0]?.moved === 1;
    },
    async reset(trx) {
      await trx.withSchema(POLICY_SCHEMA).deleteFrom('call_status').execute();
    },
  };
}
