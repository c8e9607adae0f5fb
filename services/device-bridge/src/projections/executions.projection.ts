import { sql, type Insertable, type Transaction } from 'kysely';
import { contextFilter, isToolCallEvent, type OrmuzEvent, type ToolCallEventDraft } from '@ormuz/contracts';
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

/**
 * Applies events in stream order with two statements whatever their number: one insert of the requests, one update
 * of every call the other events changed. A busy bridge sees five events per call, and a statement per event made
 * the projection (and so every dispatch, which waits for `ready`) fall seconds behind.
 */
async function applyEvents(
  trx: Transaction<DeviceBridgeDB>,
  items: readonly { event: Enveloped<ToolCallEventDraft>; seq: number }[],
  after: AfterCommit,
  onSealed?: SealedListener,
): Promise<void> {
  if (onSealed) await tellSealed(trx, items, after, onSealed);
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
    changes.set(key, { ...changes.get(key), ...effect.change, tenant: event.tenant, call_id: event.subject, last_seq: seq });
  }
  const t = trx.withSchema(DEVICE_BRIDGE_SCHEMA);
  if (inserts.length > 0) {
    await t
      .insertInto('executions')
      .values(inserts)
      .onConflict((oc) => oc.columns(['tenant', 'call_id']).doNothing())
      .execute();
  }
  if (changes.size === 0) return;
  const rows = [...changes.values()];
  const column = <K extends keyof (typeof rows)[number]>(k: K) => rows.map((r) => r[k] ?? null);
  // `last_seq <=` keeps a row that has already seen these events (a redelivered batch) as it is. Calls without a row
  // (not for a device) match nothing.
  await sql`
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
    where x.tenant = c.tenant and x.call_id = c.call_id and x.last_seq <= c.last_seq
  `.execute(trx);
}

/** A call sealed on the log while its device may hold its submit. */
export interface SealedWhileDispatched {
  readonly tenant: string;
  readonly device_id: string;
  readonly request_id: string;
}

export type SealedListener = (calls: readonly SealedWhileDispatched[]) => void;

/** A seal older than this when projected (a rebuild, a long outage) is not worth telling the device about. */
const SEAL_NEWS_MS = 5 * 60_000;

/**
 * Finds the calls these events seal that were waiting for their start (the device may hold the submit: the read
 * model can show a call as ready a moment after its dispatch), before the update marks them finished. The device is
 * told once the transaction has committed; a device that claims first is refused anyway, since the seal is on the log.
 */
async function tellSealed(
  trx: Transaction<DeviceBridgeDB>,
  items: readonly { event: OrmuzEvent }[],
  after: AfterCommit,
  onSealed: SealedListener,
): Promise<void> {
  const recent = Date.now() - SEAL_NEWS_MS;
  const sealed = items
    .map((i) => i.event)
    .filter((e) => e.type === 'ormuz.toolcall.sealed.v1' && Date.parse(e.time) >= recent);
  if (sealed.length === 0) return;
  const rows = await trx
    .withSchema(DEVICE_BRIDGE_SCHEMA)
    .selectFrom('executions')
    .select(['tenant', 'device_id', 'request_id', 'call_id'])
    .where('status', 'in', ['ready', 'dispatched'])
    .where((eb) => eb.or(sealed.map((e) => eb.and([eb('tenant', '=', e.tenant), eb('call_id', '=', e.subject)]))))
    .execute();
  if (rows.length === 0) return;
  const calls = rows.map((r) => ({ tenant: r.tenant, device_id: r.device_id, request_id: r.request_id ?? r.call_id }));
  after.defer(() => onSealed(calls));
}

/**
 * Builds the executions table from the calls stream; only calls that target a device get a row. `onSealed` hears of
 * calls sealed while dispatched, so the device can be told (`seal` frame).
 */
export function executionsProjection(
  namespace: string,
  onSealed?: SealedListener,
): Projection<DeviceBridgeDB, ToolCallEventDraft> {
  return {
    name: 'device_bridge_executions',
    schema: DEVICE_BRIDGE_SCHEMA,
    stream: streamName(namespace, 'calls'),
    filterSubject: contextFilter(namespace, 'calls'),
    accepts: isToolCallEvent,
    apply: (trx, event, seq, after) => applyEvents(trx, [{ event, seq }], after, onSealed),
    applyBatch: (trx, items, after) => applyEvents(trx, items, after, onSealed),
    async reset(trx) {
      await trx.withSchema(DEVICE_BRIDGE_SCHEMA).deleteFrom('executions').execute();
    },
  };
}
