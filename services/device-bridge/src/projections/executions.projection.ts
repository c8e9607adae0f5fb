import { sql, type Insertable, type Kysely, type RawBuilder, type Transaction } from 'kysely';
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

/** One event of a committed batch, with the trace its message was appended in (when it was). */
export interface CommittedEvent {
  readonly event: Enveloped<ToolCallEventDraft>;
  readonly seq: number;
  readonly traceparent?: string;
}

/** What a committed batch did to the executions table, for the work that follows the commit (never inside it). */
export interface CommittedExecutions {
  /** The batch's events, in stream order. */
  readonly events: readonly CommittedEvent[];
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

/** A call's row as the batch leaves it: a new row (its request is in the batch), or the columns that change. */
type Merged = RowChange & { tenant: string; call_id: string; last_seq: number; insert?: Insertable<ExecutionRow> };

/** The columns every statement returns: the row as committed; its payload only when it is left ready. */
const RETURNED = sql.raw(`x.tenant, x.call_id, x.device_id, x.tool, x.payload_sha256, x.status, x.verdict, x.request_id,
  x.deadline, x.boot_id, x.last_seq, x.authorized_at, case when x.status = 'ready' then x.payload else '' end as payload`);

/** Merges the events of each call in stream order: what the batch leaves in each row. */
function mergeEvents(items: readonly { event: Enveloped<ToolCallEventDraft>; seq: number }[]): Merged[] {
  const merged = new Map<string, Merged>();
  for (const { event, seq } of items) {
    const effect = effectOf(event, seq);
    if (!effect) continue;
    const key = `${event.tenant}/${event.subject}`;
    if ('insert' in effect) {
      merged.set(key, {
        tenant: event.tenant,
        call_id: event.subject,
        status: 'requested',
        last_seq: seq,
        insert: effect.insert,
      });
      continue;
    }
    merged.set(key, {
      ...merged.get(key),
      ...effect.change,
      tenant: event.tenant,
      call_id: event.subject,
      last_seq: seq,
    });
  }
  return [...merged.values()];
}

/**
 * The statement that writes a batch: the calls whose request is in the batch inserted as the batch leaves them, the
 * others updated, every row written returned. With `moved` (the checkpoint's move), the move is part of the statement
 * and gates every write, and the first column, `moved`, says whether it happened (one row at least).
 */
function writeStatement(rows: readonly Merged[], moved?: RawBuilder<unknown>): RawBuilder<WrittenRow> {
  const inserts = rows.filter((m) => m.insert);
  const updates = rows.filter((m) => !m.insert);
  const column = <K extends keyof Merged>(of: readonly Merged[], k: K) => of.map((r) => r[k] ?? null);
  const first = <K extends keyof Insertable<ExecutionRow>>(k: K) => inserts.map((r) => r.insert![k] ?? null);
  const table = sql.table(`${DEVICE_BRIDGE_SCHEMA}.executions`);
  const gate = moved ? sql`and exists (select from moved)` : sql``;
  const ctes = moved ? [sql`moved as (${moved})`] : [];
  if (inserts.length > 0) {
    // A row that exists already (only a redelivery could leave one) takes the batch's changes like an update.
    ctes.push(sql`inserted as (
      insert into ${table} as x (tenant, call_id, device_id, tool, payload, payload_sha256, status, verdict, request_id,
        deadline, boot_id, authorized_at, last_seq)
      select * from unnest(
        ${column(inserts, 'tenant')}::text[], ${column(inserts, 'call_id')}::text[], ${first('device_id')}::text[],
        ${first('tool')}::text[], ${first('payload')}::text[], ${first('payload_sha256')}::text[],
        ${column(inserts, 'status')}::text[], ${column(inserts, 'verdict')}::jsonb[], ${column(inserts, 'request_id')}::text[],
        ${column(inserts, 'deadline')}::timestamptz[], ${column(inserts, 'boot_id')}::text[],
        ${column(inserts, 'authorized_at')}::timestamptz[], ${column(inserts, 'last_seq')}::bigint[])
      where true ${gate}
      on conflict (tenant, call_id) do update set
        status = excluded.status,
        verdict = coalesce(excluded.verdict, x.verdict),
        authorized_at = coalesce(excluded.authorized_at, x.authorized_at),
        request_id = coalesce(excluded.request_id, x.request_id),
        deadline = coalesce(excluded.deadline, x.deadline),
        boot_id = coalesce(excluded.boot_id, x.boot_id),
        last_seq = excluded.last_seq
      where x.last_seq <= excluded.last_seq
      returning ${RETURNED})`);
  }
  if (updates.length > 0) {
    // `last_seq <=` keeps a row that has already seen these events (a redelivered batch) as it is. Calls without a row
    // (not for a device) match nothing.
    ctes.push(sql`updated as (
      update ${table} as x set
        status = c.status,
        verdict = coalesce(c.verdict, x.verdict),
        authorized_at = coalesce(c.authorized_at, x.authorized_at),
        request_id = coalesce(c.request_id, x.request_id),
        deadline = coalesce(c.deadline, x.deadline),
        boot_id = coalesce(c.boot_id, x.boot_id),
        last_seq = c.last_seq
      from unnest(
        ${column(updates, 'tenant')}::text[], ${column(updates, 'call_id')}::text[], ${column(updates, 'status')}::text[],
        ${column(updates, 'verdict')}::jsonb[], ${column(updates, 'authorized_at')}::timestamptz[],
        ${column(updates, 'request_id')}::text[], ${column(updates, 'deadline')}::timestamptz[],
        ${column(updates, 'boot_id')}::text[], ${column(updates, 'last_seq')}::bigint[]
      ) as c(tenant, call_id, status, verdict, authorized_at, request_id, deadline, boot_id, last_seq)
      where x.tenant = c.tenant and x.call_id = c.call_id and x.last_seq <= c.last_seq ${gate}
      returning ${RETURNED})`);
  }
  const parts = [
    inserts.length > 0 ? sql`select * from inserted` : undefined,
    updates.length > 0 ? sql`select * from updated` : undefined,
  ];
  const written = sql.join(
    parts.filter((q) => q !== undefined),
    sql` union all `,
  );
  if (!moved) return sql<WrittenRow>`with ${sql.join(ctes, sql`, `)} ${written}`;
  const rowsWritten = rows.length > 0 ? sql`left join (${written}) w on true` : sql``;
  return sql<WrittenRow>`with ${sql.join(ctes, sql`, `)}
    select m.moved, ${rows.length > 0 ? sql`w.*` : sql`null as call_id`}
    from (select count(*)::int as moved from moved) m ${rowsWritten}`;
}

/** A row a batch wrote, as the statement returns it (`moved` only from the statement that moves the checkpoint). */
type WrittenRow = ExecutionRow & { moved?: number };

/** Tells the listener, after the commit, what the batch did: which rows it left ready, which calls it sealed. */
function tell(
  items: readonly CommittedEvent[],
  written: readonly WrittenRow[],
  after: AfterCommit,
  onCommitted?: CommittedListener,
): void {
  if (!onCommitted) return;
  const rows = written.filter((r) => r.call_id !== null);
  const batch = {
    events: items,
    ready: rows.filter((r) => r.status === 'ready'),
    sealed: sealedAfterAuthorization(items, rows),
  };
  after.defer(() => onCommitted(batch));
}

/**
 * Applies events in stream order inside the runner's transaction, with one statement whatever their number (see
 * {@link writeStatement}). A busy bridge sees five events per call, and a statement per event (then one per kind)
 * made the projection, and so every dispatch, which waits for `ready`, fall behind.
 */
async function applyEvents(
  trx: Transaction<DeviceBridgeDB>,
  items: readonly { event: Enveloped<ToolCallEventDraft>; seq: number }[],
  after: AfterCommit,
  onCommitted?: CommittedListener,
): Promise<void> {
  const rows = mergeEvents(items);
  const written = rows.length > 0 ? (await writeStatement(rows).execute(trx)).rows : [];
  tell(items, written, after, onCommitted);
}

/**
 * Writes a batch and moves the checkpoint in one statement, which commits on its own: one round trip per batch. The
 * statement returns the rows it wrote, so the listener hears after the commit which rows became ready and which calls
 * were sealed after their authorization: the batch's own state, without another query.
 */
async function writeBatch(
  db: Kysely<DeviceBridgeDB>,
  items: readonly { event: Enveloped<ToolCallEventDraft>; seq: number }[],
  moved: RawBuilder<unknown>,
  after: AfterCommit,
  onCommitted?: CommittedListener,
): Promise<boolean> {
  const { rows } = await writeStatement(mergeEvents(items), moved).execute(db);
  if (rows[0]?.moved !== 1) return false;
  tell(items, rows, after, onCommitted);
  return true;
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
    tables: [{ name: 'executions' }],
    stream: streamName(namespace, 'calls'),
    filterSubject: contextFilter(namespace, 'calls'),
    accepts: isToolCallEvent,
    apply: (trx, event, seq, after) => applyEvents(trx, [{ event, seq }], after, onCommitted),
    applyBatch: (trx, items, after) => applyEvents(trx, items, after, onCommitted),
    writeBatch: (db, items, moved, after) => writeBatch(db, items, moved, after, onCommitted),
    async reset(trx) {
      await trx.withSchema(DEVICE_BRIDGE_SCHEMA).deleteFrom('executions').execute();
    },
  };
}
