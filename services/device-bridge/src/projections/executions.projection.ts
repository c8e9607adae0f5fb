import { sql, type Insertable, type Transaction } from 'kysely';
import { contextFilter, isToolCallEvent, type ToolCallEventDraft } from '@ormuz/contracts';
import { streamName, type AfterCommit, type Enveloped, type Projection } from '@ormuz/event-log';
import { DEVICE_BRIDGE_SCHEMA } from '../persistence/migrations.js';
import type { DeviceBridgeDB, ExecutionRow, ExecutionStatus } from '../persistence/executions.repository.js';

/** The columns an event after the request sets on its call's row (absent: left as they are). */
interface RowChange {
  status: ExecutionStatus;
  verdict?: string;
  authorized_at?: string;
  request_id?: string;
  deadline?: string;
  boot_id?: string;
}

/** What one event does to the executions table: a new row (a request for a device), a change, or nothing. */
function effectOf(
  e: Enveloped<ToolCallEventDraft>,
  seq: number,
): { insert: Insertable<ExecutionRow> } | { change: RowChange } | undefined {
  switch (e.type) {
    case 'ormuz.toolcall.requested.v1':
      if (!e.data.target) return undefined;
      return {
        insert: {
          tenant: e.tenant,
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
        },
      };
    case 'ormuz.toolcall.authorized.v1':
      return { change: { status: 'ready', verdict: JSON.stringify(e.data.verdict), authorized_at: e.time } };
    case 'ormuz.toolcall.dispatched.v1':
      return { change: { status: 'dispatched', request_id: e.data.request_id, deadline: e.data.deadline } };
    case 'ormuz.toolcall.started.v1':
      return { change: { status: 'started', boot_id: e.data.boot_id } };
    case 'ormuz.toolcall.outcome_unknown.v1':
      return { change: { status: 'unknown' } };
    case 'ormuz.toolcall.succeeded.v1':
    case 'ormuz.toolcall.failed.v1':
    case 'ormuz.toolcall.sealed.v1':
    case 'ormuz.toolcall.refused.v1':
    case 'ormuz.toolcall.denied.v1':
    case 'ormuz.toolcall.expired.v1':
      return { change: { status: 'finished' } };
    default:
      return undefined;
  }
}

/** A call sealed on the log while its device may hold its submit. */
export interface SealedWhileDispatched {
  readonly tenant: string;
  readonly device_id: string;
  readonly request_id: string;
}

/** What a committed batch did to the executions table, for the work that follows the commit (never inside it). */
export interface CommittedExecutions {
  /** The batch's events, in stream order. */
  readonly events: readonly { readonly event: Enveloped<ToolCallEventDraft>; readonly seq: number }[];
  /** The rows the batch left ready to dispatch, every column as committed. */
  readonly ready: readonly ExecutionRow[];
  /**
   * Calls the batch sealed after their authorization: the device may hold the submit (the dispatch may be ahead of
   * the read model), so it is told (`seal` frame); a device that claims first is refused anyway, since the seal is on
   * the log.
   */
  readonly sealed: readonly SealedWhileDispatched[];
}

/** Hears of every committed batch, after its commit. */
export type CommittedListener = (batch: CommittedExecutions) => void;

/** A seal older than this when projected (a rebuild, a long outage) is not worth telling the device about. */
const SEAL_NEWS_MS = 5 * 60_000;

/**
 * Applies events in stream order with two statements whatever their number: one insert of the requests, one update
 * of every call the other events changed. A busy bridge sees five events per call, and a statement per event made
 * the projection (and so every dispatch, which waits for `ready`) fall seconds behind. With a listener, the update
 * returns the rows it changed, and the listener hears after the commit which rows became ready and which calls were
 * sealed after their authorization: the batch's own state, without another statement.
 */
async function applyEvents(
  trx: Transaction<DeviceBridgeDB>,
  items: readonly { event: Enveloped<ToolCallEventDraft>; seq: number }[],
  after: AfterCommit,
  onCommitted?: CommittedListener,
): Promise<void> {
  const inserts: Insertable<ExecutionRow>[] = [];
  // One change per call: the events' columns merged in order, with the status and sequence of the last one.
  const changes = new Map<string, RowChange & { tenant: string; call_id: string; last_seq: number }>();
  for (const { event, seq } of items) {
    const effect = effectOf(event, seq);
    if (!effect) continue;
    if ('insert' in effect) {
      inserts.push(effect.insert);
      continue;
    }
    const key = `${event.tenant}/${event.subject}`;
    changes.set(key, {
      ...changes.get(key),
      ...effect.change,
      tenant: event.tenant,
      call_id: event.subject,
      last_seq: seq,
    });
  }
  const t = trx.withSchema(DEVICE_BRIDGE_SCHEMA);
  if (inserts.length > 0) {
    await t
      .insertInto('executions')
      .values(inserts)
      .onConflict((oc) => oc.columns(['tenant', 'call_id']).doNothing())
      .execute();
  }
  let changed: ExecutionRow[] = [];
  if (changes.size > 0) {
    const rows = [...changes.values()];
    const column = <K extends keyof (typeof rows)[number]>(k: K) => rows.map((r) => r[k] ?? null);
    // `last_seq <` keeps a row that has already seen these events (a redelivered batch) as it is. Calls without a row
    // (not for a device) match nothing. The payload is returned only for a row left ready (the dispatcher sends it).
    const returning = onCommitted
      ? sql`returning x.tenant, x.call_id, x.device_id, x.tool, x.payload_sha256, x.status, x.verdict, x.request_id,
          x.deadline, x.boot_id, x.last_seq, x.authorized_at, case when x.status = 'ready' then x.payload else '' end as payload`
      : sql``;
    const updated = await sql<ExecutionRow>`
      update ${sql.table(`${DEVICE_BRIDGE_SCHEMA}.executions`)} as x set
        status = c.status,
        verdict = coalesce(c.verdict, x.verdict),
        authorized_at = coalesce(c.authorized_at, x.authorized_at),
        request_id = coalesce(c.request_id, x.request_id),
        deadline = coalesce(c.deadline, x.deadline),
        boot_id = coalesce(c.boot_id, x.boot_id),
        last_seq = c.last_seq
      from unnest(
        ${column('tenant')}::text[], ${column('call_id')}::text[], ${column('status')}::text[], ${column('verdict')}::jsonb[],
        ${column('authorized_at')}::timestamptz[], ${column('request_id')}::text[], ${column('deadline')}::timestamptz[],
        ${column('boot_id')}::text[], ${column('last_seq')}::bigint[]
      ) as c(tenant, call_id, status, verdict, authorized_at, request_id, deadline, boot_id, last_seq)
      where x.tenant = c.tenant and x.call_id = c.call_id and x.last_seq < c.last_seq
      ${returning}
    `.execute(trx);
    changed = updated.rows;
  }
  if (onCommitted) {
    const batch = {
      events: items,
      ready: changed.filter((r) => r.status === 'ready'),
      sealed: sealedAfterAuthorization(items, changed),
    };
    after.defer(() => onCommitted(batch));
  }
}

/** The calls these events seal that had been authorized (the device may hold the submit), from the rows they changed. */
function sealedAfterAuthorization(
  items: readonly { event: Enveloped<ToolCallEventDraft> }[],
  changed: readonly ExecutionRow[],
): SealedWhileDispatched[] {
  const recent = Date.now() - SEAL_NEWS_MS;
  const sealed = new Set(
    items
      .map((i) => i.event)
      .filter((e) => e.type === 'ormuz.toolcall.sealed.v1' && Date.parse(e.time) >= recent)
      .map((e) => `${e.tenant}/${e.subject}`),
  );
  if (sealed.size === 0) return [];
  return changed
    .filter((r) => r.authorized_at !== null && sealed.has(`${r.tenant}/${r.call_id}`))
    .map((r) => ({ tenant: r.tenant, device_id: r.device_id, request_id: r.request_id ?? r.call_id }));
}

/**
 * Builds the executions table from the calls stream; only calls that target a device get a row. `onCommitted` hears
 * of every committed batch after its commit (the bridge's reactor: dispatches and seal frames); the projection itself
 * has no side effect.
 */
export function executionsProjection(
  namespace: string,
  onCommitted?: CommittedListener,
): Projection<DeviceBridgeDB, ToolCallEventDraft> {
  return {
    name: 'device_bridge_executions',
    schema: DEVICE_BRIDGE_SCHEMA,
    stream: streamName(namespace, 'calls'),
    filterSubject: contextFilter(namespace, 'calls'),
    accepts: isToolCallEvent,
    apply: (trx, event, seq, after) => applyEvents(trx, [{ event, seq }], after, onCommitted),
    applyBatch: (trx, items, after) => applyEvents(trx, items, after, onCommitted),
    async reset(trx) {
      await trx.withSchema(DEVICE_BRIDGE_SCHEMA).deleteFrom('executions').execute();
    },
  };
}
